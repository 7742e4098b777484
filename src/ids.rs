//! Deterministic ids: run ids, action ids, pattern ids and output event ids
//! are derived from what they are about, so a replay produces the same ids
//! and consumers can de-duplicate. A leaf: it imports nothing of engram.

use uuid::Uuid;

/// Namespace of every id engram derives.
const ENGRAM_NAMESPACE: Uuid = Uuid::from_u128(0x6a1c_52e4_9b0d_4f7e_8e53_0d1f_2c3b_4a59);

/// A deterministic id from its parts: the same parts always give the same id.
/// Parts are joined with the unit separator, so `["a", "bc"]` and
/// `["ab", "c"]` give different ids.
pub fn derived_id(parts: &[&str]) -> String {
    Uuid::new_v5(&ENGRAM_NAMESPACE, parts.join("\u{1f}").as_bytes()).to_string()
}

#[cfg(test)]
mod tests {
    use super::derived_id;

    #[test]
    fn the_same_parts_give_the_same_id_and_the_boundaries_count() {
        assert_eq!(derived_id(&["u", "run"]), derived_id(&["u", "run"]));
        assert_ne!(derived_id(&["a", "bc"]), derived_id(&["ab", "c"]));
    }
}
