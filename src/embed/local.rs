//! The local embedder: all-MiniLM-L6-v2 through fastembed on ONNX Runtime,
//! loaded from files on disk (nothing is downloaded at run time).

use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use fastembed::{
    InitOptionsUserDefined, Pooling, QuantizationMode, TextEmbedding, TokenizerFiles,
    UserDefinedEmbeddingModel,
};
use serde::{Deserialize, Serialize};

use super::{EMBEDDING_DIM, EmbedError, Embedder, SubBatch};
use crate::error::Cause;

/// Files a model directory must hold.
pub const MODEL_FILES: [&str; 5] = [
    "model.onnx",
    "tokenizer.json",
    "config.json",
    "special_tokens_map.json",
    "tokenizer_config.json",
];

/// Where the model and the runtime are, and how to batch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EmbeddingConfig {
    /// Compute embeddings locally; when false, only platform-supplied
    /// embeddings are used.
    pub enabled: bool,
    /// Directory with an all-MiniLM-L6-v2 ONNX export and its tokenizer files.
    pub model_dir: PathBuf,
    /// ONNX Runtime shared library (version 1.24 or newer).
    pub runtime_library: PathBuf,
    /// Tokens per text; longer texts are truncated.
    pub max_length: usize,
    /// Texts per padded model call.
    pub sub_batch: usize,
    /// Padded tokens (texts × longest) per model call; bounds peak memory.
    pub sub_batch_tokens: usize,
    /// Most texts the micro-batcher gathers before calling the model.
    pub max_batch: usize,
    /// Longest the micro-batcher waits to fill a batch.
    #[serde(with = "crate::duration")]
    pub max_wait: Duration,
    /// ONNX Runtime intra-op threads; 0 means one per core.
    pub threads: usize,
}

impl EmbeddingConfig {
    pub fn sub_batch(&self) -> SubBatch {
        SubBatch {
            texts: self.sub_batch,
            tokens: self.sub_batch_tokens,
        }
    }
}

impl Default for EmbeddingConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            model_dir: PathBuf::from(".cache/engram/models/all-MiniLM-L6-v2"),
            runtime_library: PathBuf::from(".cache/engram/onnxruntime/libonnxruntime.so"),
            max_length: 256,
            sub_batch: 32,
            sub_batch_tokens: 2048,
            max_batch: 256,
            max_wait: Duration::from_millis(10),
            threads: 0,
        }
    }
}

/// all-MiniLM-L6-v2 on ONNX Runtime. One session; ONNX Runtime spreads each
/// call over the configured threads, so calls are serialised.
pub struct LocalEmbedder {
    model: Mutex<TextEmbedding>,
}

/// ONNX Runtime can be loaded once per process; later loads must name the same library.
static RUNTIME: OnceLock<Result<PathBuf, EmbedError>> = OnceLock::new();

fn load_runtime(path: &Path) -> Result<(), EmbedError> {
    let runtime_error = |reason: String| EmbedError::Runtime {
        path: path.display().to_string(),
        reason,
    };
    let loaded = RUNTIME.get_or_init(|| {
        if !path.is_file() {
            return Err(runtime_error("no such file".to_owned()));
        }
        let absolute = path
            .canonicalize()
            .map_err(|e| runtime_error(e.to_string()))?;
        // Loading it ourselves first turns ort's panic on a missing or wrong
        // library into an error at start-up.
        let environment = ort::init_from(&absolute).map_err(|e| runtime_error(e.to_string()))?;
        // Sessions create the default environment themselves.
        drop(environment);
        Ok(absolute)
    });
    match loaded {
        Ok(_) => Ok(()),
        Err(error) => Err(error.clone()),
    }
}

fn read_model_file(dir: &Path, name: &str) -> Result<Vec<u8>, EmbedError> {
    let path = dir.join(name);
    std::fs::read(&path).map_err(|e| EmbedError::Model {
        path: path.display().to_string(),
        reason: e.to_string(),
    })
}

impl LocalEmbedder {
    pub fn load(config: &EmbeddingConfig) -> Result<Self, EmbedError> {
        load_runtime(&config.runtime_library)?;
        let dir = &config.model_dir;
        let tokenizer_files = TokenizerFiles {
            tokenizer_file: read_model_file(dir, "tokenizer.json")?,
            config_file: read_model_file(dir, "config.json")?,
            special_tokens_map_file: read_model_file(dir, "special_tokens_map.json")?,
            tokenizer_config_file: read_model_file(dir, "tokenizer_config.json")?,
        };
        let model =
            UserDefinedEmbeddingModel::new(read_model_file(dir, "model.onnx")?, tokenizer_files)
                .with_pooling(Pooling::Mean)
                .with_quantization(QuantizationMode::None);
        let mut options = InitOptionsUserDefined::new()
            .with_max_length(config.max_length)
            // ONNX Runtime's CPU arena keeps the largest padded batch it ever
            // saw (well over 1 GiB with long texts); plain allocation keeps
            // peak memory near the live tensors at no measurable speed cost.
            .with_execution_providers(vec![
                ort::ep::CPU::default().with_arena_allocator(false).build(),
            ]);
        if config.threads > 0 {
            options = options.with_intra_threads(config.threads);
        }
        let model = TextEmbedding::try_new_from_user_defined(model, options).map_err(|e| {
            EmbedError::Model {
                path: dir.display().to_string(),
                reason: e.to_string(),
            }
        })?;
        let embedder = Self {
            model: Mutex::new(model),
        };
        let probe = embedder.embed(&["dimension probe"], 1)?;
        let dimension = probe.first().map_or(0, Vec::len);
        if dimension != EMBEDDING_DIM {
            return Err(EmbedError::Model {
                path: dir.display().to_string(),
                reason: format!(
                    "the model produces {dimension}-dimensional vectors, not {EMBEDDING_DIM}"
                ),
            });
        }
        Ok(embedder)
    }

    fn model(&self) -> std::sync::MutexGuard<'_, TextEmbedding> {
        // A panic inside ONNX Runtime leaves no partial state in the session.
        self.model
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Embedder for LocalEmbedder {
    fn dimension(&self) -> usize {
        EMBEDDING_DIM
    }

    fn embed(&self, texts: &[&str], sub_batch: usize) -> Result<Vec<Vec<f32>>, EmbedError> {
        let vectors = self
            .model()
            .embed(texts, Some(sub_batch.max(1)))
            .map_err(|e| EmbedError::inference(Cause::from(e)))?;
        // Mean pooling does not normalise; cosine similarity wants unit vectors.
        vectors
            .into_iter()
            .map(|v| super::normalised(&v).ok_or_else(|| EmbedError::inference("zero vector")))
            .collect()
    }

    fn token_lengths(&self, texts: &[&str]) -> Vec<usize> {
        let model = self.model();
        texts
            .iter()
            .map(|text| {
                model
                    .tokenizer
                    .encode(*text, true)
                    .map_or(text.len() / 4 + 2, |encoding| encoding.len())
            })
            .collect()
    }
}

/// What `engram doctor` reports about the embedding setup.
#[derive(Debug, Clone, Serialize)]
pub struct ModelReport {
    pub runtime_library: String,
    pub runtime_version: Option<String>,
    pub model_dir: String,
    /// (file, sha256 or the problem)
    pub files: Vec<(String, Result<String, String>)>,
    pub dimension: Option<usize>,
    pub problems: Vec<String>,
}

/// Checks the configured runtime and model, loading them for real.
pub fn inspect_model(config: &EmbeddingConfig) -> ModelReport {
    let mut problems = Vec::new();
    let files: Vec<(String, Result<String, String>)> = MODEL_FILES
        .iter()
        .map(|name| {
            let path = config.model_dir.join(name);
            let digest = std::fs::read(&path)
                .map(|bytes| crate::text::sha256_hex(&bytes))
                .map_err(|e| e.to_string());
            if let Err(reason) = &digest {
                problems.push(format!("{}: {reason}", path.display()));
            }
            (name.to_string(), digest)
        })
        .collect();
    // The fetch script records the wheel's version beside the library.
    let runtime_version = config
        .runtime_library
        .parent()
        .and_then(|dir| std::fs::read_to_string(dir.join("VERSION")).ok())
        .map(|v| v.trim().to_owned());
    let dimension = match LocalEmbedder::load(config) {
        Ok(embedder) => embedder
            .embed(&["doctor"], 1)
            .ok()
            .and_then(|v| v.first().map(Vec::len)),
        Err(error) => {
            problems.push(error.to_string());
            None
        }
    };
    ModelReport {
        runtime_library: config.runtime_library.display().to_string(),
        runtime_version,
        model_dir: config.model_dir.display().to_string(),
        files,
        dimension,
        problems,
    }
}
