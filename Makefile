# docgraph: every target but cypher-lint and mcp-check works offline on a fresh machine with only Go installed.
GO      ?= go
BIN     := bin
STORE   ?= sqlite://./.docgraph/graph.db
FUZZTIME ?= 60s
# How long the fuzzer may shrink each new interesting input. Go's default,
# 60s, spent whole short runs of the zip formats' targets minimizing one
# input (FuzzLoadODF: 5 execs in 20s; 1906 with 2s).
FUZZMINIMIZE ?= 60s
NPM_CI  ?= npm ci --loglevel=error --no-audit --no-fund

.PHONY: all build test test-race fuzz fuzz-ci bench bench-scale eval demo lint cypher-lint mcp-check clean

all: build

build:
	$(GO) build -o $(BIN)/ ./cmd/...

test:
	$(GO) test ./...

test-race:
	$(GO) test -race ./...

# Short fuzzing runs happen in CI (fuzz-ci); this one digs longer.
fuzz:
	$(GO) test ./loader -run '^$$' -fuzz FuzzLoadPDF -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE)
	$(GO) test ./loader -run '^$$' -fuzz FuzzLoadDOCX -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE)
	$(GO) test ./loader -run '^$$' -fuzz FuzzLoadPPTX -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE)
	$(GO) test ./loader -run '^$$' -fuzz FuzzLoadODF -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE)
	$(GO) test ./loader -run '^$$' -fuzz FuzzLoadEPUB -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE)
	$(GO) test ./loader -run '^$$' -fuzz FuzzLoadHTML -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE)
	$(GO) test ./loader -run '^$$' -fuzz FuzzLoadGzip -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE)
	$(GO) test ./loader -run '^$$' -fuzz FuzzLoadLaTeX -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE)
	$(GO) test ./loader -run '^$$' -fuzz FuzzLoadUnknownName -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE)
	$(GO) test ./splitter -run '^$$' -fuzz FuzzSplit -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE)
	$(GO) test ./retrieve -run '^$$' -fuzz FuzzCheckCypher -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE)

# Counted, not timed: Go 1.26's fuzz coordinator can fail a target with
# "context deadline exceeded" when a -fuzztime duration runs out while a
# worker is mid-input (golang/go#75804, fixed in Go 1.27), which made CI
# report a failure that wrote no input and skip the targets after it.
# 20000 inputs take 7 to 17 s a target on 2 cores.
fuzz-ci:
	$(MAKE) fuzz FUZZTIME=20000x FUZZMINIMIZE=100x

bench:
	@mkdir -p bench
	$(GO) test ./... -run '^$$' -bench . -benchmem -benchtime 1x -timeout 60m | tee bench/latest.txt

# How cost grows with the corpus: x1 and x4 copies of 2wiki (SCALES=1,4,16
# for x16, which takes long), ingested through the CLI, queried one-shot and
# served, with the BM25 baseline of the same run (ingests ROUNDS times,
# the scales alternating, and reports the medians); the table goes to
# bench/scale.txt. Needs python3 and ../shared. VS_INGEST=DIR also
# ingests x1 with DIR/ingest (a baseline build) in every round, next to
# ours, and reports our multiple of its time.
SCALES ?= 1,4
ROUNDS ?= 3
VS_INGEST ?=
bench-scale: build
	@mkdir -p bench
	$(GO) run ./eval/internal/scalebench -scales $(SCALES) -rounds $(ROUNDS) -work .docgraph/scale -out bench/scale.txt -label "$(LABEL)" $(if $(VS_INGEST),-vs-ingest $(VS_INGEST))

# Offline passage-retrieval benchmark with the BM25 baseline in the same run.
# The first run ingests the corpora (about a minute for 2wiki); later runs reuse .docgraph/eval.
eval:
	$(GO) run ./cmd/query eval --dataset ../shared/data/2wiki --dataset ../shared/data/musique --mode all --baseline bm25 --store-dir .docgraph/eval

demo: build
	$(BIN)/ingest --store $(STORE) testdata/corpus
	$(BIN)/query --store $(STORE) --top-k 3 "Which programming language did the co-creator of Unix design at Google?"

lint:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1)
	$(GO) vet ./...

# Checks every Cypher statement of the Neo4j store with Neo4j's own parser, no
# server needed. The one target that needs more than Go: node, and the npm
# registry (or a warm npm cache) for the pinned linter. NPM_CI=true skips the
# install when CI has just done it.
cypher-lint:
	$(GO) run ./store/neo4j/cypherlint/extract | (cd store/neo4j/cypherlint && $(NPM_CI) </dev/null && node lint.mjs)

# Checks `query mcp` from outside Go: the official MCP TypeScript SDK client
# (pinned in cmd/query/mcpcheck) starts it over stdio on a store of
# testdata/corpus, lists the tools and calls search. Needs node and the npm
# registry (or a warm npm cache), like cypher-lint; NPM_CI=true skips the install.
mcp-check: build
	rm -rf .docgraph/mcpcheck
	$(BIN)/ingest --store sqlite://./.docgraph/mcpcheck/g.db testdata/corpus >/dev/null
	cd cmd/query/mcpcheck && $(NPM_CI) </dev/null && node check.mjs $(CURDIR)/$(BIN)/query mcp --config '' --store sqlite://$(CURDIR)/.docgraph/mcpcheck/g.db

clean:
	rm -rf $(BIN) .docgraph
