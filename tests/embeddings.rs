//! The real all-MiniLM-L6-v2 model through fastembed/ONNX Runtime: vectors,
//! batching, and the vector index on real vectors. Needs `make models`.

mod common;

use std::time::Duration;

use common::model;
use engram::embed::*;
use engram::index::{ExactIndex, IndexConfig, UserIndex, VectorIndex};

fn embed(texts: &[&str]) -> Vec<Vec<f32>> {
    embed_bucketed(model().as_ref(), texts, SubBatch::default()).unwrap()
}

#[test]
fn embeddings_are_unit_length_and_384_dimensional() {
    let vectors = embed(&[
        "The user prefers tea.",
        "Project atlas uses PostgreSQL for storage.",
        "ok",
    ]);
    for vector in vectors {
        assert_eq!(vector.len(), EMBEDDING_DIM);
        let norm: f32 = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-4, "{norm}");
    }
}

#[test]
fn identical_text_gives_identical_vectors_across_batch_sizes() {
    let target = "Ran the full test suite before committing the pagination change.";
    let alone = embed(&[target]).remove(0);
    let mut crowd: Vec<&str> = vec![
        "short",
        "A considerably longer sentence that forces padding in whatever batch it lands in, on purpose.",
        "medium length sentence here",
    ];
    crowd.push(target);
    for texts in [1, 2, 4, 32] {
        let shape = SubBatch {
            texts,
            tokens: 4096,
        };
        let vectors = embed_bucketed(model().as_ref(), &crowd, shape).unwrap();
        let worst = vectors[3]
            .iter()
            .zip(&alone)
            .map(|(a, b)| (a - b).abs())
            .fold(0f32, f32::max);
        assert!(worst < 1e-4, "sub-batch {texts}: max difference {worst}");
    }
}

#[test]
fn paraphrases_score_clearly_above_unrelated_pairs() {
    let paraphrases = [
        ("The API uses REST.", "The API is RESTful."),
        (
            "The user prefers dark mode in every tool.",
            "The user likes dark mode in all tools.",
        ),
        (
            "Project atlas is deployed with GitHub Actions.",
            "GitHub Actions builds and deploys project atlas.",
        ),
        (
            "Ran the tests before committing the change.",
            "Executed the test suite prior to the commit.",
        ),
    ];
    let unrelated = [
        ("The API uses REST.", "The user lives in Lisbon."),
        (
            "The user prefers dark mode in every tool.",
            "Rotate the database password every quarter.",
        ),
        (
            "Project atlas is deployed with GitHub Actions.",
            "Ate a sandwich for lunch.",
        ),
        (
            "Ran the tests before committing the change.",
            "The cat sleeps on the sofa.",
        ),
    ];
    let score = |pairs: &[(&str, &str)]| -> Vec<f32> {
        pairs
            .iter()
            .map(|(a, b)| {
                let v = embed(&[a, b]);
                dot(&v[0], &v[1])
            })
            .collect()
    };
    let close = score(&paraphrases);
    let far = score(&unrelated);
    for ((a, b), s) in paraphrases.iter().zip(&close) {
        println!("paraphrase {s:.3}  {a} | {b}");
    }
    for ((a, b), s) in unrelated.iter().zip(&far) {
        println!("unrelated  {s:.3}  {a} | {b}");
    }
    let lowest_close = close.iter().copied().fold(f32::INFINITY, f32::min);
    let highest_far = far.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    assert!(
        lowest_close > highest_far + 0.2,
        "{lowest_close} vs {highest_far}"
    );
}

#[test]
fn the_async_batcher_returns_each_caller_its_own_vector() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let batcher = EmbedBatcher::spawn(
            model(),
            BatcherConfig {
                max_batch: 8,
                max_wait: Duration::from_millis(5),
                sub_batch: SubBatch {
                    texts: 4,
                    tokens: 4096,
                },
                bucketing: true,
            },
        )
        .unwrap();
        let texts: Vec<String> = (0..20)
            .map(|i| format!("Memory number {i} about topic {}", i % 3))
            .collect();
        let handles: Vec<_> = texts
            .iter()
            .cloned()
            .map(|text| {
                let batcher = batcher.clone();
                tokio::spawn(async move { batcher.embed(text).await })
            })
            .collect();
        let mut concurrent = Vec::new();
        for handle in handles {
            concurrent.push(handle.await.unwrap().unwrap());
        }
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let direct = embed(&refs);
        for (a, b) in concurrent.iter().zip(&direct) {
            assert!(dot(a, b) > 0.9999);
        }
        // Half of them handed over ahead, as a partition worker does while
        // its batch gathers: the flush gets the same vectors.
        for text in texts.iter().step_by(2) {
            batcher.prefetch(text);
        }
        let all = batcher.embed_all(texts.clone()).await.unwrap();
        assert_eq!(all.len(), texts.len());
        for (a, b) in all.iter().zip(&direct) {
            assert!(dot(a, b) > 0.9999);
        }
        assert_eq!(batcher.unclaimed(), 0);
    });
}

/// 10,000 varied real sentences from combinations of agent-memory phrases.
fn sentences(count: usize) -> Vec<String> {
    let subjects = [
        "The user",
        "The team",
        "Project atlas",
        "The billing service",
        "Our CI pipeline",
        "The mobile app",
        "The search frontend",
        "The data platform",
        "The on-call engineer",
        "The staging cluster",
        "The release manager",
        "The analytics job",
        "The payments API",
        "The design system",
        "The ML model",
        "The nightly backup",
        "The customer portal",
        "The ingestion worker",
        "The security team",
        "The database",
    ];
    let predicates = [
        "prefers",
        "depends on",
        "was migrated to",
        "stopped using",
        "needs",
        "is blocked by",
        "documents",
        "runs on",
        "was slowed down by",
        "should avoid",
        "recently adopted",
        "is evaluating",
        "replaced",
        "keeps failing because of",
        "is owned by the same people as",
        "reports errors from",
        "caches",
        "was rolled back after",
        "shares credentials with",
        "is monitored through",
    ];
    let objects = [
        "PostgreSQL",
        "Kafka topics",
        "a Redis cache",
        "GitHub Actions",
        "Kubernetes",
        "feature flags",
        "weekly releases",
        "dark mode",
        "the Rust toolchain",
        "TypeScript",
        "a Terraform module",
        "the audit log",
        "rate limiting",
        "OpenTelemetry traces",
        "pgvector",
        "S3 buckets",
        "a cron job",
        "Python notebooks",
        "the retry policy",
        "blue-green deployments",
        "the Grafana dashboard",
        "short commit messages",
        "integration tests",
        "the Pinecone index",
        "Helm charts",
    ];
    let tails = [
        "",
        " since last week",
        " for the European region",
        " according to the runbook",
    ];
    let mut out = Vec::with_capacity(count);
    'outer: for tail in tails {
        for object in objects {
            for predicate in predicates {
                for subject in subjects {
                    out.push(format!("{subject} {predicate} {object}{tail}."));
                    if out.len() == count {
                        break 'outer;
                    }
                }
            }
        }
    }
    out
}

#[test]
fn ann_index_finds_the_exact_nearest_neighbour_for_99_percent_of_queries() {
    let texts = sentences(10_000);
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let vectors = embed_bucketed(model().as_ref(), &refs, SubBatch::default()).unwrap();
    let mut exact = ExactIndex::new(EMBEDDING_DIM);
    let config = IndexConfig {
        // One graph build over 9,001 rows; the last rows stay in the exact delta.
        ann_threshold: 9000,
        ..IndexConfig::default()
    };
    let mut ann = UserIndex::new(EMBEDDING_DIM, &config);
    // Queries are held out of the index: every 20th sentence.
    let mut queries = Vec::new();
    for (i, vector) in vectors.iter().enumerate() {
        if i % 20 == 0 {
            queries.push(vector);
        } else {
            exact.add(i.to_string(), vector);
            ann.add(i.to_string(), vector);
        }
    }
    assert!(ann.is_approximate());
    let hits = queries
        .iter()
        .filter(|query| exact.search(query, 1)[0].id == ann.search(query, 1)[0].id)
        .count();
    let recall = hits as f64 / queries.len() as f64;
    println!(
        "ANN recall@1 on {} real-model vectors: {recall:.4} ({hits}/{})",
        exact.len(),
        queries.len()
    );
    assert!(recall >= 0.99, "recall {recall}");
}
