package main

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docgraph/docgraph/llm/llmtest"
	"github.com/docgraph/docgraph/pipeline"
)

// fileSums hashes each path that exists (with its SQLite -wal and -shm
// files); a missing one hashes as "absent".
func fileSums(t *testing.T, paths ...string) map[string]string {
	t.Helper()
	sums := map[string]string{}
	for _, p := range paths {
		for _, f := range []string{p, p + "-wal", p + "-shm"} {
			b, err := os.ReadFile(f)
			if err != nil {
				sums[f] = "absent"
				continue
			}
			sums[f] = fmt.Sprintf("%x", sha256.Sum256(b))
		}
	}
	return sums
}

func dryRunJSON(t *testing.T, args ...string) pipeline.DryRunSummary {
	t.Helper()
	out, logs, err := runCmd(t, append([]string{"--dry-run", "--json"}, args...)...)
	if err != nil {
		t.Fatalf("dry run: %v\n%s", err, logs)
	}
	var sum pipeline.DryRunSummary
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	return sum
}

// TestDryRun: a dry run calls no model and writes nothing; it counts the
// documents and chunks a run would build, and the prompt tokens it would
// send after cache hits, fewer once a run of half the files warmed the cache.
func TestDryRun(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Fixed(`("entity"<|>Grace Hopper<|>person<|>A computer scientist.)##` + "\n<|COMPLETE|>"))
	t.Cleanup(srv.Close)
	llmEnv(t, srv)
	dir := t.TempDir()
	t.Chdir(dir)
	docs := filepath.Join(dir, "docs")
	os.MkdirAll(docs, 0o755)
	var files []string
	for i := range 4 {
		var b strings.Builder
		for j := range 3 {
			fmt.Fprintf(&b, "Document %d, part %d: Grace Hopper wrote the first compiler for the Harvard Mark I team in %d.\n\n", i, j, 1950+i)
		}
		f := filepath.Join(docs, fmt.Sprintf("d%d.md", i))
		os.WriteFile(f, []byte(b.String()), 0o644)
		files = append(files, f)
	}
	db, cache := filepath.Join(dir, "g.db"), filepath.Join(dir, "llm-cache.db")
	common := []string{"--store", "sqlite://" + db, "--llm-cache", cache, "--chunk-tokens", "40", "--chunk-overlap", "0"}
	llmArgs := append([]string{"--llm", "openai:fake"}, common...)

	cold := dryRunJSON(t, append(llmArgs, docs)...)
	if srv.Count() != 0 {
		t.Fatalf("a dry run made %d model calls", srv.Count())
	}
	if got := fileSums(t, db, cache); got[db] != "absent" || got[cache] != "absent" {
		t.Fatalf("a dry run created files: %v", got)
	}
	if cold.Documents != 4 || cold.Chunks < 8 || len(cold.Models) != 1 {
		t.Fatalf("cold dry run: %+v", cold)
	}
	m := cold.Models[0]
	if m.Model != "openai:fake" || m.Chunks != cold.Chunks || m.Calls != cold.Chunks || m.CacheHits != 0 || m.PromptTokens < int64(100*m.Calls) || m.Gleaning != 1 {
		t.Fatalf("cold estimate: %+v of %d chunks", m, cold.Chunks)
	}

	// A real run of half the files, without gleaning so the cache holds
	// exactly the first extraction calls.
	if _, logs, err := runCmd(t, append(append(llmArgs, "--gleaning", "0"), files[:2]...)...); err != nil {
		t.Fatalf("ingest: %v\n%s", err, logs)
	}
	calls := srv.Count()
	before := fileSums(t, db, cache)

	// Against the same store and settings: the ingested half is unchanged.
	warm := dryRunJSON(t, append(llmArgs, "--gleaning", "0", docs)...)
	if warm.Unchanged != 2 || warm.Documents != 2 || warm.Models[0].PromptTokens >= m.PromptTokens {
		t.Errorf("dry run after half: %+v, cold %+v", warm, cold)
	}
	// Against a new store but the warm cache (and gleaning 1, which
	// changes no first request): the half is built again, its first
	// extraction calls answered from the cache.
	other := filepath.Join(dir, "other.db")
	fresh := dryRunJSON(t, append([]string{"--llm", "openai:fake", "--store", "sqlite://" + other, "--llm-cache", cache,
		"--chunk-tokens", "40", "--chunk-overlap", "0"}, docs)...)
	fm := fresh.Models[0]
	if fresh.Documents != 4 || fm.CacheHits == 0 || fm.CacheHits+fm.Calls != m.Calls ||
		fm.PromptTokens >= m.PromptTokens || fm.PromptTokens+fm.CachedPromptTokens != m.PromptTokens {
		t.Errorf("partly warm cache: %+v, cold %+v", fm, m)
	}
	if srv.Count() != calls {
		t.Errorf("dry runs made %d model calls", srv.Count()-calls)
	}
	after := fileSums(t, db, cache, other)
	for f, sum := range before {
		if after[f] != sum {
			t.Errorf("%s changed in a dry run", f)
		}
	}
	if after[other] != "absent" {
		t.Errorf("a dry run created %s", other)
	}

	// Offline: documents and chunks, no model calls.
	out, logs, err := runCmd(t, append([]string{"--dry-run", "--store", "sqlite://" + other}, docs)...)
	if err != nil || !strings.Contains(out, "dry run: 4 documents to build in") || !strings.Contains(out, "no model calls would be made") {
		t.Errorf("offline dry run: %v\n%s%s", err, out, logs)
	}

	// A store of another embedder: without --embedder, ingest would adopt
	// it, so its documents are unchanged.
	third := filepath.Join(dir, "third.db")
	if _, logs, err := runCmd(t, "--store", "sqlite://"+third, "--embedder", "hash:64", docs); err != nil {
		t.Fatalf("ingest: %v\n%s", err, logs)
	}
	before = fileSums(t, third)
	if got := dryRunJSON(t, "--store", "sqlite://"+third, docs); got.Unchanged != 4 || got.Documents != 0 || len(got.Models) != 0 {
		t.Errorf("dry run over a hash:64 store: %+v", got)
	}
	for f, sum := range fileSums(t, third) {
		if before[f] != sum {
			t.Errorf("%s changed in a dry run", f)
		}
	}
}
