//! The deployment files cannot run here (no container engine), so these
//! tests hold them to the code: the same settings, ports, topics, commands
//! and files.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use engram::config::Config;
use yaml_rust2::{Yaml, YamlLoader};

fn read(path: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path))
        .unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn compose() -> Yaml {
    let mut docs = YamlLoader::load_from_str(&read("docker-compose.yml")).expect("valid YAML");
    assert_eq!(docs.len(), 1);
    docs.remove(0)
}

fn service<'a>(compose: &'a Yaml, name: &str) -> &'a Yaml {
    let service = &compose["services"][name];
    assert!(
        !service.is_badvalue(),
        "docker-compose.yml has no service {name}"
    );
    service
}

fn text(value: &Yaml) -> String {
    match value {
        Yaml::String(s) => s.clone(),
        Yaml::Integer(i) => i.to_string(),
        Yaml::Boolean(b) => b.to_string(),
        other => panic!("not a scalar: {other:?}"),
    }
}

/// A service's environment as (name, value) pairs (map form).
fn environment(service: &Yaml) -> Vec<(String, String)> {
    service["environment"]
        .as_hash()
        .map(|map| map.iter().map(|(k, v)| (text(k), text(v))).collect())
        .unwrap_or_default()
}

fn env_value(service: &Yaml, name: &str) -> String {
    environment(service)
        .into_iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v)
        .unwrap_or_else(|| panic!("{name} is not set"))
}

fn depends_on(service: &Yaml, on: &str) -> String {
    text(&service["depends_on"][on]["condition"])
}

fn strings(value: &Yaml) -> Vec<String> {
    value
        .as_vec()
        .map(|items| items.iter().map(text).collect())
        .unwrap_or_default()
}

fn known_env_vars() -> BTreeSet<String> {
    Config::keys().iter().map(|k| Config::env_var(k)).collect()
}

#[test]
fn compose_runs_kraft_kafka_and_scylla_from_official_images_with_health_checks() {
    let compose = compose();
    let kafka = service(&compose, "kafka");
    assert!(text(&kafka["image"]).starts_with("apache/kafka:"));
    assert!(
        env_value(kafka, "KAFKA_PROCESS_ROLES").contains("controller"),
        "KRaft"
    );
    assert!(
        compose["services"]
            .as_hash()
            .unwrap()
            .keys()
            .all(|name| !text(name).contains("zookeeper"))
    );
    let scylla = service(&compose, "scylla");
    assert!(text(&scylla["image"]).starts_with("scylladb/scylla:"));
    let command = strings(&scylla["command"]).join(" ");
    assert!(command.contains("--developer-mode 1"), "{command}");
    for name in ["kafka", "scylla", "engram"] {
        assert!(
            !service(&compose, name)["healthcheck"]["test"].is_badvalue(),
            "{name} has no health check"
        );
    }
}

#[test]
fn compose_starts_engram_after_topics_and_schema_exist() {
    let compose = compose();
    let init = service(&compose, "kafka-init");
    assert_eq!(depends_on(init, "kafka"), "service_healthy");
    let migrate = service(&compose, "engram-migrate");
    assert_eq!(depends_on(migrate, "scylla"), "service_healthy");
    assert_eq!(strings(&migrate["command"]), ["migrate"]);
    let engram = service(&compose, "engram");
    assert_eq!(
        depends_on(engram, "kafka-init"),
        "service_completed_successfully"
    );
    assert_eq!(
        depends_on(engram, "engram-migrate"),
        "service_completed_successfully"
    );
    assert_eq!(strings(&engram["command"]), ["run"]);
    // `--scale engram=3` needs no fixed name and no host port.
    assert!(engram["container_name"].is_badvalue());
    assert!(engram["ports"].is_badvalue());
    assert_eq!(text(&migrate["image"]), text(&engram["image"]), "one image");
    assert_eq!(text(&migrate["build"]["dockerfile"]), "deploy/Dockerfile");
}

#[test]
fn compose_commands_are_real_engram_subcommands() {
    let compose = compose();
    for name in ["engram", "engram-migrate"] {
        let command = strings(&service(&compose, name)["command"]);
        let status = Command::new(env!("CARGO_BIN_EXE_engram"))
            .args(&command)
            .arg("--help")
            .output()
            .unwrap();
        assert!(status.status.success(), "`engram {command:?}` of {name}");
    }
}

#[test]
fn compose_settings_are_engram_settings_and_point_at_the_services() {
    let compose = compose();
    let known = known_env_vars();
    for name in ["engram", "engram-migrate"] {
        let env = environment(service(&compose, name));
        assert!(!env.is_empty());
        for (var, value) in &env {
            assert!(known.contains(var), "{name} sets unknown {var}");
            // Each value must be one the config accepts.
            Config::load(None, vec![(var.clone(), value.clone())], vec![])
                .unwrap_or_else(|e| panic!("{var}={value}: {e}"));
        }
    }
    let engram = service(&compose, "engram");
    let kafka = service(&compose, "kafka");
    let brokers = env_value(engram, "ENGRAM_KAFKA_BROKERS");
    let (host, port) = brokers.split_once(':').unwrap();
    assert_eq!(host, "kafka");
    let advertised = env_value(kafka, "KAFKA_ADVERTISED_LISTENERS");
    assert!(
        advertised.contains(&format!("://kafka:{port}")),
        "{brokers} is not an advertised listener ({advertised})"
    );
    let nodes = env_value(engram, "ENGRAM_SCYLLA_NODES");
    assert_eq!(nodes, "scylla:9042", "ScyllaDB's CQL port");
}

#[test]
fn compose_creates_every_topic_engram_uses() {
    let compose = compose();
    let script = strings(&service(&compose, "kafka-init")["command"]).join("\n");
    let topics = engram::kafka::Topics::from_config(&Config::default().kafka).unwrap();
    for topic in topics.all() {
        assert!(
            script
                .split_whitespace()
                .any(|word| word.trim_end_matches(';') == topic),
            "kafka-init does not create {topic}"
        );
    }
    assert!(script.contains("--if-not-exists"), "re-running is harmless");
}

#[test]
fn dockerfile_builds_from_what_the_crate_needs_and_runs_unprivileged() {
    let dockerfile = read("deploy/Dockerfile");
    let stages: Vec<&str> = dockerfile
        .lines()
        .filter(|l| l.starts_with("FROM "))
        .collect();
    assert!(stages.len() >= 2, "multi-stage");
    assert!(
        stages.last().unwrap().contains("slim"),
        "small runtime image"
    );
    let user = dockerfile
        .lines()
        .rfind(|l| l.starts_with("USER "))
        .expect("a USER line");
    assert!(!user.contains("root") && user.trim() != "USER 0", "{user}");
    // Every directory the crate compiles files in from must be in the
    // build context of the build stage.
    let copied: Vec<&str> = dockerfile
        .lines()
        .filter_map(|l| l.strip_prefix("COPY "))
        .collect();
    let mut included = BTreeSet::from(["crates".to_owned()]);
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let sources = walk(&manifest.join("src"))
        .into_iter()
        .chain(walk(&manifest.join("crates")));
    for entry in sources {
        let source = std::fs::read_to_string(&entry).unwrap();
        for part in source.split("include_str!(\"").skip(1) {
            let relative = part.split('"').next().unwrap();
            let resolved = entry.parent().unwrap().join(relative);
            let resolved = resolved.canonicalize().unwrap();
            let root = Path::new(env!("CARGO_MANIFEST_DIR"))
                .canonicalize()
                .unwrap();
            let top = resolved
                .strip_prefix(&root)
                .unwrap()
                .components()
                .next()
                .unwrap();
            included.insert(top.as_os_str().to_string_lossy().into_owned());
        }
    }
    assert!(included.contains("schemas") && included.contains("rules"));
    for dir in included {
        assert!(
            copied.iter().any(|c| c.starts_with(&format!("{dir} "))),
            "the build stage does not COPY {dir}/"
        );
    }
    // Settings baked into the image are engram settings.
    let known = known_env_vars();
    for word in dockerfile.split_whitespace() {
        if let Some((name, _)) = word.split_once('=')
            && name.starts_with("ENGRAM_")
            && name != "ENGRAM_CONFIG"
        {
            assert!(known.contains(name), "Dockerfile sets unknown {name}");
        }
    }
    assert!(dockerfile.contains("COPY deploy/engram.toml /etc/engram/engram.toml"));
    assert!(dockerfile.contains("ENGRAM_CONFIG=/etc/engram/engram.toml"));
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files
}
