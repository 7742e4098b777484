# engram — the two commands a new user needs are `make run` and `make test`.

CARGO   ?= cargo
OUT     ?= out
SAMPLE  ?= examples/events.jsonl
ENGRAM  := ./target/release/engram

.PHONY: all build run test fmt lint unit sample clean

all: build

build:
	$(CARGO) build --release

## Runs engram in embedded mode on the sample data, then replays the same input
## into the same state to show that nothing changes the second time.
run: build
	@rm -rf $(OUT)/state && mkdir -p $(OUT)
	@echo "== engram run on $(SAMPLE) (state in $(OUT)/state)"
	@ENGRAM_LOG_LEVEL=warn $(ENGRAM) run --input $(SAMPLE) --output $(OUT)/outputs.jsonl --state $(OUT)/state
	@echo
	@echo "== output events by type ($(OUT)/outputs.jsonl)"
	@grep -o '"type":"[a-z.]*"' $(OUT)/outputs.jsonl | sort | uniq -c
	@$(ENGRAM) dump --state $(OUT)/state > $(OUT)/state-first.json
	@echo
	@echo "== replaying the same input into the same state"
	@ENGRAM_LOG_LEVEL=warn $(ENGRAM) run --input $(SAMPLE) --output $(OUT)/replay-outputs.jsonl --state $(OUT)/state 2>&1 | grep -E "applied|already"
	@$(ENGRAM) dump --state $(OUT)/state > $(OUT)/state-second.json
	@cmp -s $(OUT)/state-first.json $(OUT)/state-second.json \
		&& echo "replay: state identical ($$(wc -c < $(OUT)/state-first.json) bytes of dump)" \
		|| (echo "replay: STATE CHANGED"; exit 1)

## Formatting, lints and the whole test suite.
test: fmt lint unit

fmt:
	$(CARGO) fmt --all -- --check

lint:
	$(CARGO) clippy --all-targets -- -D warnings

unit:
	$(CARGO) test --all-targets

## Regenerates the sample data set (deterministic).
sample:
	python3 examples/generate.py > $(SAMPLE)

clean:
	rm -rf $(OUT) engram-data
