//! Rules: which action each detection gets (`rules/default.toml` documents
//! the format). Loaded and checked once at start-up; a bad file is an error
//! naming its line and field.

use std::path::Path;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use thiserror::Error;
use toml::Spanned;

use crate::detect::{DAY_MS, LexiconSpec};
use crate::model::{Memory, MemoryKind, Millis};

/// The rules compiled into engram.
pub const DEFAULT_RULES: &str = include_str!("../../rules/default.toml");

#[derive(Debug, Error)]
pub enum RulesError {
    #[error("cannot read rules file {path}: {reason}")]
    Read { path: String, reason: String },
    #[error("invalid rules file {origin}: {reason}")]
    Invalid { origin: String, reason: String },
    #[error("invalid rules file {origin}, line {line}: rule `{rule}`, field `{field}`: {reason}")]
    Rule {
        origin: String,
        line: usize,
        rule: String,
        field: &'static str,
        reason: String,
    },
}

/// What a detector found, as rules name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Detection {
    Duplicate,
    Contradiction,
    Supersession,
    Pattern,
    Stale,
    Verbose,
    Promotion,
}

/// What a rule does with a detection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ActionType {
    Merge,
    Supersede,
    FlagContradiction,
    ExtractPattern,
    Archive,
    Split,
    Promote,
    Noop,
}

impl ActionType {
    pub fn as_str(self) -> &'static str {
        match self {
            ActionType::Merge => "merge",
            ActionType::Supersede => "supersede",
            ActionType::FlagContradiction => "flag_contradiction",
            ActionType::ExtractPattern => "extract_pattern",
            ActionType::Archive => "archive",
            ActionType::Split => "split",
            ActionType::Promote => "promote",
            ActionType::Noop => "noop",
        }
    }
}

impl Detection {
    /// The actions a rule may give this detection.
    pub fn allowed(self) -> &'static [ActionType] {
        use ActionType::*;
        match self {
            Detection::Duplicate => &[Merge, Noop],
            Detection::Contradiction => &[FlagContradiction, Noop],
            Detection::Supersession => &[Supersede, FlagContradiction, Noop],
            Detection::Pattern => &[ExtractPattern, Noop],
            Detection::Stale => &[Archive, Noop],
            Detection::Verbose => &[Split, Noop],
            Detection::Promotion => &[Promote, Noop],
        }
    }
}

/// Conditions of a rule; every one set must hold.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Conditions {
    pub min_similarity: Option<f64>,
    pub max_similarity: Option<f64>,
    pub min_cluster_size: Option<usize>,
    pub max_cluster_size: Option<usize>,
    pub min_age_days: Option<f64>,
    pub max_age_days: Option<f64>,
    pub min_access_count: Option<u64>,
    pub max_access_count: Option<u64>,
    pub min_importance: Option<f64>,
    pub max_importance: Option<f64>,
    pub categories: Option<Vec<String>>,
    pub kinds: Option<Vec<MemoryKind>>,
}

/// One rule, checked.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rule {
    pub id: String,
    pub detection: Detection,
    pub action: ActionType,
    pub to_kind: Option<MemoryKind>,
    pub when: Conditions,
}

/// A rule as written, with positions for error messages.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleSpec {
    id: Spanned<String>,
    detection: Spanned<Detection>,
    action: Spanned<ActionType>,
    to_kind: Option<Spanned<MemoryKind>>,
    // The conditions, spelled out: serde's `flatten` would lose the spans.
    min_similarity: Option<f64>,
    max_similarity: Option<f64>,
    min_cluster_size: Option<usize>,
    max_cluster_size: Option<usize>,
    min_age_days: Option<f64>,
    max_age_days: Option<f64>,
    min_access_count: Option<u64>,
    max_access_count: Option<u64>,
    min_importance: Option<f64>,
    max_importance: Option<f64>,
    categories: Option<Vec<String>>,
    kinds: Option<Vec<MemoryKind>>,
}

impl RuleSpec {
    fn conditions(&self) -> Conditions {
        Conditions {
            min_similarity: self.min_similarity,
            max_similarity: self.max_similarity,
            min_cluster_size: self.min_cluster_size,
            max_cluster_size: self.max_cluster_size,
            min_age_days: self.min_age_days,
            max_age_days: self.max_age_days,
            min_access_count: self.min_access_count,
            max_access_count: self.max_access_count,
            min_importance: self.min_importance,
            max_importance: self.max_importance,
            categories: self.categories.clone(),
            kinds: self.kinds.clone(),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RulesFile {
    #[serde(default)]
    rule: Vec<Spanned<RuleSpec>>,
    #[serde(default)]
    lexicon: Option<LexiconSpec>,
}

/// The facts a rule's conditions are checked against.
pub struct Facts<'a> {
    pub similarity: Option<f64>,
    pub cluster_size: Option<usize>,
    pub members: Vec<&'a Memory>,
}

/// An ordered, checked rule set and the lexicon that goes with it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RuleSet {
    pub rules: Vec<Rule>,
    pub lexicon: LexiconSpec,
}

impl RuleSet {
    /// The rules shipped in `rules/default.toml`.
    pub fn default_rules() -> Self {
        // Checked by a test; a broken default cannot ship.
        Self::parse(DEFAULT_RULES, "(built in)").unwrap_or_else(|_| Self {
            rules: Vec::new(),
            lexicon: LexiconSpec::default(),
        })
    }

    /// The rules at `path`, or the defaults when `path` is empty.
    pub fn load(path: &str) -> Result<Self, RulesError> {
        if path.trim().is_empty() {
            return Self::parse(DEFAULT_RULES, "(built in)");
        }
        let text = std::fs::read_to_string(Path::new(path)).map_err(|e| RulesError::Read {
            path: path.to_owned(),
            reason: e.to_string(),
        })?;
        Self::parse(&text, path)
    }

    pub fn parse(text: &str, origin: &str) -> Result<Self, RulesError> {
        let file: RulesFile = toml::from_str(text).map_err(|e| RulesError::Invalid {
            origin: origin.to_owned(),
            reason: e.to_string().trim_end().to_owned(),
        })?;
        let line = |offset: usize| text[..offset.min(text.len())].matches('\n').count() + 1;
        let mut rules: Vec<Rule> = Vec::with_capacity(file.rule.len());
        for spanned in file.rule {
            let rule_line = line(spanned.span().start);
            let spec = spanned.into_inner();
            let id = spec.id.get_ref().clone();
            let fail = |at: usize, field: &'static str, reason: String| RulesError::Rule {
                origin: origin.to_owned(),
                line: line(at),
                rule: id.clone(),
                field,
                reason,
            };
            if id.trim().is_empty() {
                return Err(fail(spec.id.span().start, "id", "must not be empty".into()));
            }
            if rules.iter().any(|r| r.id == id) {
                return Err(fail(
                    spec.id.span().start,
                    "id",
                    "is used by an earlier rule".into(),
                ));
            }
            let detection = *spec.detection.get_ref();
            let action = *spec.action.get_ref();
            if !detection.allowed().contains(&action) {
                let allowed: Vec<&str> = detection.allowed().iter().map(|a| a.as_str()).collect();
                return Err(fail(
                    spec.action.span().start,
                    "action",
                    format!(
                        "`{}` does not apply to {detection:?} detections (allowed: {})",
                        action.as_str(),
                        allowed.join(", ")
                    ),
                ));
            }
            let to_kind = spec.to_kind.as_ref().map(|k| *k.get_ref());
            match (action, &spec.to_kind) {
                (ActionType::Promote, None) => {
                    return Err(fail(
                        rule_line_offset(text, rule_line),
                        "to_kind",
                        "a promote rule needs `to_kind`".into(),
                    ));
                }
                (ActionType::Promote, _) | (_, None) => {}
                (_, Some(kind)) => {
                    return Err(fail(
                        kind.span().start,
                        "to_kind",
                        "only promote rules take `to_kind`".into(),
                    ));
                }
            }
            let when = spec.conditions();
            if let Some(field) = inverted_range(&when) {
                return Err(fail(
                    rule_line_offset(text, rule_line),
                    field,
                    "the minimum is above the maximum".into(),
                ));
            }
            rules.push(Rule {
                id,
                detection,
                action,
                to_kind,
                when,
            });
        }
        // A rules file without a lexicon keeps the built-in one.
        let lexicon = match file.lexicon {
            Some(lexicon) => lexicon,
            None => Self::default_rules().lexicon,
        };
        Ok(Self { rules, lexicon })
    }

    /// The first rule for `detection` whose conditions hold.
    pub fn decide(&self, detection: Detection, facts: &Facts<'_>, now: Millis) -> Option<&Rule> {
        self.rules
            .iter()
            .filter(|r| r.detection == detection)
            .find(|r| r.when.hold(facts, now))
    }

    /// A short, stable digest of the rules and lexicon, for config hashes.
    pub fn digest(&self) -> String {
        let canonical = serde_json::to_string(self).unwrap_or_default();
        let digest = Sha256::digest(canonical.as_bytes());
        digest.iter().take(8).map(|b| format!("{b:02x}")).collect()
    }
}

/// The byte offset where a line starts (for errors about a whole rule).
fn rule_line_offset(text: &str, line: usize) -> usize {
    text.split_inclusive('\n')
        .take(line - 1)
        .map(str::len)
        .sum()
}

fn inverted_range(c: &Conditions) -> Option<&'static str> {
    let f = |min: Option<f64>, max: Option<f64>| matches!((min, max), (Some(a), Some(b)) if a > b);
    let u = |min: Option<u64>, max: Option<u64>| matches!((min, max), (Some(a), Some(b)) if a > b);
    if f(c.min_similarity, c.max_similarity) {
        Some("min_similarity")
    } else if u(
        c.min_cluster_size.map(|n| n as u64),
        c.max_cluster_size.map(|n| n as u64),
    ) {
        Some("min_cluster_size")
    } else if f(c.min_age_days, c.max_age_days) {
        Some("min_age_days")
    } else if u(c.min_access_count, c.max_access_count) {
        Some("min_access_count")
    } else if f(c.min_importance, c.max_importance) {
        Some("min_importance")
    } else {
        None
    }
}

impl Conditions {
    fn hold(&self, facts: &Facts<'_>, now: Millis) -> bool {
        let within = |value: Option<f64>, min: Option<f64>, max: Option<f64>| match value {
            Some(v) => min.is_none_or(|m| v >= m) && max.is_none_or(|m| v <= m),
            None => min.is_none() && max.is_none(),
        };
        if !within(facts.similarity, self.min_similarity, self.max_similarity) {
            return false;
        }
        let size = facts.cluster_size.map(|n| n as f64);
        let as_f64 = |n: Option<usize>| n.map(|n| n as f64);
        if !within(
            size,
            as_f64(self.min_cluster_size),
            as_f64(self.max_cluster_size),
        ) {
            return false;
        }
        facts.members.iter().all(|m| {
            let age_days = (now - m.created_at()) as f64 / DAY_MS as f64;
            let reads = m.salience.access_count() as f64;
            let as_f64 = |n: Option<u64>| n.map(|n| n as f64);
            within(Some(age_days), self.min_age_days, self.max_age_days)
                && within(
                    Some(reads),
                    as_f64(self.min_access_count),
                    as_f64(self.max_access_count),
                )
                && within(Some(m.importance), self.min_importance, self.max_importance)
                && self.categories.as_ref().is_none_or(|categories| {
                    m.category.as_ref().is_some_and(|c| categories.contains(c))
                })
                && self
                    .kinds
                    .as_ref()
                    .is_none_or(|kinds| kinds.contains(&m.kind))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_rules_parse() {
        let rules = RuleSet::parse(DEFAULT_RULES, "rules/default.toml").unwrap();
        assert!(rules.rules.len() >= 8);
        assert!(!rules.lexicon.negations.is_empty());
        assert_eq!(RuleSet::default_rules(), rules);
    }

    fn error(text: &str) -> String {
        RuleSet::parse(text, "r.toml").unwrap_err().to_string()
    }

    #[test]
    fn errors_name_the_line_and_field() {
        let wrong_action = "[[rule]]\nid = \"a\"\ndetection = \"stale\"\naction = \"merge\"\n";
        let message = error(wrong_action);
        assert!(
            message.contains("line 4") && message.contains("`action`"),
            "{message}"
        );
        assert!(message.contains("allowed: archive, noop"), "{message}");

        let unknown_field = "[[rule]]\nid = \"a\"\ndetection = \"stale\"\naction = \"archive\"\nmin_salience = 0.2\n";
        let message = error(unknown_field);
        assert!(
            message.contains("line 1") || message.contains("line 5"),
            "{message}"
        );
        assert!(message.contains("min_salience"), "{message}");

        let unknown_action = "[[rule]]\nid = \"a\"\ndetection = \"stale\"\naction = \"delete\"\n";
        let message = error(unknown_action);
        assert!(
            message.contains("line 4") && message.contains("delete"),
            "{message}"
        );

        let promote = "\n[[rule]]\nid = \"p\"\ndetection = \"promotion\"\naction = \"promote\"\n";
        let message = error(promote);
        assert!(
            message.contains("line 2") && message.contains("`to_kind`"),
            "{message}"
        );

        let twice = "[[rule]]\nid = \"a\"\ndetection = \"stale\"\naction = \"archive\"\n\
                     [[rule]]\nid = \"a\"\ndetection = \"stale\"\naction = \"noop\"\n";
        let message = error(twice);
        assert!(
            message.contains("line 6") && message.contains("`id`"),
            "{message}"
        );

        let inverted = "[[rule]]\nid = \"a\"\ndetection = \"duplicate\"\naction = \"merge\"\nmin_similarity = 0.9\nmax_similarity = 0.8\n";
        assert!(error(inverted).contains("`min_similarity`"));
    }

    #[test]
    fn first_matching_rule_decides() {
        let rules = RuleSet::default_rules();
        let mut memory = crate::detect::testing::memory("m", "x", 0, vec![]);
        memory.category = Some("preference".into());
        let facts = Facts {
            similarity: None,
            cluster_size: None,
            members: vec![&memory],
        };
        assert_eq!(
            rules.decide(Detection::Stale, &facts, 0).unwrap().id,
            "keep-preferences"
        );
        memory.category = Some("fact".into());
        let facts = Facts {
            similarity: None,
            cluster_size: None,
            members: vec![&memory],
        };
        assert_eq!(
            rules.decide(Detection::Stale, &facts, 0).unwrap().action,
            ActionType::Archive
        );
    }
}
