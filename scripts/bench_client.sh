#!/bin/sh
# Confluent's Python client (confluent-kafka from PyPI, pinned by version and
# wheel sha256) in a virtualenv under the cache, for `make bench-kafka`'s
# baseline: the same librdkafka consuming in batches as a platform's own
# consumer would. Best effort: where the pinned wheel does not fit this
# Python or platform, or PyPI is out of reach, the benchmark prints "not
# installed" for that row and goes on.
cache="$1"
venv="$cache/bench-venv"
if "$venv/bin/python" -c 'import confluent_kafka' 2>/dev/null; then
    exit 0
fi
requirements="$cache/bench-client.txt"
mkdir -p "$cache"
cat > "$requirements" <<'PINS'
confluent-kafka==2.16.1 --hash=sha256:24f613cc81a856b6fbb2d7d11044a9aa770044eecc1f83ff84618688b056be06
PINS
if python3 -m venv "$venv" \
    && "$venv/bin/pip" install --quiet --require-hashes --only-binary=:all: -r "$requirements"; then
    echo "installed confluent-kafka 2.16.1 in $venv" >&2
else
    echo "confluent-kafka not installed (the pinned wheel is for CPython 3.11 on x86_64 Linux); the Python row is skipped" >&2
fi
exit 0
