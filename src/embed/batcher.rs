//! The async micro-batcher in front of an [`Embedder`]: callers ask for one
//! text at a time; the batcher gathers up to `max_batch` texts or waits at
//! most `max_wait`, then runs one length-bucketed model call on a thread of
//! its own ([`ModelThread`]). The request queue is bounded, so producers feel
//! back-pressure instead of growing memory.
//!
//! A partition worker hands each new text over as soon as it takes the
//! record ([`EmbedBatcher::prefetch`]), while its batch still gathers for
//! the flush interval: the model works during the gathering instead of
//! idling through it, and the flush's [`EmbedBatcher::embed_all`] claims
//! the vector, computed or under way.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

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
type Response = oneshot::Receiver<Result<Vec<f32>, EmbedError>>;

/// Handle to a running batcher; cheap to clone.
#[derive(Clone)]
pub struct EmbedBatcher {
    requests: mpsc::Sender<(String, Reply)>,
    prefetched: Arc<Prefetched>,
}

/// Vectors asked for ahead of their flush and not claimed yet, by text.
///
/// A record replayed after a crash, refused (an erased user's) or revoked
/// before its flush never claims its vector. Such vectors fill the limit,
/// which stops prefetching, until they expire: that bounds the model's time
/// spent on them (a replay of a topic's creations), and no text stays in
/// memory longer than about twice `max_age`.
struct Prefetched {
    pending: Mutex<HashMap<String, (Instant, Response)>>,
    /// How many may wait to be claimed: enough for the texts of the
    /// batches gathering at once; past it, texts wait for their flush.
    limit: usize,
    /// How long an unclaimed vector is kept; a flush comes well within it.
    max_age: Duration,
}

/// [`Prefetched::max_age`] in service.
const UNCLAIMED_FOR: Duration = Duration::from_secs(60);

impl Prefetched {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (Instant, Response)>> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Drops the vectors unclaimed for `max_age`.
    fn expire(&self) {
        let now = Instant::now();
        self.lock()
            .retain(|_, (asked, _)| now.duration_since(*asked) < self.max_age);
    }
}

impl EmbedBatcher {
    /// Starts the batching task on the current tokio runtime, and the
    /// thread its model calls run on.
    pub fn spawn(embedder: Arc<dyn Embedder>, config: BatcherConfig) -> std::io::Result<Self> {
        Self::spawn_keeping(embedder, config, UNCLAIMED_FOR)
    }

    /// [`Self::spawn`], keeping unclaimed vectors for `max_age`.
    fn spawn_keeping(
        embedder: Arc<dyn Embedder>,
        config: BatcherConfig,
        max_age: Duration,
    ) -> std::io::Result<Self> {
        let max_batch = config.max_batch.max(1);
        let (requests, receiver) = mpsc::channel(max_batch * 2);
        let prefetched = Arc::new(Prefetched {
            pending: Mutex::new(HashMap::new()),
            limit: max_batch * 8,
            max_age,
        });
        let model_thread = ModelThread::start()?;
        tokio::spawn(run(
            embedder,
            config,
            max_batch,
            receiver,
            Arc::clone(&prefetched),
            model_thread,
        ));
        Ok(Self {
            requests,
            prefetched,
        })
    }

    /// Starts embedding `text` now, for a later [`Self::embed_all`] to
    /// claim. Never waits: when the queue or the unclaimed vectors are at
    /// their bound, the text is left to its flush.
    pub fn prefetch(&self, text: &str) {
        let mut pending = self.prefetched.lock();
        if pending.contains_key(text) || pending.len() >= self.prefetched.limit {
            return;
        }
        let (reply, response) = oneshot::channel();
        if self.requests.try_send((text.to_owned(), reply)).is_ok() {
            pending.insert(text.to_owned(), (Instant::now(), response));
        }
    }

    /// How many prefetched vectors wait to be claimed.
    pub fn unclaimed(&self) -> usize {
        self.prefetched.lock().len()
    }

    /// The embedding of one text.
    pub async fn embed(&self, text: String) -> Result<Vec<f32>, EmbedError> {
        self.embed_all(vec![text])
            .await?
            .pop()
            .ok_or(EmbedError::Closed)
    }

    /// The embeddings of many texts, in order (batched with everyone
    /// else's); a text [prefetched](Self::prefetch) is not embedded again.
    pub async fn embed_all(&self, texts: Vec<String>) -> Result<Vec<Vec<f32>>, EmbedError> {
        let claimed: Vec<Option<Response>> = {
            let mut prefetched = self.prefetched.lock();
            texts
                .iter()
                .map(|text| prefetched.remove(text).map(|(_, response)| response))
                .collect()
        };
        let mut pending = Vec::with_capacity(texts.len());
        for (text, claimed) in texts.into_iter().zip(claimed) {
            if let Some(response) = claimed {
                pending.push(response);
                continue;
            }
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

/// The one thread a batcher's model calls run on. ONNX Runtime takes a
/// call's buffers from the C allocator on the calling thread. On tokio's
/// blocking pool, consecutive calls landed on different threads, each with
/// an allocator arena of its own, and calls kept faulting in fresh pages:
/// a median of 98,000 page faults per 2,000 texts in `make bench-kafka`'s
/// creation rounds, 58,000 on one thread (the raw model: about 10,000).
struct ModelThread {
    jobs: std::sync::mpsc::Sender<Box<dyn FnOnce() + Send>>,
}

impl ModelThread {
    fn start() -> std::io::Result<Self> {
        let (jobs, next) = std::sync::mpsc::channel::<Box<dyn FnOnce() + Send>>();
        std::thread::Builder::new()
            .name("engram-model".into())
            .spawn(move || {
                // Ends when the batcher's task does (its sender drops).
                while let Ok(job) = next.recv() {
                    job();
                }
            })?;
        Ok(Self { jobs })
    }

    /// Runs `work` on the thread; a panic in it is an inference error, and
    /// the thread goes on with the next call.
    async fn call(
        &self,
        work: impl FnOnce() -> Result<Vec<Vec<f32>>, EmbedError> + Send + 'static,
    ) -> Result<Vec<Vec<f32>>, EmbedError> {
        let (done, result) = oneshot::channel();
        let job = move || {
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work))
                .unwrap_or_else(|_| Err(EmbedError::inference("the model's call panicked")));
            let _ = done.send(outcome);
        };
        self.jobs
            .send(Box::new(job))
            .map_err(|_| EmbedError::Closed)?;
        result.await.map_err(|_| EmbedError::Closed)?
    }
}

async fn run(
    embedder: Arc<dyn Embedder>,
    config: BatcherConfig,
    max_batch: usize,
    mut receiver: mpsc::Receiver<(String, Reply)>,
    prefetched: Arc<Prefetched>,
    model_thread: ModelThread,
) {
    let mut expired = Instant::now();
    loop {
        // Unclaimed vectors expire while texts come, and while none do.
        if expired.elapsed() >= prefetched.max_age {
            prefetched.expire();
            expired = Instant::now();
        }
        let first = match tokio::time::timeout(prefetched.max_age, receiver.recv()).await {
            Ok(Some(first)) => first,
            Ok(None) => break,
            Err(_) => continue,
        };
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
        let result = model_thread
            .call(move || {
                let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
                if bucketing {
                    embed_bucketed(model.as_ref(), &refs, sub_batch)
                } else {
                    model.embed(&refs, sub_batch.texts)
                }
            })
            .await;
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

#[cfg(test)]
mod tests {
    use std::sync::Condvar;

    use super::*;
    use crate::embed::recorder::Recorder;

    fn config(max_batch: usize) -> BatcherConfig {
        BatcherConfig {
            max_batch,
            max_wait: Duration::from_millis(5),
            sub_batch: SubBatch {
                texts: max_batch,
                tokens: 1 << 20,
            },
            bucketing: true,
        }
    }

    fn texts(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    /// The model, held at its first call until the test opens it.
    #[derive(Default)]
    struct Held {
        model: Recorder,
        open: Mutex<bool>,
        opened: Condvar,
    }

    impl Held {
        fn open(&self) {
            *self.open.lock().unwrap() = true;
            self.opened.notify_all();
        }
    }

    impl Embedder for Held {
        fn dimension(&self) -> usize {
            1
        }
        fn embed(&self, texts: &[&str], sub_batch: usize) -> Result<Vec<Vec<f32>>, EmbedError> {
            let open = self.open.lock().unwrap();
            drop(self.opened.wait_while(open, |open| !*open).unwrap());
            self.model.embed(texts, sub_batch)
        }
    }

    #[tokio::test]
    async fn a_prefetched_text_goes_to_the_model_once_and_its_flush_claims_it() {
        let model = Arc::new(Held::default());
        let batcher =
            EmbedBatcher::spawn(Arc::clone(&model) as Arc<dyn Embedder>, config(4)).unwrap();
        batcher.prefetch("a memory");
        batcher.prefetch("a memory");
        assert_eq!(batcher.unclaimed(), 1, "one request per text");
        model.open();
        let vectors = batcher
            .embed_all(texts(&["another", "a memory"]))
            .await
            .unwrap();
        assert_eq!(vectors, vec![vec![7.0], vec![8.0]], "in the flush's order");
        assert_eq!(batcher.unclaimed(), 0);
        let mut seen = model.model.texts();
        seen.sort();
        assert_eq!(seen, texts(&["a memory", "another"]));
    }

    /// Panics on the text "boom".
    struct Fragile(Recorder);

    impl Embedder for Fragile {
        fn dimension(&self) -> usize {
            1
        }
        fn embed(&self, texts: &[&str], sub_batch: usize) -> Result<Vec<Vec<f32>>, EmbedError> {
            assert!(!texts.contains(&"boom"), "the model broke");
            self.0.embed(texts, sub_batch)
        }
    }

    #[tokio::test]
    async fn a_call_that_panics_fails_its_texts_and_the_next_call_runs() {
        let batcher =
            EmbedBatcher::spawn(Arc::new(Fragile(Recorder::default())), config(1)).unwrap();
        let failed = batcher.embed_all(texts(&["boom"])).await;
        assert!(
            matches!(failed, Err(EmbedError::Inference(_))),
            "{failed:?}"
        );
        let vectors = batcher.embed_all(texts(&["fine"])).await.unwrap();
        assert_eq!(vectors, vec![vec![4.0]]);
    }

    #[tokio::test]
    async fn an_unclaimed_vector_expires_even_when_no_text_comes() {
        let model = Arc::new(Recorder::default());
        let max_age = Duration::from_millis(50);
        let batcher = EmbedBatcher::spawn_keeping(
            Arc::clone(&model) as Arc<dyn Embedder>,
            config(4),
            max_age,
        )
        .unwrap();
        batcher.prefetch("a record replayed, never flushed");
        assert_eq!(batcher.unclaimed(), 1);
        let waited = Instant::now();
        while batcher.unclaimed() > 0 && waited.elapsed() < Duration::from_secs(10) {
            tokio::time::sleep(max_age).await;
        }
        assert_eq!(batcher.unclaimed(), 0, "dropped after its age");
        assert_eq!(model.texts().len(), 1);
    }

    #[tokio::test]
    async fn prefetching_never_waits_and_what_it_left_out_is_embedded_at_the_flush() {
        let model = Arc::new(Held::default());
        let batcher =
            EmbedBatcher::spawn(Arc::clone(&model) as Arc<dyn Embedder>, config(2)).unwrap();
        let many: Vec<String> = (0..40).map(|i| format!("text {i:02}")).collect();
        // Nothing takes from the queue while this loop runs (one thread,
        // and the model held): it fills at twice the batch, and the rest
        // must not wait for room.
        for text in &many {
            batcher.prefetch(text);
        }
        let left_out = many.len() - batcher.unclaimed();
        assert!(left_out > 0, "the queue is bounded");
        model.open();
        let vectors = batcher.embed_all(many.clone()).await.unwrap();
        assert_eq!(vectors, vec![vec![7.0]; many.len()]);
        let mut seen = model.model.texts();
        seen.sort();
        assert_eq!(seen, many, "each text embedded once");
        assert_eq!(batcher.unclaimed(), 0);
    }
}
