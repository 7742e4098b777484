//! Optional rewriting of pattern texts by an OpenAI-compatible chat
//! completions endpoint (off by default).
//!
//! The planner always produces a deterministic text (what the episodes share);
//! the endpoint may only offer a better sentence. Any error, timeout or empty
//! answer keeps the deterministic text and adds a warning to the report.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use thiserror::Error;

use crate::duration;

/// The rewriter's section of `[consolidation]` (flattened into it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RewriteConfig {
    /// Optional OpenAI-compatible chat completions URL that rewrites pattern
    /// texts (empty: off). The deterministic text is kept on any failure.
    pub pattern_rewrite_url: String,
    pub pattern_rewrite_model: String,
    pub pattern_rewrite_token: String,
    #[serde(with = "duration")]
    pub pattern_rewrite_timeout: Duration,
}

impl Default for RewriteConfig {
    fn default() -> Self {
        Self {
            pattern_rewrite_url: String::new(),
            pattern_rewrite_model: String::new(),
            pattern_rewrite_token: String::new(),
            pattern_rewrite_timeout: Duration::from_secs(5),
        }
    }
}

#[derive(Debug, Error)]
pub enum RewriteError {
    #[error("request to the rewrite endpoint failed: {0}")]
    Request(String),
    #[error("the rewrite endpoint's answer has no message content")]
    NoContent,
}

/// Turns a pattern's deterministic text and its episodes into one sentence.
pub trait PatternRewriter: Send + Sync {
    fn rewrite(&self, deterministic: &str, episodes: &[String]) -> Result<String, RewriteError>;
}

/// A chat completions endpoint (`POST {url}` with `model` and `messages`).
pub struct ChatRewriter {
    url: String,
    model: String,
    token: String,
    agent: ureq::Agent,
}

impl ChatRewriter {
    /// The rewriter the config asks for, if any.
    pub fn from_config(config: &RewriteConfig) -> Option<Self> {
        if config.pattern_rewrite_url.trim().is_empty() {
            return None;
        }
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(
                config.pattern_rewrite_timeout.max(Duration::from_millis(1)),
            ))
            .http_status_as_error(true)
            .build()
            .into();
        Some(Self {
            url: config.pattern_rewrite_url.trim().to_owned(),
            model: config.pattern_rewrite_model.clone(),
            token: config.pattern_rewrite_token.clone(),
            agent,
        })
    }
}

impl PatternRewriter for ChatRewriter {
    fn rewrite(&self, deterministic: &str, episodes: &[String]) -> Result<String, RewriteError> {
        let listing: Vec<String> = episodes.iter().map(|e| format!("- {e}")).collect();
        let body = json!({
            "model": self.model,
            "temperature": 0,
            "messages": [
                {
                    "role": "system",
                    "content": "You turn recurring episodes from an AI agent's memory into one \
                                general statement of the habit or fact they show. Answer with \
                                that one sentence only."
                },
                {
                    "role": "user",
                    "content": format!(
                        "Episodes:\n{}\n\nCurrent summary: {deterministic}",
                        listing.join("\n")
                    )
                }
            ]
        });
        let mut request = self.agent.post(&self.url);
        if !self.token.is_empty() {
            request = request.header("Authorization", &format!("Bearer {}", self.token));
        }
        let mut response = request
            .send_json(&body)
            .map_err(|e| RewriteError::Request(e.to_string()))?;
        let answer: Value = response
            .body_mut()
            .read_json()
            .map_err(|e| RewriteError::Request(e.to_string()))?;
        answer
            .pointer("/choices/0/message/content")
            .and_then(Value::as_str)
            .map(|text| text.trim().to_owned())
            .filter(|text| !text.is_empty())
            .ok_or(RewriteError::NoContent)
    }
}
