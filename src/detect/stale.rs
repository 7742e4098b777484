//! Stale: memories that have faded. Salience at "now" below the archival
//! threshold, and no read within `max_age_days`.

use serde::Serialize;

use super::{DAY_MS, DetectSettings, Prepared, round4};
use crate::model::Millis;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StaleMemory {
    pub memory_id: String,
    pub salience: f64,
    /// Days since the last read (or creation).
    pub idle_days: f64,
}

pub fn detect(prepared: &Prepared<'_>, now: Millis, settings: &DetectSettings) -> Vec<StaleMemory> {
    prepared
        .items
        .iter()
        .filter_map(|item| {
            let m = item.memory;
            let salience = m.salience.salience(now, m.importance, &settings.salience);
            let idle = now - m.salience.last_accessed_at();
            (salience < settings.archive_threshold && idle >= settings.max_age_days as i64 * DAY_MS)
                .then(|| StaleMemory {
                    memory_id: m.id.clone(),
                    salience: round4(salience),
                    idle_days: round4(idle as f64 / DAY_MS as f64),
                })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::testing::*;

    #[test]
    fn faded_and_unread_memories_are_stale() {
        let now = T0 + 90 * DAY_MS;
        let mut faded = memory(
            "faded",
            "The office wifi password was changed",
            T0,
            vector(1.0, 1),
        );
        faded.importance = 0.0;
        let mut important = memory(
            "important",
            "The user is allergic to peanuts",
            T0,
            vector(1.0, 2),
        );
        important.importance = 1.0;
        let mut recent = memory("recent", "Standup moved to 10am", T0, vector(1.0, 3));
        recent.importance = 0.0;
        recent.salience.record_access(now - DAY_MS);
        let snapshot = snapshot(vec![faded, important, recent]);
        let found = detect(&Prepared::new(&snapshot), now, &settings());
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].memory_id, "faded");
        assert!(found[0].salience < 0.1);
        assert_eq!(found[0].idle_days, 90.0);
    }
}
