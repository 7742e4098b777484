//! Promotion candidates: every active memory. Whether one moves to another
//! kind (e.g. working → semantic once it proved important or reused) is
//! decided entirely by the `promote` rules.

use super::Prepared;

pub fn detect(prepared: &Prepared<'_>) -> Vec<String> {
    prepared
        .items
        .iter()
        .map(|item| item.memory.id.clone())
        .collect()
}
