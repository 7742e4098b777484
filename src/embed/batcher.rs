//! The async micro-batcher in front of an [`Embedder`]: callers ask for one
//! text at a time; the batcher gathers up to `max_batch` texts or waits at
//! most `max_wait`, then runs one length-bucketed model call on the blocking
//! thread pool. The request queue is bounded, so producers feel back-pressure
//! instead of growing memory.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};

use super::{EmbedError, Embedder, SubBatch, embed_bucketed};

#[derive(Debug, Clone, Copy)]
pub struct BatcherConfig {
    pub max_batch: usize,
    pub max_wait: Duration,
    pub sub_batch: SubBatch,
    /// Sort each batch by token length and cut it within the token budget
    /// before padding (off only to measure what it buys).
    pub bucketing: bool,
}

type Reply = oneshot::Sender<Result<Vec<f32>, EmbedError>>;

/// Handle to a running batcher; cheap to clone.
#[derive(Clone)]
pub struct EmbedBatcher {
    requests: mpsc::Sender<(String, Reply)>,
}

impl EmbedBatcher {
    /// Starts the batching task on the current tokio runtime.
    pub fn spawn(embedder: Arc<dyn Embedder>, config: BatcherConfig) -> Self {
        let max_batch = config.max_batch.max(1);
        let (requests, receiver) = mpsc::channel(max_batch * 2);
        tokio::spawn(run(embedder, config, max_batch, receiver));
        Self { requests }
    }

    /// The embedding of one text.
    pub async fn embed(&self, text: String) -> Result<Vec<f32>, EmbedError> {
        let (reply, response) = oneshot::channel();
        self.requests
            .send((text, reply))
            .await
            .map_err(|_| EmbedError::Closed)?;
        response.await.map_err(|_| EmbedError::Closed)?
    }

    /// The embeddings of many texts, in order (batched with everyone else's).
    pub async fn embed_all(&self, texts: Vec<String>) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut pending = Vec::with_capacity(texts.len());
        for text in texts {
            let (reply, response) = oneshot::channel();
            self.requests
                .send((text, reply))
                .await
                .map_err(|_| EmbedError::Closed)?;
            pending.push(response);
        }
        let mut out = Vec::with_capacity(pending.len());
        for response in pending {
            out.push(response.await.map_err(|_| EmbedError::Closed)??);
        }
        Ok(out)
    }
}

async fn run(
    embedder: Arc<dyn Embedder>,
    config: BatcherConfig,
    max_batch: usize,
    mut receiver: mpsc::Receiver<(String, Reply)>,
) {
    while let Some(first) = receiver.recv().await {
        let mut batch = vec![first];
        let deadline = tokio::time::Instant::now() + config.max_wait;
        while batch.len() < max_batch {
            match tokio::time::timeout_at(deadline, receiver.recv()).await {
                Ok(Some(request)) => batch.push(request),
                Ok(None) | Err(_) => break,
            }
        }
        let (texts, replies): (Vec<String>, Vec<Reply>) = batch.into_iter().unzip();
        let model = Arc::clone(&embedder);
        let BatcherConfig {
            sub_batch,
            bucketing,
            ..
        } = config;
        let result = tokio::task::spawn_blocking(move || {
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            if bucketing {
                embed_bucketed(model.as_ref(), &refs, sub_batch)
            } else {
                model.embed(&refs, sub_batch.texts)
            }
        })
        .await
        .unwrap_or_else(|e| Err(EmbedError::inference(e)));
        match result {
            Ok(vectors) => {
                for (reply, vector) in replies.into_iter().zip(vectors) {
                    let _ = reply.send(Ok(vector));
                }
            }
            Err(error) => {
                for reply in replies {
                    let _ = reply.send(Err(error.clone()));
                }
            }
        }
    }
}
