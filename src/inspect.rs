//! `engram inspect`: a memory and the link graph around it, followed both
//! ways. A link whose other end no longer exists is dead: traversal removes
//! it from the store and counts it.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use crate::model::{Link, Memory};
use crate::store::{Store, StoreError, Write, WriteBatch};

/// What a traversal found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Neighbourhood {
    /// Memories reached, with their distance from the start, in visit order.
    pub memories: Vec<(usize, Memory)>,
    /// Live links between reached memories, in `(from, to, type)` order.
    pub links: Vec<Link>,
    /// Dead links found and removed.
    pub dead_links_removed: usize,
}

/// Breadth-first from `memory_id` up to `depth` links away, following links
/// in both directions. `None` if the memory does not exist.
pub fn neighbourhood(
    store: &dyn Store,
    user_id: &str,
    memory_id: &str,
    depth: usize,
) -> Result<Option<Neighbourhood>, StoreError> {
    let Some(start) = store.memory(user_id, memory_id)? else {
        return Ok(None);
    };
    let mut seen: BTreeMap<String, usize> = BTreeMap::from([(start.id.clone(), 0)]);
    let mut result = Neighbourhood {
        memories: vec![(0, start)],
        ..Neighbourhood::default()
    };
    let mut queue = VecDeque::from([(memory_id.to_owned(), 0usize)]);
    let mut links = BTreeMap::new();
    let mut dead = BTreeSet::new();
    while let Some((id, distance)) = queue.pop_front() {
        if distance >= depth {
            continue;
        }
        for link in store.links_of(user_id, &id)? {
            let other = if link.from_id == id {
                &link.to_id
            } else {
                &link.from_id
            };
            let key = (link.from_id.clone(), link.to_id.clone(), link.link_type);
            if !seen.contains_key(other) {
                match store.memory(user_id, other)? {
                    Some(memory) => {
                        seen.insert(other.clone(), distance + 1);
                        queue.push_back((other.clone(), distance + 1));
                        result.memories.push((distance + 1, memory));
                    }
                    None => {
                        dead.insert(key);
                        continue;
                    }
                }
            }
            links.insert(key, link);
        }
    }
    if !dead.is_empty() {
        let mut batch = WriteBatch::default();
        for (from_id, to_id, link_type) in &dead {
            batch.push(Write::DeleteLink {
                user_id: user_id.to_owned(),
                from_id: from_id.clone(),
                to_id: to_id.clone(),
                link_type: *link_type,
            });
        }
        store.commit(&batch)?;
    }
    result.dead_links_removed = dead.len();
    result.links = links.into_values().collect();
    Ok(Some(result))
}
