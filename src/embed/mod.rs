//! Embeddings: the [`Embedder`] trait, the local ONNX implementation
//! ([`LocalEmbedder`], fastembed + ONNX Runtime), length-bucketed batch
//! embedding, the ingest step that gives each new memory its vector, and the
//! async micro-batcher used by the stream.

mod batcher;
pub mod fixed;
mod ingest;
mod local;
pub mod packed;

use thiserror::Error;

use crate::error::{Cause, SharedCause};

pub use batcher::{BatcherConfig, EmbedBatcher};
pub use ingest::{EmbedCounts, MissingEmbeddings, brings_text, text_to_embed};
pub use local::{EmbeddingConfig, LocalEmbedder, ModelReport, inspect_model};

/// Dimension of all-MiniLM-L6-v2 embeddings.
pub const EMBEDDING_DIM: usize = 384;

#[derive(Debug, Clone, Error)]
pub enum EmbedError {
    #[error(
        "cannot load ONNX Runtime from {path}: {reason}. Run `make models` (or scripts/fetch_models.py) \
         to fetch it, or set embedding.runtime_library / ENGRAM_EMBEDDING_RUNTIME_LIBRARY to a \
         libonnxruntime.so of version 1.24 or newer"
    )]
    Runtime { path: String, reason: String },
    #[error(
        "cannot load the embedding model from {path}: {reason}. Run `make models` to fetch \
         all-MiniLM-L6-v2, or set embedding.model_dir / ENGRAM_EMBEDDING_MODEL_DIR to a directory \
         with model.onnx, tokenizer.json, config.json, special_tokens_map.json and tokenizer_config.json"
    )]
    Model { path: String, reason: String },
    #[error("embedding failed")]
    Inference(#[source] SharedCause),
    #[error("the embedder is shut down")]
    Closed,
}

impl EmbedError {
    pub fn inference(cause: impl Into<Cause>) -> Self {
        Self::Inference(SharedCause::from(cause.into()))
    }

    /// Whether asking again may succeed: the model gives the same answer to
    /// the same texts, so only a closed embedder (shutting down) passes.
    pub fn is_transient(&self) -> bool {
        matches!(self, Self::Closed)
    }
}

/// Turns texts into L2-normalised vectors. Implementations are free to be
/// slow per call; callers batch.
pub trait Embedder: Send + Sync {
    fn dimension(&self) -> usize;

    /// Embeds `texts` in one model call (one padded batch per `sub_batch`).
    fn embed(&self, texts: &[&str], sub_batch: usize) -> Result<Vec<Vec<f32>>, EmbedError>;

    /// Token count of each text, used to bucket batches by length. The
    /// default is a character-based estimate.
    fn token_lengths(&self, texts: &[&str]) -> Vec<usize> {
        texts.iter().map(|t| t.chars().count() / 4 + 2).collect()
    }
}

/// The shape of padded model calls: at most `texts` texts, and at most
/// `tokens` padded tokens (texts × longest), which bounds the activations a
/// call holds; attention memory grows with the square of the length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SubBatch {
    pub texts: usize,
    pub tokens: usize,
}

impl Default for SubBatch {
    fn default() -> Self {
        Self {
            texts: 32,
            tokens: 2048,
        }
    }
}

/// Embeds texts with length bucketing: sorted by token length, cut into
/// padded calls of similar lengths within `shape`, then returned in input
/// order.
pub fn embed_bucketed(
    embedder: &dyn Embedder,
    texts: &[&str],
    shape: SubBatch,
) -> Result<Vec<Vec<f32>>, EmbedError> {
    if texts.is_empty() {
        return Ok(Vec::new());
    }
    let lengths = embedder.token_lengths(texts);
    let length = |i: usize| lengths.get(i).copied().unwrap_or(1).max(1);
    let mut order: Vec<usize> = (0..texts.len()).collect();
    // Stable: equal lengths keep input order, so results do not depend on ties.
    order.sort_by_key(|&i| length(i));
    let mut out = vec![Vec::new(); texts.len()];
    let mut start = 0;
    while start < order.len() {
        // Ascending lengths: the last text of a call is its longest.
        let mut end = start + 1;
        while end < order.len()
            && end - start < shape.texts.max(1)
            && (end - start + 1) * length(order[end]) <= shape.tokens
        {
            end += 1;
        }
        let call = &order[start..end];
        let batch: Vec<&str> = call.iter().map(|&i| texts[i]).collect();
        let vectors = embedder.embed(&batch, batch.len())?;
        if vectors.len() != batch.len() {
            return Err(EmbedError::inference(format!(
                "model returned {} vectors for {} texts",
                vectors.len(),
                batch.len()
            )));
        }
        for (vector, &index) in vectors.into_iter().zip(call) {
            out[index] = vector;
        }
        start = end;
    }
    Ok(out)
}

/// A vector's length, if it can be scaled to unit length: `None` for a
/// zero or non-finite vector.
fn scalable_norm(values: &[f32]) -> Option<f64> {
    let norm = values
        .iter()
        .map(|x| f64::from(*x) * f64::from(*x))
        .sum::<f64>()
        .sqrt();
    (norm > 1e-12 && norm.is_finite()).then_some(norm)
}

/// Scales a vector to unit length; `None` for a zero or non-finite vector.
pub fn normalised(values: &[f32]) -> Option<Vec<f32>> {
    let norm = scalable_norm(values)?;
    Some(
        values
            .iter()
            .map(|x| (f64::from(*x) / norm) as f32)
            .collect(),
    )
}

/// Whether a platform-supplied embedding is used: it has the model's
/// dimension and is not all zeros (anything else is computed locally).
pub fn is_usable_embedding(values: &[f32]) -> bool {
    values.len() == EMBEDDING_DIM && scalable_norm(values).is_some()
}

/// A platform-supplied embedding, L2-normalised, if it
/// [is usable](is_usable_embedding).
pub fn usable_embedding(values: &[f32]) -> Option<Vec<f32>> {
    is_usable_embedding(values)
        .then(|| normalised(values))
        .flatten()
}

/// Cosine similarity of two unit vectors (their dot product), written so the
/// compiler vectorises it: independent accumulators over fixed chunks. On
/// CPUs with AVX2 the same code runs eight lanes per instruction instead of
/// four; without FMA the operations and their order are unchanged, so the
/// result is bit-identical either way (plans do not depend on the CPU).
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2, checked just above.
        return unsafe { dot_avx2(a, b) };
    }
    dot_lanes(a, b)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn dot_avx2(a: &[f32], b: &[f32]) -> f32 {
    dot_lanes(a, b)
}

/// Independent accumulators: enough that the additions' latency does not
/// serialise the loop (two AVX2 registers' worth; more spills).
const LANES: usize = 16;

#[inline(always)]
fn dot_lanes(a: &[f32], b: &[f32]) -> f32 {
    let mut lanes = [0f32; LANES];
    let chunks_a = a.chunks_exact(LANES);
    let chunks_b = b.chunks_exact(LANES);
    let tail = tail_product(chunks_a.remainder(), chunks_b.remainder());
    for (x, y) in chunks_a.zip(chunks_b) {
        for lane in 0..LANES {
            lanes[lane] += x[lane] * y[lane];
        }
    }
    lanes.iter().sum::<f32>() + tail
}

/// `dot(a, b)` for four `b`s at once, each result bit-identical to `dot`'s.
/// One sum is a chain of dependent additions that leaves the CPU waiting on
/// their latency; four independent chains fill that wait, and `a` is loaded
/// once for all four. Vectors of another length than `a` go one by one.
pub fn dot4(a: &[f32], b: [&[f32]; 4]) -> [f32; 4] {
    if b.iter().any(|v| v.len() != a.len()) {
        return b.map(|v| dot(a, v));
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2, checked just above.
        return unsafe { dot4_avx2(a, b) };
    }
    dot4_lanes(a, b)
}

/// `dot4_lanes` written with the AVX2 operations it stands for: the
/// compiler spills the portable version's sixty-four lanes to the stack.
/// Lanes 0–7 and 8–15 of each sum are one register each; every register
/// gets the same products added in the same order as `dot_lanes`' lanes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn dot4_avx2(a: &[f32], b: [&[f32]; 4]) -> [f32; 4] {
    use std::arch::x86_64::{
        __m256, _mm256_add_ps, _mm256_loadu_ps, _mm256_mul_ps, _mm256_setzero_ps, _mm256_storeu_ps,
    };
    const HALF: usize = LANES / 2;
    let whole = a.len() / LANES * LANES;
    let mut low: [__m256; 4] = [_mm256_setzero_ps(); 4];
    let mut high: [__m256; 4] = [_mm256_setzero_ps(); 4];
    let mut at = 0;
    while at < whole {
        // SAFETY: `at + LANES <= whole <= a.len()`, and every `b[k]` has
        // `a`'s length (checked by `dot4`), so all loads are in bounds.
        unsafe {
            let x_low = _mm256_loadu_ps(a.as_ptr().add(at));
            let x_high = _mm256_loadu_ps(a.as_ptr().add(at + HALF));
            for k in 0..4 {
                let y = b[k].as_ptr().add(at);
                low[k] = _mm256_add_ps(low[k], _mm256_mul_ps(x_low, _mm256_loadu_ps(y)));
                high[k] =
                    _mm256_add_ps(high[k], _mm256_mul_ps(x_high, _mm256_loadu_ps(y.add(HALF))));
            }
        }
        at += LANES;
    }
    let mut sums = [0f32; 4];
    for (k, sum) in sums.iter_mut().enumerate() {
        let mut lanes = [0f32; LANES];
        let (first, second) = lanes.split_at_mut(HALF);
        // SAFETY: each half is HALF (eight) floats long.
        unsafe {
            _mm256_storeu_ps(first.as_mut_ptr(), low[k]);
            _mm256_storeu_ps(second.as_mut_ptr(), high[k]);
        }
        *sum = lanes.iter().sum::<f32>() + tail_product(&a[whole..], &b[k][whole..]);
    }
    sums
}

/// The products past the last whole chunk, summed as `dot_lanes` sums them.
#[inline(always)]
fn tail_product(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// `dot_lanes` for four vectors of `a`'s length: per vector the same
/// products, added in the same order.
#[inline(always)]
fn dot4_lanes(a: &[f32], b: [&[f32]; 4]) -> [f32; 4] {
    let mut lanes = [[0f32; LANES]; 4];
    let whole = a.len() / LANES * LANES;
    let chunks = a[..whole]
        .chunks_exact(LANES)
        .zip(b[0][..whole].chunks_exact(LANES))
        .zip(b[1][..whole].chunks_exact(LANES))
        .zip(b[2][..whole].chunks_exact(LANES))
        .zip(b[3][..whole].chunks_exact(LANES));
    for ((((x, y0), y1), y2), y3) in chunks {
        for lane in 0..LANES {
            lanes[0][lane] += x[lane] * y0[lane];
            lanes[1][lane] += x[lane] * y1[lane];
            lanes[2][lane] += x[lane] * y2[lane];
            lanes[3][lane] += x[lane] * y3[lane];
        }
    }
    let mut sums = [0f32; 4];
    for (k, (sum, lanes)) in sums.iter_mut().zip(&lanes).enumerate() {
        *sum = lanes.iter().sum::<f32>() + tail_product(&a[whole..], &b[k][whole..]);
    }
    sums
}

/// A stand-in model for tests of what calls the model gets.
#[cfg(test)]
pub(crate) mod recorder {
    use super::{EmbedError, Embedder};

    /// Records the calls the model gets; returns each text's length as its
    /// vector and counts one token per character.
    #[derive(Default)]
    pub(crate) struct Recorder(std::sync::Mutex<Vec<Vec<String>>>);

    impl Recorder {
        /// The texts of each call the model got, in order.
        pub(crate) fn calls(&self) -> Vec<Vec<String>> {
            self.0.lock().unwrap().clone()
        }

        /// Every text the model was given, in order.
        pub(crate) fn texts(&self) -> Vec<String> {
            self.calls().concat()
        }
    }

    impl Embedder for Recorder {
        fn dimension(&self) -> usize {
            1
        }
        fn embed(&self, texts: &[&str], _: usize) -> Result<Vec<Vec<f32>>, EmbedError> {
            self.0
                .lock()
                .unwrap()
                .push(texts.iter().map(|t| t.to_string()).collect());
            Ok(texts.iter().map(|t| vec![t.len() as f32]).collect())
        }
        fn token_lengths(&self, texts: &[&str]) -> Vec<usize> {
            texts.iter().map(|t| t.len()).collect()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::recorder::Recorder;
    use super::*;

    #[test]
    fn dot_matches_the_naive_sum() {
        let a: Vec<f32> = (0..389).map(|i| (i as f32 * 0.37).sin()).collect();
        let b: Vec<f32> = (0..389).map(|i| (i as f32 * 0.11).cos()).collect();
        let naive: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        assert!((dot(&a, &b) - naive).abs() < 1e-4);
    }

    #[test]
    fn dot4_is_four_dots_bit_for_bit() {
        for len in [0, 7, 16, 384, 389] {
            let v = |seed: f32| -> Vec<f32> { (0..len).map(|i| (i as f32 * seed).sin()).collect() };
            let a = v(0.37);
            let b = [v(0.11), v(0.53), v(1.7), v(0.029)];
            let four = dot4(&a, [&b[0], &b[1], &b[2], &b[3]]);
            assert_eq!(four, dot4_lanes(&a, [&b[0], &b[1], &b[2], &b[3]]));
            for (k, other) in b.iter().enumerate() {
                assert_eq!(
                    four[k].to_bits(),
                    dot(&a, other).to_bits(),
                    "len {len}, {k}"
                );
                assert_eq!(
                    four[k].to_bits(),
                    dot(other, &a).to_bits(),
                    "len {len}, {k}"
                );
                assert_eq!(
                    four[k].to_bits(),
                    dot_lanes(&a, other).to_bits(),
                    "len {len}, {k}"
                );
            }
        }
        let short = [1.0f32, 2.0];
        let a = [1.0f32, 1.0, 1.0];
        assert_eq!(dot4(&a, [&short, &a, &a, &a])[0], dot(&a, &short));
    }

    #[test]
    fn normalised_has_unit_length_and_rejects_zero() {
        let v = normalised(&[3.0, 4.0]).unwrap();
        assert!((v[0] - 0.6).abs() < 1e-6 && (v[1] - 0.8).abs() < 1e-6);
        assert!(normalised(&[0.0, 0.0]).is_none());
    }

    #[test]
    fn calls_stay_within_the_token_budget() {
        let recorder = Recorder::default();
        let texts = ["aaaaaaaaaa", "bb", "cccccccccc", "dd", "eeeeeeeeee", "ff"];
        let shape = SubBatch {
            texts: 8,
            tokens: 20,
        };
        embed_bucketed(&recorder, &texts, shape).unwrap();
        let calls = recorder.calls();
        // The short ones fit together; the long ones go two by two, then one.
        assert_eq!(
            calls,
            [
                vec!["bb", "dd", "ff"],
                vec!["aaaaaaaaaa", "cccccccccc"],
                vec!["eeeeeeeeee"]
            ]
        );
    }

    #[test]
    fn bucketing_sorts_by_length_and_restores_order() {
        let recorder = Recorder::default();
        let texts = [
            "a much longer text than the others",
            "short",
            "a medium text here",
            "tiny",
        ];
        let shape = SubBatch {
            texts: 2,
            tokens: 1000,
        };
        let out = embed_bucketed(&recorder, &texts, shape).unwrap();
        let calls = recorder.calls();
        assert_eq!(
            calls,
            [
                vec!["tiny", "short"],
                vec!["a medium text here", "a much longer text than the others"]
            ]
        );
        let lengths: Vec<f32> = out.iter().map(|v| v[0]).collect();
        assert_eq!(
            lengths,
            texts.iter().map(|t| t.len() as f32).collect::<Vec<_>>()
        );
    }
}
