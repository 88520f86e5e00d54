# docgraph: every target works offline on a fresh machine with only Go installed.
GO      ?= go
BIN     := bin
STORE   ?= sqlite://./.docgraph/graph.db
FUZZTIME ?= 60s

.PHONY: all build test test-race fuzz fuzz-ci bench eval demo lint clean

all: build

build:
	$(GO) build -o $(BIN)/ ./cmd/...

test:
	$(GO) test ./...

test-race:
	$(GO) test -race ./...

# Short fuzzing runs happen in CI (fuzz-ci); this one digs longer.
fuzz:
	$(GO) test ./loader -run '^$$' -fuzz FuzzLoadPDF -fuzztime $(FUZZTIME)
	$(GO) test ./splitter -run '^$$' -fuzz FuzzSplit -fuzztime $(FUZZTIME)

fuzz-ci:
	$(MAKE) fuzz FUZZTIME=10s

bench:
	@mkdir -p bench
	$(GO) test ./... -run '^$$' -bench . -benchmem -benchtime 1x -timeout 60m | tee bench/latest.txt

# Offline passage-retrieval benchmark with the BM25 baseline in the same run.
# The first run ingests the corpora (about an hour for 2wiki); later runs reuse .docgraph/eval.
eval:
	$(GO) run ./cmd/query eval --dataset ../shared/data/2wiki --dataset ../shared/data/musique --mode all --baseline bm25 --store-dir .docgraph/eval

demo: build
	$(BIN)/ingest --store $(STORE) testdata/corpus
	$(BIN)/query --store $(STORE) --top-k 3 "Which programming language did the co-creator of Unix design at Google?"

lint:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1)
	$(GO) vet ./...

clean:
	rm -rf $(BIN) .docgraph
