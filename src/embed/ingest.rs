//! Gives every memory.created event of a batch an embedding before it is
//! applied: the platform's own (if it has the model's dimension), else one
//! already stored for the same user and normalised text; what is left is
//! listed once per text for the pipeline to compute (directly, or through
//! the shared micro-batcher).

use std::collections::HashMap;

use super::{is_usable_embedding, usable_embedding};
use crate::event::Event;
use crate::store::{Store, StoreError};
use crate::text::content_hash;

/// Where a batch's embeddings came from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EmbedCounts {
    /// Supplied by the platform with the right dimension.
    pub supplied: u64,
    /// Reused: the same user already has this normalised text embedded
    /// (stored, or earlier in the batch).
    pub reused: u64,
    /// Computed by the model.
    pub computed: u64,
}

impl EmbedCounts {
    pub fn add(&mut self, other: EmbedCounts) {
        self.supplied += other.supplied;
        self.reused += other.reused;
        self.computed += other.computed;
    }
}

/// The texts a batch of events still needs embedded, once each, after
/// platform-supplied and already-stored vectors were filled in.
#[derive(Debug, Default)]
pub struct MissingEmbeddings {
    /// Each distinct text and the events that need it, in first-seen order.
    texts: Vec<(String, Vec<usize>)>,
    counts: EmbedCounts,
}

impl MissingEmbeddings {
    /// Fills in what needs no model call and lists the rest.
    pub fn find(store: &dyn Store, events: &mut [&mut Event]) -> Result<Self, StoreError> {
        let mut counts = EmbedCounts::default();
        // (user, content hash) → indices of the events that need that text.
        let mut wanted: HashMap<(String, String), Vec<usize>> = HashMap::new();
        // First-seen order, so model calls do not depend on hash-map order.
        let mut order: Vec<(String, String)> = Vec::new();
        for (i, event) in events.iter_mut().enumerate() {
            let Some((user_id, content, embedding)) = new_text(event) else {
                continue;
            };
            if let Some(vector) = embedding.as_deref().and_then(usable_embedding) {
                *embedding = Some(vector);
                counts.supplied += 1;
                continue;
            }
            let key = (user_id.to_owned(), content_hash(content));
            let entry = wanted.entry(key.clone()).or_default();
            if entry.is_empty() {
                order.push(key);
            } else {
                counts.reused += 1;
            }
            entry.push(i);
        }
        let mut texts = Vec::new();
        for key in order {
            let Some(targets) = wanted.remove(&key) else {
                continue;
            };
            if let Some(vector) = store.embedding_for_hash(&key.0, &key.1)? {
                counts.reused += 1;
                assign(events, &targets, &vector);
                continue;
            }
            let Some(text) = content_of(events, targets[0]) else {
                continue;
            };
            texts.push((text, targets));
        }
        Ok(Self { texts, counts })
    }

    /// The texts to embed, in order.
    pub fn texts(&self) -> Vec<String> {
        self.texts.iter().map(|(text, _)| text.clone()).collect()
    }

    pub fn is_empty(&self) -> bool {
        self.texts.is_empty()
    }

    /// Gives the events the vectors of [`Self::texts`], in the same order.
    pub fn fill(self, events: &mut [&mut Event], vectors: Vec<Vec<f32>>) -> EmbedCounts {
        let mut counts = self.counts;
        for ((_, targets), vector) in self.texts.iter().zip(&vectors) {
            assign(events, targets, vector);
        }
        counts.computed += vectors.len() as u64;
        counts
    }
}

/// Whether the event brings a text that needs a vector: a creation, or an
/// update of the content.
pub fn brings_text(event: &Event) -> bool {
    brought_text(event).is_some()
}

/// The text of an event that the model will have to embed: a new text
/// that came without a usable vector of the platform's.
pub fn text_to_embed(event: &Event) -> Option<&str> {
    let (content, supplied) = brought_text(event)?;
    (!supplied.is_some_and(is_usable_embedding)).then_some(content)
}

/// The new text of an event that brings one, and the vector it came with.
fn brought_text(event: &Event) -> Option<(&str, Option<&[f32]>)> {
    match event {
        Event::MemoryCreated(created) => Some((&created.content, created.embedding.as_deref())),
        Event::MemoryUpdated(updated) => {
            Some((updated.content.as_deref()?, updated.embedding.as_deref()))
        }
        _ => None,
    }
}

/// The user, the new text and the vector slot of an event that brings a
/// text: a creation, or an update of the content.
fn new_text(event: &mut Event) -> Option<(&str, &str, &mut Option<Vec<f32>>)> {
    match event {
        Event::MemoryCreated(created) => {
            Some((&created.user_id, &created.content, &mut created.embedding))
        }
        Event::MemoryUpdated(updated) => Some((
            &updated.user_id,
            updated.content.as_deref()?,
            &mut updated.embedding,
        )),
        _ => None,
    }
}

fn content_of(events: &mut [&mut Event], index: usize) -> Option<String> {
    let event = events.get_mut(index)?;
    new_text(event).map(|(_, content, _)| content.to_owned())
}

fn assign(events: &mut [&mut Event], targets: &[usize], vector: &[f32]) {
    for &index in targets {
        if let Some((_, _, embedding)) = events.get_mut(index).and_then(|e| new_text(e)) {
            *embedding = Some(vector.to_vec());
        }
    }
}
