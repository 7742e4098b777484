//! Verbose: long, old, often-read memories are split into one focused memory
//! per sentence (the original stays active). Often read means it matters;
//! long means every read drags unrelated sentences into the agent's context.

use serde::Serialize;

use super::{DetectSettings, Prepared};
use crate::model::{Link, LinkType, Millis};
use crate::text::sentences;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VerboseMemory {
    pub memory_id: String,
    pub chars: usize,
    pub access_count: u64,
    pub sentences: Vec<String>,
}

pub fn detect(
    prepared: &Prepared<'_>,
    links: &[Link],
    now: Millis,
    settings: &DetectSettings,
) -> Vec<VerboseMemory> {
    let split_before = |id: &str| {
        links
            .iter()
            .any(|l| l.link_type == LinkType::SplitFrom && l.to_id == id)
    };
    prepared
        .items
        .iter()
        .filter_map(|item| {
            let m = item.memory;
            let chars = m.content.chars().count();
            let old = now - m.created_at() >= settings.verbose_min_age;
            let read = m.salience.access_count() >= settings.verbose_min_accesses;
            if chars < settings.verbose_min_chars || !old || !read || split_before(&m.id) {
                return None;
            }
            let sentences = sentences(&m.content);
            (sentences.len() >= 2).then(|| VerboseMemory {
                memory_id: m.id.clone(),
                chars,
                access_count: m.salience.access_count(),
                sentences,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::DAY_MS;
    use crate::detect::testing::*;

    const LONG: &str = "The staging cluster runs on three nodes in Frankfurt. Deploys to it need a \
        green CI run and a review from the platform team. Database migrations run before the \
        new version starts. Rollbacks are done with the previous image tag, never by reverting \
        the migration. The on-call engineer is paged if the health check fails twice.";

    #[test]
    fn long_old_often_read_memories_are_split_once() {
        let now = T0 + 30 * DAY_MS;
        let mut long = memory("long", LONG, T0, vector(1.0, 1));
        let mut short = memory(
            "short",
            "Deploys need a green CI run. Then a review.",
            T0,
            vector(1.0, 2),
        );
        for day in 1..=6 {
            long.salience.record_access(T0 + day * DAY_MS);
            short.salience.record_access(T0 + day * DAY_MS);
        }
        let mut unread = memory("unread", LONG, T0, vector(1.0, 3));
        unread.id = "unread".into();
        let snapshot = snapshot(vec![long, short, unread]);
        let found = detect(&Prepared::new(&snapshot), &[], now, &settings());
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].memory_id, "long");
        assert_eq!(found[0].sentences.len(), 5);
        assert_eq!(
            found[0].sentences[0],
            "The staging cluster runs on three nodes in Frankfurt."
        );

        let split = vec![Link {
            user_id: "u".into(),
            from_id: "piece".into(),
            to_id: "long".into(),
            link_type: LinkType::SplitFrom,
            confidence: 1.0,
            reason: String::new(),
            created_at: now,
            run_id: None,
        }];
        assert!(detect(&Prepared::new(&snapshot), &split, now, &settings()).is_empty());
    }
}
