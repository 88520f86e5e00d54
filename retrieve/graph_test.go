package retrieve_test

import (
	"context"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/docgraph/docgraph/embedstore"
	"github.com/docgraph/docgraph/eval"
	"github.com/docgraph/docgraph/graphbuild"
	"github.com/docgraph/docgraph/pipeline"
	"github.com/docgraph/docgraph/retrieve"
	"github.com/docgraph/docgraph/retrieve/graphalg"
	"github.com/docgraph/docgraph/store"
	"github.com/docgraph/docgraph/store/sqlite"
)

// countingStore is a real SQLite store that counts its whole-graph reads
// (ScanMentions, Documents, the KG scans) and its passage graph reads.
type countingStore struct {
	*sqlite.Store
	whole     atomic.Int64
	neighbors atomic.Int64
}

func (c *countingStore) ScanMentions(ctx context.Context, fn func(store.Mention) error) error {
	c.whole.Add(1)
	return c.Store.ScanMentions(ctx, fn)
}

func (c *countingStore) Documents(ctx context.Context) ([]store.Document, error) {
	c.whole.Add(1)
	return c.Store.Documents(ctx)
}

func (c *countingStore) ScanEntities(ctx context.Context, fn func(store.Entity) error) error {
	c.whole.Add(1)
	return c.Store.ScanEntities(ctx, fn)
}

func (c *countingStore) ScanRelations(ctx context.Context, fn func(store.Relation) error) error {
	c.whole.Add(1)
	return c.Store.ScanRelations(ctx, fn)
}

func (c *countingStore) EntityNeighbors(ctx context.Context, ids []string, maxChunks int) ([]store.EntityNeighbors, error) {
	c.neighbors.Add(1)
	return c.Store.EntityNeighbors(ctx, ids, maxChunks)
}

func (c *countingStore) ChunkNeighbors(ctx context.Context, ids []string, maxChunks int) ([]store.ChunkNeighbors, error) {
	c.neighbors.Add(1)
	return c.Store.ChunkNeighbors(ctx, ids, maxChunks)
}

var filmQuestions = []string{
	filmQuestion,
	"Which actor starred in Won In The Clouds?",
	"Where was Harold Fairfax born?",
	"What is Melbourne the capital of?",
}

// TestMixReadsNoWholeGraph: mix ranks by PageRank reading only the passage
// graph around each question, never the whole store.
func TestMixReadsNoWholeGraph(t *testing.T) {
	st, byDoc := ingest(t, film)
	cs := &countingStore{Store: st}
	ctx := context.Background()
	r := retrieve.New(cs, embedstore.NewHash())
	ppr := 0
	for _, q := range filmQuestions {
		res, err := r.Retrieve(ctx, q, retrieve.ModeMix)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range res.Passages {
			if p.Signals["ppr"] > 0 {
				ppr++
			}
			if p.DocPath == "" || p.DocTitle == "" || p.Text == "" {
				t.Errorf("%q: passage %s lacks its text or document: %+v", q, byDoc[p.DocID], p)
			}
		}
	}
	if n := cs.whole.Load(); n != 0 {
		t.Errorf("mix read the whole store %d times", n)
	}
	if ppr == 0 || cs.neighbors.Load() == 0 {
		t.Errorf("%d passages from PageRank after %d passage graph reads; want some of both", ppr, cs.neighbors.Load())
	}
}

// TestNeighborCacheFollowsWrites: a second query over the same
// neighbourhood reads nothing of the graph again, and a write by another
// handle (another process) drops what was read: the next query reads
// afresh, finds a new document through PageRank, and never returns a
// deleted one.
func TestNeighborCacheFollowsWrites(t *testing.T) {
	writer, _ := ingest(t, film)
	cs := &countingStore{Store: openReader(t, writer.Path())}
	ctx := context.Background()
	emb := embedstore.NewHash()
	r := retrieve.New(cs, emb)
	const q = "Where was Quentin Marlowe born?"
	retrieve1 := func() *retrieve.Result {
		t.Helper()
		res, err := r.Retrieve(ctx, q, retrieve.ModeMix)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	retrieve1()
	if _, err := r.Retrieve(ctx, filmQuestion, retrieve.ModeMix); err != nil {
		t.Fatal(err)
	}
	reads := cs.neighbors.Load()
	if _, err := r.Retrieve(ctx, filmQuestion, retrieve.ModeMix); err != nil {
		t.Fatal(err)
	}
	if got := cs.neighbors.Load(); got != reads || reads == 0 {
		t.Errorf("the same question again read the passage graph %d more times (first %d)", got-reads, reads)
	}

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
	res := retrieve1()
	if len(res.Passages) == 0 || res.Passages[0].DocID != newDoc || res.Passages[0].Signals["ppr"] == 0 {
		t.Fatalf("after a write by another handle: top passages %v, signals %v; want the new document by PageRank", docPaths(res), signalsOf(res))
	}
	if cs.neighbors.Load() == reads {
		t.Error("the query after a write read nothing of the passage graph")
	}

	if err := writer.DeleteDocument(ctx, newDoc); err != nil {
		t.Fatal(err)
	}
	for _, p := range retrieve1().Passages {
		if p.DocID == newDoc {
			t.Fatalf("deleted document returned: %+v", p)
		}
	}
}

// TestNeighborCacheIsBounded: a cache far smaller than the graph keeps to
// its bound and answers as an unbounded one does.
func TestNeighborCacheIsBounded(t *testing.T) {
	st, _ := ingest(t, film)
	ctx := context.Background()
	small := retrieve.New(st, embedstore.NewHash())
	const limit = 60
	retrieve.SetNeighborCacheLimit(small, limit)
	for range 2 {
		for _, q := range filmQuestions {
			got, err := small.Retrieve(ctx, q, retrieve.ModeMix)
			if err != nil {
				t.Fatal(err)
			}
			want, err := retrieve.New(st, embedstore.NewHash()).Retrieve(ctx, q, retrieve.ModeMix)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(passageIDs(got.Passages), passageIDs(want.Passages)) || !scoresEqual(got, want) {
				t.Errorf("%q: bounded cache ranks %v, unbounded %v", q, passageIDs(got.Passages), passageIDs(want.Passages))
			}
			if entries, cost := retrieve.NeighborCacheSize(small); cost > limit || entries == 0 {
				t.Errorf("%q: cache holds %d entries costing %d; limit %d", q, entries, cost, limit)
			}
		}
	}
}

// wholeGraph is the passage graph read whole, as retrieval did before it
// walked the store: chunks and entities of ScanMentions, hubs dropped,
// title edges weighted.
type wholeGraph struct {
	g      *graphalg.Graph
	node   map[string]int // "c:"+chunk id or "e:"+entity id
	chunks []string       // node -> chunk id, for chunk nodes
	count  map[string]int // entity -> chunks
}

func readWholeGraph(t *testing.T, st *sqlite.Store, o retrieve.GraphOptions) *wholeGraph {
	t.Helper()
	ctx := context.Background()
	docs, err := st.Documents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	titles := map[string]string{}
	for _, d := range docs {
		titles[d.ID] = d.Title
	}
	var ms []store.Mention
	w := &wholeGraph{node: map[string]int{}, count: map[string]int{}}
	if err := st.ScanMentions(ctx, func(m store.Mention) error {
		ms = append(ms, m)
		w.count[m.EntityID]++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].ChunkID+ms[i].EntityID < ms[j].ChunkID+ms[j].EntityID })
	id := func(k string) int {
		n, ok := w.node[k]
		if !ok {
			n = len(w.node)
			w.node[k] = n
			w.chunks = append(w.chunks, strings.TrimPrefix(k, "c:"))
		}
		return n
	}
	type edge struct {
		c, e int
		w    float64
	}
	var edges []edge
	for _, m := range ms {
		c := id("c:" + m.ChunkID)
		if n := w.count[m.EntityID]; o.MaxEntityChunks > 0 && n > o.MaxEntityChunks {
			continue
		}
		title := titles[m.DocID]
		weight := o.MentionWeight
		if graphbuild.EntityID(title) == m.EntityID || (strings.HasSuffix(title, ")") && graphbuild.EntityID(strings.TrimSpace(title[:strings.LastIndex(title, "(")])) == m.EntityID) {
			weight = o.TitleWeight
		}
		edges = append(edges, edge{c, id("e:" + m.EntityID), weight})
	}
	b := graphalg.NewBuilder(len(w.node))
	for _, e := range edges {
		b.AddUndirected(e.c, e.e, e.w)
	}
	w.g = b.Build()
	return w
}

// TestPageRankMatchesTheWholeGraph: PageRank over the neighbourhoods the
// store answers is PageRank over the whole graph, as retrieval built it
// before (hubs dropped, title edges weighted, seeds by specificity), within
// the push's bound; with a tiny threshold, the same numbers.
func TestPageRankMatchesTheWholeGraph(t *testing.T) {
	passages := append(append([]eval.Passage(nil), film...),
		eval.Passage{ID: "sequel", Title: "Won In The Clouds (sequel)", Text: "Won In The Clouds (sequel) is a 1937 film directed by Harold Fairfax, shot in Melbourne with Rex Lease."},
		eval.Passage{ID: "victoria", Title: "Victoria", Text: "Victoria is an Australian state; Melbourne is its capital, and Harold Fairfax filmed there."})
	st, _ := ingest(t, passages)
	ctx := context.Background()
	for _, maxChunks := range []int{0, 2, 3} {
		cfg := retrieve.DefaultConfig()
		cfg.Graph.MaxEntityChunks = maxChunks
		r := retrieve.New(st, embedstore.NewHash(), retrieve.WithConfig(cfg))
		whole := readWholeGraph(t, st, cfg.Graph)
		hubs := 0
		var seedSets []map[string]float64
		for id, n := range whole.count {
			// A hub as a seed is left out, as the question's hubs are.
			seedSets = append(seedSets, map[string]float64{id: 1})
			if maxChunks > 0 && n > maxChunks {
				hubs++
			}
		}
		if maxChunks > 0 && hubs == 0 {
			t.Fatalf("limit %d: no hub in the corpus; the test proves nothing about hubs", maxChunks)
		}
		sort.Slice(seedSets, func(i, j int) bool { return firstKey(seedSets[i]) < firstKey(seedSets[j]) })
		seedSets = append(seedSets[:min(len(seedSets), 16)], map[string]float64{
			graphbuild.EntityID("Won In The Clouds"): 1, graphbuild.EntityID("Harold Fairfax"): 1, graphbuild.EntityID("Melbourne"): 1,
		})
		for _, seeds := range seedSets {
			start := map[int]float64{}
			for id := range seeds {
				if n, ok := whole.node["e:"+id]; ok && (maxChunks <= 0 || whole.count[id] <= maxChunks) {
					start[n] = 1 / float64(whole.count[id])
				}
			}
			exact := graphalg.PPR(whole.g, start, cfg.Damping, 1e-14, 10000)
			for _, eps := range []float64{1e-4, 1e-12} {
				got, st, err := retrieve.PageRank(ctx, r, seeds, eps)
				if err != nil {
					t.Fatal(err)
				}
				var missing float64
				for key, n := range whole.node {
					chunk, ok := strings.CutPrefix(key, "c:")
					if !ok {
						continue
					}
					if got[chunk] > exact[n]+1e-12 {
						t.Errorf("limit %d seeds %v eps %g: chunk %s scores %v, above exact %v", maxChunks, seeds, eps, chunk, got[chunk], exact[n])
					}
					missing += exact[n] - got[chunk]
				}
				// Missing mass is residual left, under eps per unit of degree.
				if bound := eps * float64(whole.g.NumEdges()+len(whole.node)); missing > bound {
					t.Errorf("limit %d seeds %v eps %g: chunk scores short by %v in all, bound %v (%+v)", maxChunks, seeds, eps, missing, bound, st)
				}
				for chunk := range got {
					if _, ok := whole.node["c:"+chunk]; !ok {
						t.Errorf("PageRank scored chunk %s, not in the graph", chunk)
					}
				}
			}
		}
	}
}

func firstKey(m map[string]float64) string {
	for k := range m {
		return k
	}
	return ""
}
