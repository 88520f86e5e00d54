package retrieve_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/docgraph/docgraph/embedstore"
	"github.com/docgraph/docgraph/eval"
	"github.com/docgraph/docgraph/pipeline"
	"github.com/docgraph/docgraph/retrieve"
	"github.com/docgraph/docgraph/store"
	"github.com/docgraph/docgraph/store/sqlite"
)

// TestWithConfigSharesTheNeighborCache: a derived retriever with the same
// hub limit answers from what the warm one read of the passage graph; one
// with another limit reads its own.
func TestWithConfigSharesTheNeighborCache(t *testing.T) {
	st, _ := ingest(t, film)
	cs := &countingStore{Store: st}
	ctx := context.Background()
	emb := embedstore.NewHash()
	base := retrieve.New(cs, emb)
	if _, err := base.Retrieve(ctx, filmQuestion, retrieve.ModeMix); err != nil {
		t.Fatal(err)
	}
	reads := cs.neighbors.Load()
	cfg := retrieve.DefaultConfig()
	cfg.TopK = 2
	res, err := base.WithConfig(cfg).Retrieve(ctx, filmQuestion, retrieve.ModeMix)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Passages) != 2 || cs.neighbors.Load() != reads || reads == 0 {
		t.Fatalf("derived retriever: %d passages (want 2), %d passage graph reads after the warm one's %d (want none: shared)",
			len(res.Passages), cs.neighbors.Load()-reads, reads)
	}
	if base.Config().TopK != retrieve.DefaultConfig().TopK {
		t.Errorf("WithConfig changed the base retriever's top-k to %d", base.Config().TopK)
	}
	cfg.Graph.MaxEntityChunks = 3
	if _, err := base.WithConfig(cfg).Retrieve(ctx, filmQuestion, retrieve.ModeMix); err != nil {
		t.Fatal(err)
	}
	if cs.neighbors.Load() == reads {
		t.Error("another hub limit answered from the warm retriever's cache")
	}
}

// openReader opens a second handle on the store's file, with its own
// caches: what another process (a server beside `ingest --watch`) has.
func openReader(t *testing.T, path string) *sqlite.Store {
	t.Helper()
	emb := embedstore.NewHash()
	rd, err := sqlite.Open(context.Background(), path, store.Options{Embedder: store.EmbedderInfo{Name: emb.Name(), Dimension: emb.Dimension()}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rd.Close() })
	return rd
}

func docPaths(res *retrieve.Result) []string {
	return docsOf(res.Passages, func(p retrieve.Passage) string { return p.DocPath })
}

// TestRetrieverSeesAnotherHandlesWrites: a warm retriever over one handle
// follows writes, deletes and renames made through another handle of the
// same file, in every signal (the passage graph's document paths included).
func TestRetrieverSeesAnotherHandlesWrites(t *testing.T) {
	writer, byDoc := ingest(t, film)
	reader := openReader(t, writer.Path())
	ctx := context.Background()
	emb := embedstore.NewHash()
	cfg := retrieve.DefaultConfig()
	// One text and one vector hit: the director's passage is reached only
	// through the graph, so its path comes from the in-memory graph.
	cfg.Candidates, cfg.TopK = 1, 5
	r := retrieve.New(reader, emb, retrieve.WithConfig(cfg))
	res, err := r.Retrieve(ctx, filmQuestion, retrieve.ModeMix)
	if err != nil {
		t.Fatal(err)
	}
	var director *retrieve.Passage
	for i, p := range res.Passages {
		if byDoc[p.DocID] == "director" {
			director = &res.Passages[i]
		}
	}
	if director == nil || director.Signals["fulltext"] != 0 {
		t.Fatalf("want the director's passage from the graph alone; got %v", docPaths(res))
	}

	// Rename through the writer: the reader's graph must not keep the old path.
	renamed := director.DocPath + ".moved"
	if err := writer.RenameDocument(ctx, director.DocID, renamed); err != nil {
		t.Fatal(err)
	}
	res, err = r.Retrieve(ctx, filmQuestion, retrieve.ModeMix)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(docPaths(res), renamed) {
		t.Errorf("after a rename by another handle, paths %v lack %s", docPaths(res), renamed)
	}

	// A new document through the writer is found at once, by every signal.
	p, err := pipeline.Offline(pipeline.Settings{}, emb, writer)
	if err != nil {
		t.Fatal(err)
	}
	extra := []eval.Passage{{ID: "new", Title: "Quentin Marlowe", Text: "Quentin Marlowe directed Won In The Clouds Again, the sequel, and was born in Hobart."}}
	ds := &eval.Dataset{Name: "extra", Dir: t.TempDir(), Passages: extra}
	if _, err := eval.Ingest(ctx, ds, p, writer, 1, nil); err != nil {
		t.Fatal(err)
	}
	docs, _ := eval.Documents(ds)
	newDoc := docs[0].ID
	res, err = r.Retrieve(ctx, "Where was Quentin Marlowe born?", retrieve.ModeMix)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Passages) == 0 || res.Passages[0].DocID != newDoc || res.Passages[0].Signals["ppr"] == 0 || res.Passages[0].Signals["vector"] == 0 {
		t.Fatalf("new document by another handle: top passages %v, signals %v", docPaths(res), signalsOf(res))
	}

	// Deleted through the writer: gone from every signal.
	if err := writer.DeleteDocument(ctx, newDoc); err != nil {
		t.Fatal(err)
	}
	res, err = r.Retrieve(ctx, "Where was Quentin Marlowe born?", retrieve.ModeMix)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range res.Passages {
		if p.DocID == newDoc {
			t.Fatalf("deleted document still returned: %+v", p)
		}
	}
}

func signalsOf(res *retrieve.Result) []map[string]int {
	var out []map[string]int
	for _, p := range res.Passages {
		out = append(out, p.Signals)
	}
	return out
}

// TestBackgroundReloadNeverServesDeletedPassages: in background mode the
// query right after a delete may still rank with the old graph, but never
// returns a passage of the deleted document; the graph catches up.
func TestBackgroundReloadNeverServesDeletedPassages(t *testing.T) {
	writer, byDoc := ingest(t, film)
	reader := openReader(t, writer.Path())
	ctx := context.Background()
	r := retrieve.New(reader, embedstore.NewHash(), retrieve.WithBackgroundReload())
	res, err := r.Retrieve(ctx, filmQuestion, retrieve.ModeMix)
	if err != nil {
		t.Fatal(err)
	}
	var gone string
	for _, p := range res.Passages {
		if byDoc[p.DocID] == "director" {
			gone = p.DocID
		}
	}
	if gone == "" {
		t.Fatal("the director's passage is not retrieved to begin with")
	}
	if err := writer.DeleteDocument(ctx, gone); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		res, err := r.Retrieve(ctx, filmQuestion, retrieve.ModeMix)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range res.Passages {
			if p.DocID == gone {
				t.Fatalf("deleted document returned: %+v", p)
			}
			if p.Text == "" || p.DocPath == "" {
				t.Fatalf("empty passage returned: %+v", p)
			}
		}
		// Caught up once the film's passage no longer gets rank from the
		// director (its PageRank neighbour): compare with a fresh retriever.
		fresh, err := retrieve.New(reader, embedstore.NewHash()).Retrieve(ctx, filmQuestion, retrieve.ModeMix)
		if err != nil {
			t.Fatal(err)
		}
		if slices.Equal(passageIDs(fresh.Passages), passageIDs(res.Passages)) && scoresEqual(fresh, res) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("background reload never caught up:\n fresh %v\n  warm %v", passageIDs(fresh.Passages), passageIDs(res.Passages))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func scoresEqual(a, b *retrieve.Result) bool {
	for i := range a.Passages {
		if a.Passages[i].Score != b.Passages[i].Score {
			return false
		}
	}
	return true
}
