//! `make bench-embed`: embedding throughput on the same 5,000 varied
//! sentences, each variant in a fresh process so peak RSS is its own:
//!
//! * raw: ONNX Runtime forward passes through `ort` at a fixed batch size, in
//!   input order, padded to each batch's longest text (what a caller gets
//!   without engram's batcher);
//! * bucketed: engram's async micro-batcher, length-bucketed;
//! * unbucketed: the same batcher with bucketing off.
//!
//! Sentences/s, CPU seconds (user + system) and peak RSS come from the child
//! process; the ratio bucketed/raw is the figure the batcher must earn.

mod common;

use std::process::Command;
use std::sync::Arc;
use std::time::Instant;

use engram::embed::{BatcherConfig, EmbedBatcher, Embedder, LocalEmbedder};

const SENTENCES: usize = 5_000;
const BATCH: usize = 32;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    match args
        .iter()
        .position(|a| a == "--mode")
        .and_then(|i| args.get(i + 1))
    {
        Some(mode) => child(mode),
        None if common::started_by_cargo_bench() => parent(),
        None => {}
    }
}

/// 5,000 texts of varied length, picked by a fixed-seed generator from the
/// sample data set's memories: mostly one memory, one in four two joined (a
/// longer note), one in twenty a long note of five.
fn sentences() -> Vec<String> {
    let sample = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/events.jsonl"
    ))
    .unwrap_or_else(|e| panic!("examples/events.jsonl: {e}"));
    let contents: Vec<String> = sample
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|event| event["type"] == "memory.created")
        .filter_map(|event| event["content"].as_str().map(str::to_owned))
        .collect();
    assert!(
        !contents.is_empty(),
        "no memory.created events in the sample"
    );
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move |bound: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % bound as u64) as usize
    };
    (0..SENTENCES)
        .map(|_| {
            let parts = match next(20) {
                0 => 5,
                1..=5 => 2,
                _ => 1,
            };
            (0..parts)
                .map(|_| contents[next(contents.len())].as_str())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

fn parent() {
    let exe = std::env::current_exe().expect("own executable");
    let texts = sentences();
    let chars: usize = texts.iter().map(String::len).sum();
    println!(
        "embedding benchmark: {SENTENCES} sentences (mean {} chars), batch {BATCH}, {} cores",
        chars / SENTENCES,
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    println!();
    println!(
        "{:<34}{:>14}{:>12}{:>14}",
        "variant", "sentences/s", "CPU s", "peak RSS MiB"
    );
    let mut rates = Vec::new();
    for (mode, label) in [
        ("raw", "(a) raw ort, fixed batch"),
        ("bucketed", "(b) engram batcher, bucketed"),
        ("unbucketed", "(c) engram batcher, unbucketed"),
    ] {
        let output = Command::new(&exe)
            .args(["--mode", mode])
            .output()
            .expect("run the benchmark child");
        let stdout = String::from_utf8_lossy(&output.stdout);
        if !output.status.success() {
            panic!(
                "{mode} failed: {}{}",
                stdout,
                String::from_utf8_lossy(&output.stderr)
            );
        }
        let fields: Vec<f64> = stdout
            .split_whitespace()
            .filter_map(|f| f.parse().ok())
            .collect();
        let [rate, cpu, rss] = fields[..] else {
            panic!("{mode}: unexpected output {stdout}");
        };
        println!("{label:<34}{rate:>14.1}{cpu:>12.1}{rss:>14.0}");
        rates.push(rate);
    }
    println!();
    println!("ratio b/a: {:.2} (target ≥ 1.0)", rates[1] / rates[0]);
    println!(
        "ratio b/c: {:.2} (what bucketing buys)",
        rates[1] / rates[2]
    );
}

/// Runs one variant and prints `sentences/s cpu_seconds peak_rss_mib`.
fn child(mode: &str) {
    let texts = sentences();
    let started = Instant::now();
    let cpu_before = common::cpu_seconds("self");
    let count = match mode {
        "raw" => raw(&texts),
        "bucketed" => batched(&texts, true),
        "unbucketed" => batched(&texts, false),
        other => panic!("unknown mode {other}"),
    };
    assert_eq!(count, texts.len());
    let elapsed = started.elapsed().as_secs_f64();
    println!(
        "{} {} {}",
        count as f64 / elapsed,
        common::cpu_seconds("self") - cpu_before,
        common::peak_rss_mib()
    );
}

fn batched(texts: &[String], bucketing: bool) -> usize {
    let config = common::embedding_config();
    let embedder: Arc<dyn Embedder> =
        Arc::new(LocalEmbedder::load(&config).expect("load the model (make models)"));
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .max_blocking_threads(cores)
        .enable_all()
        .build()
        .expect("tokio runtime");
    runtime.block_on(async {
        let batcher = EmbedBatcher::spawn(
            embedder,
            BatcherConfig {
                max_batch: config.max_batch,
                max_wait: config.max_wait,
                sub_batch: config.sub_batch(),
                bucketing,
            },
        )
        .expect("the model's thread");
        // Callers submit in chunks, as a stream would; outputs are dropped as
        // they arrive so memory stays bounded.
        let mut done = 0;
        for chunk in texts.chunks(config.max_batch) {
            let vectors = batcher.embed_all(chunk.to_vec()).await.expect("embed");
            done += vectors.len();
        }
        done
    })
}

fn raw(texts: &[String]) -> usize {
    use ort::session::Session;
    use ort::session::builder::GraphOptimizationLevel;
    use ort::value::Tensor;
    use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

    let config = common::embedding_config();
    let environment = ort::init_from(&config.runtime_library)
        .expect("load ONNX Runtime (make models)")
        .build()
        .expect("ONNX Runtime environment");
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut session = Session::builder(&environment)
        .expect("session builder")
        .with_optimization_level(GraphOptimizationLevel::Level3)
        .expect("optimisation level")
        .with_intra_threads(cores)
        .expect("threads")
        // The same session settings as the embedder, so only batching differs.
        .with_execution_providers([ort::ep::CPU::default().with_arena_allocator(false).build()])
        .expect("CPU execution provider")
        .commit_from_file(config.model_dir.join("model.onnx"))
        .expect("load model.onnx");
    let mut tokenizer =
        Tokenizer::from_file(config.model_dir.join("tokenizer.json")).expect("tokenizer.json");
    tokenizer.with_padding(Some(PaddingParams {
        strategy: PaddingStrategy::BatchLongest,
        ..PaddingParams::default()
    }));
    tokenizer
        .with_truncation(Some(TruncationParams {
            max_length: config.max_length,
            ..TruncationParams::default()
        }))
        .expect("truncation");
    let mut done = 0;
    for chunk in texts.chunks(BATCH) {
        let encodings = tokenizer
            .encode_batch(chunk.to_vec(), true)
            .expect("tokenize");
        let rows = encodings.len();
        let width = encodings[0].len();
        let flat = |get: fn(&tokenizers::Encoding) -> &[u32]| -> Vec<i64> {
            encodings
                .iter()
                .flat_map(|e| get(e).iter().map(|&x| i64::from(x)))
                .collect()
        };
        let mask = flat(|e| e.get_attention_mask());
        let shape = [rows as i64, width as i64];
        let outputs = session
            .run(ort::inputs![
                "input_ids" => Tensor::from_array((shape, flat(|e| e.get_ids()))).expect("tensor"),
                "attention_mask" => Tensor::from_array((shape, mask.clone())).expect("tensor"),
                "token_type_ids" => Tensor::from_array((shape, flat(|e| e.get_type_ids()))).expect("tensor"),
            ])
            .expect("forward pass");
        let (_, hidden) = outputs["last_hidden_state"]
            .try_extract_tensor::<f32>()
            .expect("last_hidden_state");
        // Mean pooling over real tokens, as the embedder does.
        let dim = hidden.len() / (rows * width);
        for row in 0..rows {
            let mut pooled = vec![0f32; dim];
            let mut tokens = 0f32;
            for t in 0..width {
                if mask[row * width + t] == 1 {
                    tokens += 1.0;
                    let offset = (row * width + t) * dim;
                    for (p, h) in pooled.iter_mut().zip(&hidden[offset..offset + dim]) {
                        *p += h;
                    }
                }
            }
            std::hint::black_box(pooled.iter().map(|p| p / tokens.max(1.0)).sum::<f32>());
        }
        done += rows;
    }
    done
}
