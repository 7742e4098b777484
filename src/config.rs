//! Configuration: defaults, then a TOML file, then `ENGRAM_*` environment
//! variables, then command-line flags, each overriding the one before.
//!
//! Every setting has a dotted key (`pipeline.batch_size`) and an environment
//! variable made from it (`ENGRAM_PIPELINE_BATCH_SIZE`). The set of keys is
//! derived from the defaults, so a variable for a key that does not exist is
//! never silently half-applied, and a file with an unknown key is an error.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;
use sha2::{Digest, Sha256};
use thiserror::Error;

use crate::clock::ClockMode;
use crate::detect::DetectConfig;
use crate::duration;
use crate::embed::EmbeddingConfig;
use crate::event::{Limits, WireFormat};
pub use crate::http::HttpConfig;
use crate::index::IndexConfig;
pub use crate::kafka::KafkaConfig;
use crate::plan::BudgetConfig;
use crate::rewrite::RewriteConfig;
use crate::salience::SalienceParams;
pub use crate::store::ScyllaConfig;
use crate::trigger::TriggerConfig;

pub const ENV_PREFIX: &str = "ENGRAM_";
const MASK: &str = "********";

#[derive(Debug, Error)]
pub enum ConfigError {
    #[error("cannot read config file {path}: {reason}")]
    Read { path: String, reason: String },
    #[error("invalid config{origin}: {reason}")]
    Invalid { origin: String, reason: String },
    /// The value itself is never shown: it may be a secret set under the
    /// wrong name.
    #[error("{source_name}: `{key}` expects {expected}; the value given is not one")]
    BadOverride {
        source_name: String,
        key: String,
        expected: &'static str,
    },
    #[error("unknown setting `{0}`")]
    UnknownKey(String),
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    pub input: InputConfig,
    pub output: OutputConfig,
    pub state: StateConfig,
    pub pipeline: PipelineConfig,
    pub limits: Limits,
    pub salience: SalienceParams,
    pub embedding: EmbeddingConfig,
    pub index: IndexConfig,
    pub consolidation: ConsolidationConfig,
    pub kafka: KafkaConfig,
    pub scylla: ScyllaConfig,
    pub http: HttpConfig,
    pub log: LogConfig,
}

/// Embedded-mode input (used when no broker is configured).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct InputConfig {
    /// File of events (JSON lines), or `-` for stdin.
    pub path: String,
    /// Names the input stream for replay de-duplication (offsets are line
    /// numbers within it). Empty: derived from the file's absolute path.
    pub source_id: String,
}

impl Default for InputConfig {
    fn default() -> Self {
        Self {
            path: "-".to_owned(),
            source_id: String::new(),
        }
    }
}

/// Embedded-mode output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OutputConfig {
    /// File for output events (JSON lines), or `-` for stdout.
    pub path: String,
    /// Separate file for dead letters; empty: they go with the other outputs.
    pub dlq_path: String,
}

impl Default for OutputConfig {
    fn default() -> Self {
        Self {
            path: "-".to_owned(),
            dlq_path: String::new(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StateConfig {
    /// Directory of the embedded store.
    pub dir: PathBuf,
}

impl Default for StateConfig {
    fn default() -> Self {
        Self {
            dir: PathBuf::from("./engram-data"),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PipelineConfig {
    /// Events applied per store transaction.
    pub batch_size: usize,
    pub clock: ClockMode,
}

impl Default for PipelineConfig {
    fn default() -> Self {
        Self {
            batch_size: 5000,
            clock: ClockMode::Auto,
        }
    }
}

/// Consolidation settings (docs/design.md §4–§5); they are hashed into
/// every run report. Each component's keys are its own section type beside
/// it, flattened here so every key stays `consolidation.<key>`: the
/// triggers ([`TriggerConfig`]), the detectors ([`DetectConfig`], with the
/// pair search), the capacity tiers ([`BudgetConfig`]) and the pattern
/// rewriter ([`RewriteConfig`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ConsolidationConfig {
    /// Rules file; empty for the built-in `rules/default.toml`.
    pub rules_path: String,
    /// WordNet 3 database files (`make models` fetches them): lemmas,
    /// synonyms, antonyms and word classes for contradiction and merge
    /// decisions. Empty: only the rule file's lexicon (fewer contradictions
    /// found, and merges checked by exact words only).
    pub wordnet_dir: String,
    /// Most active memories one cycle considers (the newest); the older
    /// ones wait for a later cycle. Bounds a cycle's time and memory (0: no
    /// cap).
    pub max_memories_per_cycle: usize,
    #[serde(flatten)]
    pub trigger: TriggerConfig,
    #[serde(flatten)]
    pub detect: DetectConfig,
    #[serde(flatten)]
    pub budget: BudgetConfig,
    #[serde(flatten)]
    pub rewrite: RewriteConfig,
}

impl Default for ConsolidationConfig {
    fn default() -> Self {
        Self {
            rules_path: String::new(),
            wordnet_dir: ".cache/engram/wordnet".into(),
            max_memories_per_cycle: 100_000,
            trigger: TriggerConfig::default(),
            detect: DetectConfig::default(),
            budget: BudgetConfig::default(),
            rewrite: RewriteConfig::default(),
        }
    }
}

impl ConsolidationConfig {
    /// Short hash of the settings, recorded in reports so a plan can be tied
    /// to the configuration that produced it.
    /// A short digest of everything a cycle's decisions depend on; the
    /// rewrite endpoint's credentials are left out.
    pub fn hash(&self, salience: &SalienceParams, rules_digest: &str) -> String {
        let mut settings = self.clone();
        settings.rewrite.pattern_rewrite_token.clear();
        // Where WordNet lies does not change a decision; its content does,
        // and enters through `rules_digest`.
        settings.wordnet_dir.clear();
        let canonical = serde_json::json!({
            "consolidation": settings,
            "salience": salience,
            "rules": rules_digest,
        });
        let digest = Sha256::digest(canonical.to_string().as_bytes());
        digest.iter().take(8).map(|b| format!("{b:02x}")).collect()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LogConfig {
    /// `tracing` filter, e.g. `info` or `engram=debug`.
    pub level: String,
    /// `auto` (human on a terminal, JSON otherwise), `human` or `json`.
    pub format: LogFormat,
}

impl Default for LogConfig {
    fn default() -> Self {
        Self {
            level: "info".to_owned(),
            format: LogFormat::Auto,
        }
    }
}

/// Collects every value out of its range, so one error names them all.
#[derive(Default)]
pub(crate) struct Checks(Vec<String>);

impl Checks {
    pub(crate) fn finite(&mut self, key: &str, value: f64) {
        if !value.is_finite() {
            self.0
                .push(format!("{key} must be a finite number, not {value}"));
        }
    }

    pub(crate) fn positive(&mut self, key: &str, value: f64) {
        if !(value.is_finite() && value > 0.0) {
            self.0.push(format!("{key} must be above 0, not {value}"));
        }
    }

    pub(crate) fn unit(&mut self, key: &str, value: f64) {
        if !(0.0..=1.0).contains(&value) {
            self.0
                .push(format!("{key} must be between 0 and 1, not {value}"));
        }
    }

    pub(crate) fn open_unit(&mut self, key: &str, value: f64) {
        if !(value > 0.0 && value < 1.0) {
            self.0
                .push(format!("{key} must be above 0 and below 1, not {value}"));
        }
    }

    pub(crate) fn at_least<T: PartialOrd + std::fmt::Display>(
        &mut self,
        key: &str,
        value: T,
        least: T,
    ) {
        if value < least {
            self.0
                .push(format!("{key} must be at least {least}, not {value}"));
        }
    }

    pub(crate) fn one_of(&mut self, key: &str, value: &str, allowed: &[&str]) {
        if !allowed.contains(&value) {
            self.0.push(format!(
                "{key} must be one of {}, not `{value}`",
                allowed.join(", ")
            ));
        }
    }

    /// A check of its own, as a sentence that names the key.
    pub(crate) fn refuse(&mut self, reason: String) {
        self.0.push(reason);
    }

    fn finish(self) -> Result<(), ConfigError> {
        if self.0.is_empty() {
            return Ok(());
        }
        Err(ConfigError::Invalid {
            origin: String::new(),
            reason: self.0.join("; "),
        })
    }
}

/// What orders a partition's records across input topics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OrderBy {
    /// The time in the event (`created_at`, `accessed_at`, ...).
    #[default]
    EventTime,
    /// The record's Kafka timestamp.
    Timestamp,
}

/// How input records are decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InputFormat {
    /// Each record says: Avro single-object encoding when it starts with
    /// its marker, JSON otherwise.
    Auto,
    Json,
    Avro,
}

impl InputFormat {
    /// The one format every record must have; `None`: detected per record.
    pub fn fixed(self) -> Option<WireFormat> {
        match self {
            InputFormat::Auto => None,
            InputFormat::Json => Some(WireFormat::Json),
            InputFormat::Avro => Some(WireFormat::Avro),
        }
    }
}

/// The consistency level of every ScyllaDB read and write; names are read
/// case-insensitively (`LOCAL_QUORUM` as CQL writes it, or `local_quorum`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Consistency {
    Any,
    One,
    Two,
    Three,
    Quorum,
    All,
    LocalQuorum,
    EachQuorum,
    LocalOne,
}

impl Consistency {
    const ALL: [Consistency; 9] = [
        Consistency::Any,
        Consistency::One,
        Consistency::Two,
        Consistency::Three,
        Consistency::Quorum,
        Consistency::All,
        Consistency::LocalQuorum,
        Consistency::EachQuorum,
        Consistency::LocalOne,
    ];
}

impl<'de> Deserialize<'de> for Consistency {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        Consistency::ALL
            .into_iter()
            .find(|level| level.to_string().eq_ignore_ascii_case(&name))
            .ok_or_else(|| {
                let names: Vec<String> = Consistency::ALL.iter().map(|l| l.to_string()).collect();
                serde::de::Error::custom(format!(
                    "unknown consistency `{name}`, expected one of {}",
                    names.join(", ")
                ))
            })
    }
}

impl std::fmt::Display for Consistency {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = serde_json::to_value(self).unwrap_or(Json::Null);
        write!(f, "{}", name.as_str().unwrap_or("?"))
    }
}

/// How log lines are written to stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LogFormat {
    /// Human on a terminal, JSON otherwise.
    Auto,
    Human,
    Json,
}

/// Where a setting came from, for error messages.
#[derive(Debug, Clone)]
pub struct Override {
    pub key: String,
    pub value: String,
    pub origin: String,
}

impl Config {
    /// Builds the effective configuration: defaults < `file` < `env` < `flags`.
    pub fn load(
        file: Option<&Path>,
        env: impl IntoIterator<Item = (String, String)>,
        flags: Vec<Override>,
    ) -> Result<Self, ConfigError> {
        let mut merged = serde_json::to_value(Config::default()).unwrap_or(Json::Null);
        let defaults = merged.clone();
        if let Some(path) = file {
            let text = std::fs::read_to_string(path).map_err(|e| ConfigError::Read {
                path: path.display().to_string(),
                reason: e.to_string(),
            })?;
            let text = upgrade_renamed_keys(&text).map_err(|reason| ConfigError::Invalid {
                origin: format!(" in {}", path.display()),
                reason,
            })?;
            // Deserialising the file on its own first gives errors with line numbers.
            let from_file: Config = toml::from_str(&text).map_err(|e| ConfigError::Invalid {
                origin: format!(" in {}", path.display()),
                reason: toml_error_without_text(&text, &e),
            })?;
            merged = serde_json::to_value(from_file).unwrap_or(Json::Null);
        }
        let keys = leaf_keys(&defaults);
        let env_overrides = env.into_iter().filter_map(|(name, value)| {
            let origin = format!("environment variable {name}");
            if let Some(key) = keys.iter().find(|key| env_name(key) == name) {
                return Some(Override {
                    key: key.clone(),
                    value,
                    origin,
                });
            }
            // An earlier release's variable: its number in its old unit.
            let (_, key, unit) = RENAMED.iter().find(|(old, _, _)| env_name(old) == name)?;
            let value = value
                .trim()
                .parse::<f64>()
                .ok()
                .and_then(|number| from_renamed(number, *unit))
                .unwrap_or(value);
            Some(Override {
                key: (*key).to_owned(),
                value,
                origin,
            })
        });
        for item in env_overrides.collect::<Vec<_>>().into_iter().chain(flags) {
            apply_override(&mut merged, &defaults, &item)?;
        }
        let config: Config = serde_json::from_value(merged).map_err(|e| ConfigError::Invalid {
            origin: String::new(),
            reason: e.to_string(),
        })?;
        config.validate()?;
        Ok(config)
    }

    /// Checks every range a value must be in, so that `engram config` rejects
    /// what would otherwise fail (or misbehave) later, naming the key.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let mut checks = Checks::default();
        let s = &self.salience;
        checks.open_unit("salience.decay", s.decay);
        checks.positive("salience.min_age", s.min_age.as_secs_f64());
        checks.positive("salience.pivot_age", s.pivot_age.as_secs_f64());
        checks.positive("salience.scale", s.scale);
        checks.finite("salience.importance_weight", s.importance_weight);
        let c = &self.consolidation;
        c.detect.check(&mut checks);
        c.budget.check(&mut checks);
        checks.at_least(
            "consolidation.max_memories_per_cycle",
            c.max_memories_per_cycle,
            1,
        );
        checks.at_least("pipeline.batch_size", self.pipeline.batch_size, 1);
        checks.at_least("embedding.max_batch", self.embedding.max_batch, 1);
        self.kafka.check(self.uses_broker(), &mut checks);
        self.scylla.check(&mut checks);
        self.http.check(self.uses_broker(), &mut checks);
        checks.finish()
    }

    /// Settings that work but are unsafe, for the log at start. No value
    /// is quoted.
    pub fn warnings(&self) -> Vec<String> {
        let mut warnings = Vec::new();
        let scylla = &self.scylla;
        if scylla.enabled()
            && !scylla.tls
            && !(scylla.username.is_empty() && scylla.password.is_empty())
        {
            warnings.push(
                "scylla.username and scylla.password go to ScyllaDB in clear, as scylla.tls is \
                 off: turn it on (with scylla.tls_ca_file) unless the network path is private"
                    .to_owned(),
            );
        }
        warnings
    }

    /// Whether a broker is configured (service mode) or not (embedded mode).
    pub fn uses_broker(&self) -> bool {
        !self.kafka.brokers.trim().is_empty()
    }

    /// The configuration as TOML with every secret masked.
    pub fn to_masked_toml(&self) -> String {
        let mut json = serde_json::to_value(self).unwrap_or(Json::Null);
        mask_secrets(&mut json);
        let value: toml::Value =
            serde_json::from_value(json).unwrap_or(toml::Value::Boolean(false));
        toml::to_string_pretty(&value).unwrap_or_default()
    }

    /// Every setting key, e.g. `pipeline.batch_size`.
    pub fn keys() -> Vec<String> {
        leaf_keys(&serde_json::to_value(Config::default()).unwrap_or(Json::Null))
    }

    /// Environment variable name for a setting key.
    pub fn env_var(key: &str) -> String {
        env_name(key)
    }
}

/// Keys of earlier releases, whose plain numbers were in a unit the key's
/// name gave (in milliseconds: 1 for `_ms`, 1,000 for `_secs`, 86,400,000
/// for `_days`), with the key that replaced
/// each. Files and environment variables that use them keep working.
const RENAMED: [(&str, &str, u64); 19] = [
    (
        "consolidation.lookback_days",
        "consolidation.lookback",
        86_400_000,
    ),
    (
        "consolidation.max_age_days",
        "consolidation.max_age",
        86_400_000,
    ),
    (
        "consolidation.verbose_min_age_days",
        "consolidation.verbose_min_age",
        86_400_000,
    ),
    (
        "consolidation.schedule_interval_secs",
        "consolidation.schedule_interval",
        1_000,
    ),
    (
        "consolidation.schedule_jitter_secs",
        "consolidation.schedule_jitter",
        1_000,
    ),
    (
        "consolidation.pattern_rewrite_timeout_ms",
        "consolidation.pattern_rewrite_timeout",
        1,
    ),
    ("kafka.session_timeout_ms", "kafka.session_timeout", 1),
    ("kafka.heartbeat_interval_ms", "kafka.heartbeat_interval", 1),
    ("kafka.flush_interval_ms", "kafka.flush_interval", 1),
    ("kafka.commit_interval_ms", "kafka.commit_interval", 1),
    ("kafka.schedule_check_ms", "kafka.schedule_check", 1),
    ("kafka.max_idle_ms", "kafka.max_idle", 1),
    ("scylla.request_timeout_ms", "scylla.request_timeout", 1),
    ("scylla.retry_backoff_ms", "scylla.retry_backoff", 1),
    (
        "limits.max_future_skew_secs",
        "limits.max_future_skew",
        1_000,
    ),
    (
        "limits.max_parked_read_age_secs",
        "limits.max_parked_read_age",
        1_000,
    ),
    ("embedding.max_wait_ms", "embedding.max_wait", 1),
    ("salience.min_age_secs", "salience.min_age", 1_000),
    ("salience.pivot_age_secs", "salience.pivot_age", 1_000),
];

/// A plain number of an earlier release's key, in that key's unit, as a
/// duration value (`None`: not a non-negative number).
fn from_renamed(number: f64, unit_millis: u64) -> Option<String> {
    let millis = number * unit_millis as f64;
    (millis.is_finite() && millis >= 0.0)
        .then(|| duration::format(Duration::from_millis(millis.round() as u64)))
}

/// A config file with keys of an earlier release rewritten to their new
/// names and units (the text unchanged when it has none, so errors keep
/// their line numbers).
fn upgrade_renamed_keys(text: &str) -> Result<std::borrow::Cow<'_, str>, String> {
    let Ok(mut table) = text.parse::<toml::Table>() else {
        return Ok(std::borrow::Cow::Borrowed(text));
    };
    let mut changed = false;
    for (old, new, unit) in RENAMED {
        let (Some((section, old_field)), Some((_, new_field))) =
            (old.split_once('.'), new.split_once('.'))
        else {
            continue;
        };
        let Some(fields) = table.get_mut(section).and_then(toml::Value::as_table_mut) else {
            continue;
        };
        let Some(value) = fields.remove(old_field) else {
            continue;
        };
        if fields.contains_key(new_field) {
            return Err(format!("both `{old}` and `{new}` are set; keep `{new}`"));
        }
        let number = value
            .as_integer()
            .map(|n| n as f64)
            .or_else(|| value.as_float());
        let text = number
            .and_then(|number| from_renamed(number, unit))
            .ok_or_else(|| {
                format!(
                    "`{old}` (now `{new}`, {}) must be a number",
                    duration::EXPECTED
                )
            })?;
        fields.insert(new_field.to_owned(), toml::Value::String(text));
        changed = true;
    }
    if !changed {
        return Ok(std::borrow::Cow::Borrowed(text));
    }
    toml::to_string(&table)
        .map(std::borrow::Cow::Owned)
        .map_err(|e| e.to_string())
}

fn env_name(key: &str) -> String {
    format!("{ENV_PREFIX}{}", key.replace('.', "_").to_uppercase())
}

fn leaf_keys(value: &Json) -> Vec<String> {
    let mut keys = Vec::new();
    if let Json::Object(sections) = value {
        for (section, fields) in sections {
            if let Json::Object(fields) = fields {
                keys.extend(fields.keys().map(|field| format!("{section}.{field}")));
            }
        }
    }
    keys
}

/// A TOML error's message and position, without the snippet of the file
/// that its `Display` quotes: the line may hold a secret.
fn toml_error_without_text(text: &str, error: &toml::de::Error) -> String {
    let Some(span) = error.span() else {
        return error.message().to_owned();
    };
    let before = &text[..span.start.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |at| at + 1);
    let column = before.len() - line_start + 1;
    // The key of that line, never its value.
    let key = text[line_start..]
        .lines()
        .next()
        .and_then(|row| row.split_once('='))
        .map(|(key, _)| key.trim())
        .filter(|key| !key.is_empty() && key.len() <= 64)
        .map(|key| format!(" (`{key}`)"))
        .unwrap_or_default();
    format!("line {line}, column {column}{key}: {}", error.message())
}

/// Words in setting names (engram's and librdkafka's) whose values are
/// secrets: `kafka.sasl_password`, `sasl.password`, `ssl.key.password`,
/// `ssl.keystore.password`, `sasl.oauthbearer.client.secret`,
/// `sasl.oauthbearer.assertion.private.key.passphrase`, `ssl.key.pem` (a
/// private key inline), `sasl.oauthbearer.config` (may carry a client
/// secret), tokens.
const SECRET_WORDS: &[&str] = &[
    "password",
    "passphrase",
    "secret",
    "token",
    "key.pem",
    "oauthbearer.config",
];

fn is_secret(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    SECRET_WORDS.iter().any(|word| key.contains(word))
}

/// `key=value,…` (librdkafka properties) with each secret value masked.
fn mask_properties(text: &str) -> String {
    text.split(',')
        .map(|item| match item.split_once('=') {
            Some((key, value)) if is_secret(key.trim()) && !value.trim().is_empty() => {
                format!("{}={MASK}", key.trim())
            }
            Some(_) => item.trim().to_owned(),
            // Not key=value: it will not load, and it may be a secret typed
            // without its key.
            None if item.trim().is_empty() => String::new(),
            None => MASK.to_owned(),
        })
        .collect::<Vec<_>>()
        .join(",")
}

fn mask_secrets(value: &mut Json) {
    if let Json::Object(map) = value {
        for (key, inner) in map.iter_mut() {
            match inner {
                Json::String(text) if is_secret(key) && !text.is_empty() => {
                    *text = MASK.to_owned();
                }
                Json::String(text) if key.ends_with("properties") => {
                    *text = mask_properties(text);
                }
                _ => mask_secrets(inner),
            }
        }
    }
}

/// Sets one dotted key, parsing the text as the type its default has.
fn apply_override(merged: &mut Json, defaults: &Json, item: &Override) -> Result<(), ConfigError> {
    let (section, field) = item
        .key
        .split_once('.')
        .ok_or_else(|| ConfigError::UnknownKey(item.key.clone()))?;
    let default = defaults
        .get(section)
        .and_then(|s| s.get(field))
        .ok_or_else(|| ConfigError::UnknownKey(item.key.clone()))?;
    let bad = |expected| ConfigError::BadOverride {
        source_name: item.origin.clone(),
        key: item.key.clone(),
        expected,
    };
    let text = item.value.trim();
    if RENAMED.iter().any(|(_, new, _)| *new == item.key) {
        duration::parse(text).map_err(|_| bad(duration::EXPECTED))?;
    }
    let parsed = match default {
        Json::Bool(_) => Json::Bool(text.parse().map_err(|_| bad("true or false"))?),
        Json::Number(n) if n.is_u64() || n.is_i64() => {
            Json::from(text.parse::<i64>().map_err(|_| bad("an integer"))?)
        }
        Json::Number(_) => {
            let number: f64 = text.parse().map_err(|_| bad("a number"))?;
            serde_json::Number::from_f64(number)
                .map(Json::Number)
                .ok_or_else(|| bad("a finite number"))?
        }
        _ => Json::String(item.value.clone()),
    };
    if let Some(section) = merged.get_mut(section).and_then(Json::as_object_mut) {
        section.insert(field.to_owned(), parsed);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_earlier_keys_number_keeps_its_unit() {
        assert_eq!(from_renamed(3_600.0, 1_000).as_deref(), Some("1h"));
        assert_eq!(from_renamed(250.0, 1).as_deref(), Some("250ms"));
        assert_eq!(from_renamed(-1.0, 1), None);
    }

    fn flag(key: &str, value: &str) -> Override {
        Override {
            key: key.to_owned(),
            value: value.to_owned(),
            origin: "flag".to_owned(),
        }
    }

    #[test]
    fn defaults_load_without_sources() {
        let config = Config::load(None, vec![], vec![]).unwrap();
        assert_eq!(config, Config::default());
        assert_eq!(config.limits.max_content_bytes, 32 * 1024);
    }

    #[test]
    fn precedence_is_file_then_env_then_flags() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("engram.toml");
        std::fs::write(
            &file,
            "[pipeline]\nbatch_size = 10\n[state]\ndir = \"/from/file\"\n[limits]\nmax_tags = 5\n",
        )
        .unwrap();
        let env = vec![
            ("ENGRAM_PIPELINE_BATCH_SIZE".to_owned(), "20".to_owned()),
            ("ENGRAM_STATE_DIR".to_owned(), "/from/env".to_owned()),
            ("UNRELATED".to_owned(), "x".to_owned()),
        ];
        let config = Config::load(Some(&file), env, vec![flag("state.dir", "/from/flag")]).unwrap();
        assert_eq!(config.limits.max_tags, 5, "file beats defaults");
        assert_eq!(config.pipeline.batch_size, 20, "env beats file");
        assert_eq!(
            config.state.dir,
            PathBuf::from("/from/flag"),
            "flag beats env"
        );
    }

    #[test]
    fn unknown_file_key_is_an_error_with_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("engram.toml");
        std::fs::write(&file, "[pipeline]\nbatch_size = 10\nbatch_sise = 3\n").unwrap();
        let error = Config::load(Some(&file), vec![], vec![])
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("batch_sise") && error.contains("line 3"),
            "{error}"
        );
    }

    #[test]
    fn consolidation_sections_keep_their_flat_keys() {
        // Each component's section is flattened into [consolidation]: its
        // keys read, validate and reject as one table's.
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("engram.toml");
        std::fs::write(
            &file,
            "[consolidation]\ntrigger_new_memories = 7\nduplicate_threshold = 0.8\n\
             pair_probes = 8\ntoken_budget = 1000\npattern_rewrite_model = \"m\"\n",
        )
        .unwrap();
        let env = vec![(
            "ENGRAM_CONSOLIDATION_SCHEDULE_JITTER".to_owned(),
            "5m".to_owned(),
        )];
        let c = Config::load(Some(&file), env, vec![])
            .unwrap()
            .consolidation;
        assert_eq!(c.trigger.trigger_new_memories, 7);
        assert_eq!(c.trigger.schedule_jitter, Duration::from_secs(300));
        assert_eq!(c.detect.duplicate_threshold, 0.8);
        assert_eq!(c.detect.pair_probes, 8);
        assert_eq!(c.budget.token_budget, 1000);
        assert_eq!(c.rewrite.pattern_rewrite_model, "m");
        assert_eq!(c.detect.archive_threshold, 0.1, "unset keys keep defaults");
        assert!(Config::keys().contains(&"consolidation.pair_probes".to_owned()));

        std::fs::write(
            &file,
            "[consolidation]\ntoken_budget = 5\nduplicate_treshold = 0.8\n",
        )
        .unwrap();
        let error = Config::load(Some(&file), vec![], vec![])
            .unwrap_err()
            .to_string();
        assert!(error.contains("duplicate_treshold"), "{error}");

        std::fs::write(
            &file,
            "[consolidation]\nselective_at = 2.0\npattern_similarity = -1.0\n",
        )
        .unwrap();
        let error = Config::load(Some(&file), vec![], vec![])
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("consolidation.selective_at")
                && error.contains("consolidation.pattern_similarity"),
            "{error}"
        );
    }

    #[test]
    fn durations_take_a_unit_in_files_env_and_flags() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("engram.toml");
        std::fs::write(
            &file,
            "[kafka]\nmax_idle = \"2s\"\n[salience]\npivot_age = \"3d\"\n",
        )
        .unwrap();
        let env = vec![(
            "ENGRAM_KAFKA_COMMIT_INTERVAL".to_owned(),
            "250ms".to_owned(),
        )];
        let config = Config::load(
            Some(&file),
            env,
            vec![flag("consolidation.schedule_interval", "1h30m")],
        )
        .unwrap();
        assert_eq!(config.kafka.max_idle, Duration::from_secs(2));
        assert_eq!(config.salience.pivot_age, Duration::from_secs(3 * 86_400));
        assert_eq!(config.kafka.commit_interval, Duration::from_millis(250));
        assert_eq!(
            config.consolidation.trigger.schedule_interval,
            Duration::from_secs(5_400)
        );
        // A number without its unit names the key and what it takes.
        let env = vec![("ENGRAM_KAFKA_MAX_IDLE".to_owned(), "500".to_owned())];
        let error = Config::load(None, env, vec![]).unwrap_err().to_string();
        assert!(
            error.contains("ENGRAM_KAFKA_MAX_IDLE") && error.contains("a duration with a unit"),
            "{error}"
        );
        std::fs::write(&file, "[kafka]\nmax_idle = 500\n").unwrap();
        let error = Config::load(Some(&file), vec![], vec![])
            .unwrap_err()
            .to_string();
        assert!(error.contains("max_idle"), "{error}");
        // Printed with their units.
        assert!(
            Config::default()
                .to_masked_toml()
                .contains("schedule_interval = \"1d\"")
        );
    }

    #[test]
    fn keys_of_earlier_releases_keep_their_units() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("engram.toml");
        std::fs::write(
            &file,
            "[kafka]\nmax_idle_ms = 2000\n[consolidation]\nschedule_interval_secs = 3600\n\
             max_age_days = 2\n\
             [salience]\nmin_age_secs = 0.5\n",
        )
        .unwrap();
        let env = vec![
            (
                "ENGRAM_KAFKA_COMMIT_INTERVAL_MS".to_owned(),
                "100".to_owned(),
            ),
            (
                "ENGRAM_LIMITS_MAX_PARKED_READ_AGE_SECS".to_owned(),
                "60".to_owned(),
            ),
        ];
        let config = Config::load(Some(&file), env, vec![]).unwrap();
        assert_eq!(config.kafka.max_idle, Duration::from_secs(2));
        assert_eq!(
            config.consolidation.trigger.schedule_interval,
            Duration::from_secs(3_600)
        );
        assert_eq!(config.salience.min_age, Duration::from_millis(500));
        assert_eq!(
            config.consolidation.detect.max_age,
            Duration::from_secs(2 * 86_400)
        );
        assert_eq!(config.kafka.commit_interval, Duration::from_millis(100));
        assert_eq!(config.limits.max_parked_read_age, Duration::from_secs(60));
        std::fs::write(&file, "[kafka]\nmax_idle_ms = 2000\nmax_idle = \"1s\"\n").unwrap();
        let error = Config::load(Some(&file), vec![], vec![])
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("max_idle_ms") && error.contains("keep `kafka.max_idle`"),
            "{error}"
        );
    }

    #[test]
    fn badly_typed_env_names_the_variable() {
        let env = vec![("ENGRAM_PIPELINE_BATCH_SIZE".to_owned(), "many".to_owned())];
        let error = Config::load(None, env, vec![]).unwrap_err().to_string();
        assert!(
            error.contains("ENGRAM_PIPELINE_BATCH_SIZE") && error.contains("integer"),
            "{error}"
        );
    }

    #[test]
    fn secrets_are_masked() {
        let env = vec![
            (
                "ENGRAM_KAFKA_SASL_PASSWORD".to_owned(),
                "hunter2".to_owned(),
            ),
            ("ENGRAM_SCYLLA_PASSWORD".to_owned(), "s3cret".to_owned()),
        ];
        let config = Config::load(None, env, vec![]).unwrap();
        assert_eq!(config.kafka.sasl_password, "hunter2");
        let shown = config.to_masked_toml();
        assert!(
            !shown.contains("hunter2") && !shown.contains("s3cret"),
            "{shown}"
        );
        assert!(shown.contains("sasl_password = \"********\""), "{shown}");
    }

    #[test]
    fn values_out_of_range_are_rejected_at_load_naming_their_keys() {
        let error = Config::load(
            None,
            vec![],
            vec![
                flag("salience.decay", "1"),
                flag("consolidation.duplicate_threshold", "1.5"),
                flag("pipeline.batch_size", "0"),
            ],
        )
        .unwrap_err()
        .to_string();
        for key in [
            "salience.decay",
            "consolidation.duplicate_threshold",
            "pipeline.batch_size",
        ] {
            assert!(error.contains(key), "{error}");
        }
        let unknown_format = Config::load(None, vec![], vec![flag("log.format", "xml")]);
        assert!(unknown_format.unwrap_err().to_string().contains("xml"));
        let format = Config::load(None, vec![], vec![flag("kafka.input_format", "json")]);
        assert_eq!(format.unwrap().kafka.input_format, InputFormat::Json);
    }

    #[test]
    fn sasl_needs_a_mechanism_this_build_has() {
        let sasl = |mechanism: &str| {
            Config::load(
                None,
                vec![],
                vec![
                    flag("kafka.security_protocol", "sasl_ssl"),
                    flag("kafka.sasl_mechanism", mechanism),
                ],
            )
        };
        for mechanism in ["SCRAM-SHA-512", "scram-sha-256", "PLAIN", "OAUTHBEARER"] {
            assert!(sasl(mechanism).is_ok(), "{mechanism}");
        }
        for mechanism in ["", "GSSAPI"] {
            let error = sasl(mechanism).unwrap_err().to_string();
            assert!(error.contains("kafka.sasl_mechanism"), "{error}");
        }
        let plaintext = Config::load(None, vec![], vec![flag("kafka.sasl_mechanism", "")]);
        assert!(plaintext.is_ok(), "no mechanism is needed without SASL");
    }

    #[test]
    fn the_partitioner_defaults_to_the_java_clients_and_is_checked() {
        assert_eq!(Config::default().kafka.partitioner, "murmur2_random");
        let error = Config::load(None, vec![], vec![flag("kafka.partitioner", "crc32")])
            .unwrap_err()
            .to_string();
        assert!(error.contains("kafka.partitioner"), "{error}");
    }

    #[test]
    fn consistency_names_are_read_case_insensitively() {
        let level = |name: &str| {
            Config::load(None, vec![], vec![flag("scylla.consistency", name)])
                .map(|c| c.scylla.consistency)
        };
        assert_eq!(level("local_quorum").unwrap(), Consistency::LocalQuorum);
        assert_eq!(level("QUORUM").unwrap(), Consistency::Quorum);
        assert_eq!(level("local_one").unwrap(), Consistency::LocalOne);
        assert!(level("serial").is_err());
        assert_eq!(Consistency::LocalQuorum.to_string(), "local_quorum");
    }

    /// ANY acknowledges a write stored as a hint on any node: no read can
    /// be served at it, and engram reads with the same level it writes.
    #[test]
    fn consistency_any_is_refused() {
        let error = Config::load(None, vec![], vec![flag("scylla.consistency", "any")])
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("scylla.consistency") && error.contains("read"),
            "{error}"
        );
    }

    /// The HTTP API can request cycles and show every user's report: it
    /// listens on this machine only unless told otherwise, and anywhere
    /// else only behind a token.
    #[test]
    fn the_http_api_listens_beyond_loopback_only_with_a_token() {
        assert_eq!(Config::default().http.bind, "127.0.0.1:8080");
        let service = |overrides: Vec<Override>| {
            let mut all = vec![flag("kafka.brokers", "localhost:9092")];
            all.extend(overrides);
            Config::load(None, vec![], all)
        };
        for bind in ["0.0.0.0:8080", "[::]:8080", "10.1.2.3:8080", "engram:8080"] {
            let error = service(vec![flag("http.bind", bind)])
                .unwrap_err()
                .to_string();
            assert!(
                error.contains("http.bind") && error.contains("http.token"),
                "{bind}: {error}"
            );
            let with_token = service(vec![flag("http.bind", bind), flag("http.token", "s3cret")]);
            assert!(with_token.is_ok(), "{bind}");
        }
        for bind in ["127.0.0.1:8080", "[::1]:9000", "localhost:8080", ""] {
            assert!(service(vec![flag("http.bind", bind)]).is_ok(), "{bind}");
        }
        // Embedded mode serves nothing unless asked: no token needed.
        assert!(Config::load(None, vec![], vec![flag("http.bind", "0.0.0.0:8080")]).is_ok());
    }

    /// Credentials sent to ScyllaDB without TLS cross the network in clear.
    #[test]
    fn scylla_credentials_without_tls_warn_at_start() {
        let config = Config::load(
            None,
            vec![],
            vec![
                flag("scylla.nodes", "scylla:9042"),
                flag("scylla.username", "engram"),
                flag("scylla.password", "hunter2"),
            ],
        )
        .unwrap();
        let warnings = config.warnings();
        assert!(
            warnings
                .iter()
                .any(|w| w.contains("scylla.tls") && w.contains("clear")),
            "{warnings:?}"
        );
        assert!(warnings.iter().all(|w| !w.contains("hunter2")));
        let mut with_tls = config.clone();
        with_tls.scylla.tls = true;
        assert!(with_tls.warnings().is_empty(), "{:?}", with_tls.warnings());
        assert!(Config::default().warnings().is_empty());
    }

    #[test]
    fn every_key_has_an_env_var() {
        let keys = Config::keys();
        assert!(keys.contains(&"limits.max_content_bytes".to_owned()));
        assert_eq!(
            Config::env_var("limits.max_content_bytes"),
            "ENGRAM_LIMITS_MAX_CONTENT_BYTES"
        );
    }

    #[test]
    fn config_hash_changes_with_settings() {
        let params = SalienceParams::default();
        let base = ConsolidationConfig::default();
        let mut changed = base.clone();
        changed.detect.duplicate_threshold = 0.9;
        assert_eq!(base.hash(&params, "r"), base.hash(&params, "r"));
        assert_ne!(base.hash(&params, "r"), changed.hash(&params, "r"));
    }
}
