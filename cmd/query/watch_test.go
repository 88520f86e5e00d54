package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/docgraph/docgraph/embedstore"
	"github.com/docgraph/docgraph/pipeline"

	"github.com/docgraph/docgraph/server"
)

// TestServeBesideWatch: `ingest --watch` writes the store through its own
// handle (what another process has) while the server answers; the first
// query after each commit sees it: a new file is returned, a moved file
// under its new path, a deleted file no more.
func TestServeBesideWatch(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	folder := filepath.Join(dir, "notes")
	if err := os.MkdirAll(filepath.Join(folder, "moons"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"people/alan-turing.txt", "systems/go-language.md", "systems/unix.md"} {
		b, err := os.ReadFile(filepath.Join("../../testdata/corpus", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(folder, filepath.Base(name)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	db := "sqlite://" + filepath.Join(dir, "g.db")

	// The watcher, with its own store handle.
	emb := embedstore.NewHash()
	s := pipeline.Settings{Store: db}
	wst, err := pipeline.OpenStore(ctx, s, emb, pipeline.NewMerger(emb))
	if err != nil {
		t.Fatal(err)
	}
	defer wst.Close()
	p, err := pipeline.Offline(s, emb, wst)
	if err != nil {
		t.Fatal(err)
	}
	changes := make(chan pipeline.FileResult, 16)
	synced := make(chan struct{})
	wctx, stopWatch := context.WithCancel(ctx)
	watchDone := make(chan error, 1)
	go func() {
		watchDone <- p.Watch(wctx, []string{folder}, pipeline.WithDebounce(50*time.Millisecond),
			pipeline.WithOnChange(func(r pipeline.FileResult) { changes <- r }),
			pipeline.WithOnSynced(func(*pipeline.Summary) { close(synced) }))
	}()
	defer func() { stopWatch(); <-watchDone }()
	<-synced

	// The server, with another handle, following the store as serve does.
	e := testEngine(t, db)
	fctx, stopFollow := context.WithCancel(ctx)
	defer stopFollow()
	go e.Follow(fctx, 100*time.Millisecond, t.Logf)
	srv := startAPI(t, e, server.HandlerConfig{})

	wait := func(path string, outcomes ...pipeline.Outcome) time.Time {
		t.Helper()
		for {
			select {
			case r := <-changes:
				if r.Path == path && slices.Contains(outcomes, r.Outcome) {
					return time.Now() // the watcher reports after the commit
				}
				t.Logf("watch: %s %s", r.Outcome, r.Path)
			case <-time.After(30 * time.Second):
				t.Fatalf("the watcher never reported %v %s", outcomes, path)
			}
		}
	}
	const question = `{"question": "Who discovered Zorblax, the moon of Quintessa?", "top_k": 3}`
	paths := func() []string {
		t.Helper()
		r := do(t, "POST", srv.URL+"/v1/query", question)
		if r.Status != 200 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		var res struct {
			Passages []struct {
				DocPath string `json:"doc_path"`
			} `json:"passages"`
		}
		if err := json.Unmarshal(r.Body, &res); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, p := range res.Passages {
			out = append(out, p.DocPath)
		}
		return out
	}
	if got := paths(); len(got) > 0 && filepath.Base(got[0]) == "zorblax.md" {
		t.Fatalf("zorblax.md found before it exists: %v", got)
	}

	file := filepath.Join(folder, "zorblax.md")
	text := "# Zorblax\n\nZorblax is the second moon of the planet Quintessa. Mirela Vantongeren discovered Zorblax in 2031 with the Harrowgate telescope.\n"
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	committed := wait(file, pipeline.Added)
	if got := paths(); len(got) == 0 || got[0] != file {
		t.Fatalf("first query after the commit: %v, want %s first", got, file)
	}
	t.Logf("new file answered %s after its commit", time.Since(committed).Round(time.Millisecond))

	moved := filepath.Join(folder, "moons", "zorblax.md")
	if err := os.Rename(file, moved); err != nil {
		t.Fatal(err)
	}
	// A rename is seen as one when the new name's event comes within half
	// a debounce of the old one's; on a loaded machine it may come later,
	// and the move is then a deletion and an addition. Either way the
	// server must answer with the new path.
	wait(moved, pipeline.Renamed, pipeline.Added)
	if got := paths(); len(got) == 0 || got[0] != moved {
		t.Fatalf("first query after the move: %v, want %s first", got, moved)
	}

	if err := os.Remove(moved); err != nil {
		t.Fatal(err)
	}
	wait(moved, pipeline.Deleted)
	for _, p := range paths() {
		if filepath.Base(p) == "zorblax.md" {
			t.Fatalf("deleted file still returned: %s", p)
		}
	}
	// And once the graph has reloaded in the background, still not.
	time.Sleep(300 * time.Millisecond)
	for _, p := range paths() {
		if filepath.Base(p) == "zorblax.md" {
			t.Fatalf("deleted file returned after the reload: %s", p)
		}
	}
}
