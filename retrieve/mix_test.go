package retrieve_test

import (
	"context"
	"strings"
	"testing"

	"github.com/docgraph/docgraph/embedstore"
	"github.com/docgraph/docgraph/eval"
	"github.com/docgraph/docgraph/pipeline"
	"github.com/docgraph/docgraph/retrieve"
)

func passageIDs(ps []retrieve.Passage) []string {
	return docsOf(ps, func(p retrieve.Passage) string { return p.DocID })
}

// TestGraphSignalFindsTheBridgePassage is the point of mix: the director's
// passage shares one word with the question, so text and vector search rank
// it low, but it is two hops from the film the question names.
func TestGraphSignalFindsTheBridgePassage(t *testing.T) {
	st, byDoc := ingest(t, film)
	ctx := context.Background()
	emb := embedstore.NewHash()
	const k = 3

	naive, err := retrieve.New(st, emb, retrieve.WithTopK(k)).Retrieve(ctx, filmQuestion, retrieve.ModeNaive)
	if err != nil {
		t.Fatal(err)
	}
	if r := rankOf(byDoc, passageIDs(naive.Passages), "director"); r != 0 {
		t.Fatalf("naive already ranks the director's passage %d in %s: the corpus proves nothing", r, describe(byDoc, passageIDs(naive.Passages)))
	}

	res, err := retrieve.New(st, emb, retrieve.WithTopK(k)).Retrieve(ctx, filmQuestion, retrieve.ModeMix)
	if err != nil {
		t.Fatal(err)
	}
	ids := passageIDs(res.Passages)
	if r := rankOf(byDoc, ids, "director"); r == 0 {
		t.Errorf("mix top %d = %s; want the director's passage", k, describe(byDoc, ids))
	}
	if r := rankOf(byDoc, ids, "film"); r == 0 {
		t.Errorf("mix top %d = %s; want the film's passage", k, describe(byDoc, ids))
	}
	for _, p := range res.Passages {
		if byDoc[p.DocID] == "director" && p.Signals["ppr"] == 0 {
			t.Errorf("director's passage signals %v: not reached by PageRank", p.Signals)
		}
		if p.Text == "" || p.DocPath == "" || p.DocTitle == "" {
			t.Errorf("passage %s lacks text or source: %+v", p.ChunkID, p)
		}
	}

	// The same pipeline without the graph signals loses it.
	cfg := retrieve.DefaultConfig()
	cfg.TopK = k
	cfg.Weights.PPR, cfg.Weights.Mentions, cfg.Weights.TwoHop = 0, 0, 0
	flat, err := retrieve.New(st, emb, retrieve.WithConfig(cfg)).Retrieve(ctx, filmQuestion, retrieve.ModeMix)
	if err != nil {
		t.Fatal(err)
	}
	if r := rankOf(byDoc, passageIDs(flat.Passages), "director"); r != 0 {
		t.Errorf("without graph signals the director's passage still ranks %d: the graph is not what found it", r)
	}

	// The graph context: the named entity, the relation to the director.
	if len(res.Entities) == 0 || res.Entities[0].Name != "Won In The Clouds" || res.Entities[0].Via != "name" {
		t.Errorf("entities = %+v; want the film first, found by name", res.Entities)
	}
	var rel bool
	for _, r := range res.Relations {
		rel = rel || r.Source+"|"+r.Target == "Won In The Clouds|Harold Fairfax" || r.Target+"|"+r.Source == "Won In The Clouds|Harold Fairfax"
	}
	if !rel {
		t.Errorf("relations = %+v; want Won In The Clouds -- Harold Fairfax", res.Relations)
	}
	for _, stage := range []string{"embed", "fulltext", "vector", "facts", "graph", "ppr", "mentions", "expand", "rerank", "total"} {
		if _, ok := res.Timings[stage]; !ok {
			t.Errorf("no timing for stage %s: %v", stage, res.Timings)
		}
	}
	if res.Keywords == nil || res.Keywords.Source != "offline" {
		t.Errorf("keywords = %+v", res.Keywords)
	}
}

func TestDualLevelModes(t *testing.T) {
	st, byDoc := ingest(t, film)
	ctx := context.Background()
	r := retrieve.New(st, embedstore.NewHash(), retrieve.WithTopK(5))
	for _, mode := range []string{retrieve.ModeLocal, retrieve.ModeGlobal, retrieve.ModeHybrid} {
		t.Run(mode, func(t *testing.T) {
			res, err := r.Retrieve(ctx, filmQuestion, mode)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Passages) == 0 || len(res.Entities) == 0 || len(res.Relations) == 0 {
				t.Fatalf("%s: %d passages, %d entities, %d relations; want some of each", mode, len(res.Passages), len(res.Entities), len(res.Relations))
			}
			seen := map[string]bool{}
			for _, p := range res.Passages {
				if p.Text == "" || p.DocPath == "" || seen[p.ChunkID] {
					t.Errorf("%s: passage %+v empty or repeated", mode, p)
				}
				seen[p.ChunkID] = true
			}
			if mode == retrieve.ModeLocal {
				// Low level: the film's entity leads to the film's passage.
				if rankOf(byDoc, passageIDs(res.Passages), "film") == 0 {
					t.Errorf("local passages %s lack the film's", describe(byDoc, passageIDs(res.Passages)))
				}
				if res.Entities[0].Name != "Won In The Clouds" {
					t.Errorf("local entities start with %q", res.Entities[0].Name)
				}
			}
			if _, ok := res.Timings[mode]; mode != retrieve.ModeHybrid && !ok {
				t.Errorf("no %s timing: %v", mode, res.Timings)
			}
		})
	}
	// Hybrid holds what local and global found, each once.
	local, _ := r.Retrieve(ctx, filmQuestion, retrieve.ModeLocal)
	hybrid, _ := r.Retrieve(ctx, filmQuestion, retrieve.ModeHybrid)
	names := map[string]int{}
	for _, e := range hybrid.Entities {
		names[e.ID]++
	}
	for _, e := range local.Entities {
		if names[e.ID] != 1 {
			t.Errorf("hybrid has local entity %s %d times", e.Name, names[e.ID])
		}
	}
}

func TestRetrieveRejectsBadInput(t *testing.T) {
	st, _ := ingest(t, film[:2])
	r := retrieve.New(st, embedstore.NewHash())
	if _, err := r.Retrieve(context.Background(), "  ", ""); err == nil {
		t.Error("empty question accepted")
	}
	if _, err := r.Retrieve(context.Background(), "q", "telepathy"); err == nil || !strings.Contains(err.Error(), "mix") {
		t.Errorf("unknown mode: %v; want an error listing the modes", err)
	}
}

// TestGraphReloadsAfterWrites checks the in-memory graph follows the store:
// a passage written after the first query is reachable by the next.
func TestGraphReloadsAfterWrites(t *testing.T) {
	st, byDoc := ingest(t, film[:1])
	ctx := context.Background()
	emb := embedstore.NewHash()
	r := retrieve.New(st, emb, retrieve.WithTopK(3))
	if _, err := r.Retrieve(ctx, filmQuestion, retrieve.ModeMix); err != nil {
		t.Fatal(err)
	}
	p, err := pipeline.Offline(pipeline.Settings{}, emb, st)
	if err != nil {
		t.Fatal(err)
	}
	ds := &eval.Dataset{Name: "more", Dir: t.TempDir(), Passages: film[1:2]}
	if _, err := eval.Ingest(ctx, ds, p, st, 1, nil); err != nil {
		t.Fatal(err)
	}
	docs, _ := eval.Documents(ds)
	byDoc[docs[0].ID] = "director"
	res, err := r.Retrieve(ctx, filmQuestion, retrieve.ModeMix)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range res.Passages {
		if byDoc[p.DocID] == "director" && p.Signals["ppr"] > 0 {
			return
		}
	}
	t.Errorf("after the write, passages %s: the director's passage is not reached through the graph", describe(byDoc, passageIDs(res.Passages)))
}

// TestPathSignal: with a path weight, mix walks reasoning paths from the
// question's film and ranks the passages those paths came from; without
// one, no path is walked.
func TestPathSignal(t *testing.T) {
	st, _ := ingest(t, film)
	ctx := context.Background()
	cfg := retrieve.DefaultConfig()
	cfg.TopK = 10
	cfg.Weights.Paths = 1
	res, err := retrieve.New(st, embedstore.NewHash(), retrieve.WithConfig(cfg)).Retrieve(ctx, filmQuestion, retrieve.ModeMix)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Paths) == 0 || res.Paths[0].Start.Name != "Won In The Clouds" {
		t.Fatalf("paths %+v; want paths from the film", res.Paths)
	}
	var toDirector bool
	pathChunks := map[string]bool{}
	for _, p := range res.Paths {
		for _, h := range p.Hops {
			toDirector = toDirector || (h.To.Name == "Harold Fairfax" && len(h.Chunks) > 0)
		}
		for _, c := range p.Chunks() {
			pathChunks[c] = true
		}
	}
	if !toDirector {
		t.Errorf("no path reaches Harold Fairfax with its source chunks: %+v", res.Paths)
	}
	var signalled int
	for _, p := range res.Passages {
		rank, ok := p.Signals["paths"]
		if !ok {
			continue
		}
		signalled++
		if !pathChunks[p.ChunkID] {
			t.Errorf("passage %s has the path signal but no path came from it", p.ChunkID)
		}
		if rank == 1 && p.ChunkID != res.Paths[0].Chunks()[0] {
			t.Errorf("path signal's first passage %s is not the best path's chunk %v", p.ChunkID, res.Paths[0].Chunks())
		}
	}
	if signalled == 0 {
		t.Errorf("no passage carries the path signal: %+v", res.Passages)
	}
	if _, ok := res.Timings["paths"]; !ok {
		t.Errorf("no paths timing: %v", res.Timings)
	}

	cfg.Weights.Paths = 0
	off, err := retrieve.New(st, embedstore.NewHash(), retrieve.WithConfig(cfg)).Retrieve(ctx, filmQuestion, retrieve.ModeMix)
	if err != nil {
		t.Fatal(err)
	}
	if len(off.Paths) != 0 {
		t.Errorf("path weight 0 still walked %d paths", len(off.Paths))
	}
	for _, p := range off.Passages {
		if _, ok := p.Signals["paths"]; ok {
			t.Errorf("path weight 0: passage %s has the path signal", p.ChunkID)
		}
	}

	cfg.Weights.Paths, cfg.PathSpec = 1, "se=telepathy"
	if _, err := retrieve.New(st, embedstore.NewHash(), retrieve.WithConfig(cfg)).Retrieve(ctx, filmQuestion, retrieve.ModeMix); err == nil || !strings.Contains(err.Error(), "telepathy") {
		t.Errorf("bad path spec: %v; want an error naming it", err)
	}
}
