package storetest

import (
	"fmt"
	"reflect"
	"sort"
	"testing"

	"github.com/docgraph/docgraph/graphbuild"
	"github.com/docgraph/docgraph/store"
)

// RunPassageGraph checks store.PassageGraph on stores opened with open: the
// neighbourhoods of entities and chunks are exactly the passage graph
// (mentions into chunks of done documents) with its counts, hubs are cut
// at the limit, and the answers follow status changes, replacements and
// deletes.
func RunPassageGraph(t *testing.T, open func(t *testing.T) store.Store) {
	s := suite{open: open}
	t.Run("Neighbors", s.testNeighbors)
	t.Run("NeighborsMatchScan", s.testNeighborsMatchScan)
}

func passageGraph(t *testing.T, st store.Store) store.PassageGraph {
	t.Helper()
	pg, ok := st.(store.PassageGraph)
	if !ok {
		t.Fatalf("%T does not implement store.PassageGraph", st)
	}
	return pg
}

// graphOf is the passage graph of done documents' writes: each entity's
// chunks and each chunk's entities, every edge once.
type graphOf struct {
	chunks   map[string][]store.ChunkRef // entity -> chunks, sorted by id
	entities map[string][]string         // chunk -> entities, sorted
	ref      map[string]store.ChunkRef
}

func expectedPassageGraph(ws ...*store.DocumentWrite) graphOf {
	g := graphOf{chunks: map[string][]store.ChunkRef{}, entities: map[string][]string{}, ref: map[string]store.ChunkRef{}}
	for _, m := range mentionsOf(ws...) {
		var title string
		for _, w := range ws {
			if w.Document.ID == m.DocID {
				title = w.Document.Title
			}
		}
		ref := store.ChunkRef{ID: m.ChunkID, DocID: m.DocID, DocTitle: title}
		g.ref[m.ChunkID] = ref
		g.chunks[m.EntityID] = append(g.chunks[m.EntityID], ref)
		g.entities[m.ChunkID] = append(g.entities[m.ChunkID], m.EntityID)
	}
	for _, l := range g.chunks {
		sort.Slice(l, func(i, j int) bool { return l[i].ID < l[j].ID })
	}
	for _, l := range g.entities {
		sort.Strings(l)
	}
	return g
}

// checkCount holds a returned chunk count to the contract: exact up to
// maxChunks, past it only more than maxChunks (and no more than the truth).
func checkCount(t *testing.T, what string, got, want, maxChunks int) {
	t.Helper()
	switch {
	case maxChunks <= 0 || want <= maxChunks:
		if got != want {
			t.Errorf("%s: count %d, want %d (limit %d)", what, got, want, maxChunks)
		}
	case got <= maxChunks || got > want:
		t.Errorf("%s: count %d of a hub in %d chunks; want more than the limit %d and at most %d", what, got, want, maxChunks, want)
	}
}

// checkNeighbors asks for the neighbourhoods of ids (entities and chunks
// alike, with unknown ids and repeats) and compares them with g.
func checkNeighbors(t *testing.T, pg store.PassageGraph, g graphOf, ids []string, maxChunks int, when string) {
	t.Helper()
	ctx := ctxFor(t)
	ask := append(append([]string{"no-such-id", ""}, ids...), ids...)
	ents, err := pg.EntityNeighbors(ctx, ask, maxChunks)
	if err != nil {
		t.Fatalf("%s: EntityNeighbors: %v", when, err)
	}
	var wantEnts []string
	for _, id := range ids {
		if len(g.chunks[id]) > 0 {
			wantEnts = append(wantEnts, id)
		}
	}
	sort.Strings(wantEnts)
	var gotEnts []string
	for _, e := range ents {
		gotEnts = append(gotEnts, e.ID)
		want := g.chunks[e.ID]
		what := fmt.Sprintf("%s: EntityNeighbors(%s, limit %d)", when, e.ID, maxChunks)
		checkCount(t, what, e.Chunks, len(want), maxChunks)
		if maxChunks > 0 && len(want) > maxChunks {
			if e.ChunkList != nil {
				t.Errorf("%s: a hub lists its chunks %v", what, e.ChunkList)
			}
		} else if !reflect.DeepEqual(e.ChunkList, want) {
			t.Errorf("%s: chunks %v\nwant %v", what, e.ChunkList, want)
		}
	}
	if !reflect.DeepEqual(gotEnts, wantEnts) {
		t.Errorf("%s: EntityNeighbors answered %v, want %v in order", when, gotEnts, wantEnts)
	}

	chunks, err := pg.ChunkNeighbors(ctx, ask, maxChunks)
	if err != nil {
		t.Fatalf("%s: ChunkNeighbors: %v", when, err)
	}
	var wantChunks []string
	for _, id := range ids {
		if len(g.entities[id]) > 0 {
			wantChunks = append(wantChunks, id)
		}
	}
	sort.Strings(wantChunks)
	var gotChunks []string
	for _, c := range chunks {
		gotChunks = append(gotChunks, c.ID)
		what := fmt.Sprintf("%s: ChunkNeighbors(%s, limit %d)", when, c.ID, maxChunks)
		if c.ChunkRef != g.ref[c.ID] {
			t.Errorf("%s: chunk %+v, want %+v", what, c.ChunkRef, g.ref[c.ID])
		}
		var want []string
		hubs := 0
		for _, e := range g.entities[c.ID] {
			if maxChunks > 0 && len(g.chunks[e]) > maxChunks {
				hubs++
			} else {
				want = append(want, e)
			}
		}
		if !reflect.DeepEqual(c.Entities, want) || c.Hubs != hubs {
			t.Errorf("%s: entities %v and %d hubs, want %v and %d", what, c.Entities, c.Hubs, want, hubs)
		}
	}
	if !reflect.DeepEqual(gotChunks, wantChunks) {
		t.Errorf("%s: ChunkNeighbors answered %v, want %v in order", when, gotChunks, wantChunks)
	}
}

// allIDs is every entity and chunk id the writes name.
func allIDs(ws ...*store.DocumentWrite) []string {
	seen := map[string]bool{}
	var out []string
	for _, w := range ws {
		for _, m := range w.Entities {
			for _, id := range []string{m.EntityID, m.ChunkID} {
				if !seen[id] {
					seen[id] = true
					out = append(out, id)
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

func (s suite) testNeighbors(t *testing.T) {
	st, _ := s.fresh(t)
	ctx := ctxFor(t)
	pg := passageGraph(t, st)
	rhine, ports := rhineV1().write(), ports().write()
	// A second fragment of an entity in the same chunk is still one edge.
	dup := ports.Entities[0]
	dup.Description = "another fragment"
	ports.Entities = append(ports.Entities, dup)
	ids := allIDs(rhine, ports, rhineV2().write())

	checkNeighbors(t, pg, graphOf{}, ids, 0, "empty store")
	if got, err := pg.EntityNeighbors(ctx, nil, 2); err != nil || len(got) != 0 {
		t.Errorf("EntityNeighbors(no ids) = %v, %v", got, err)
	}
	if got, err := pg.ChunkNeighbors(ctx, nil, 2); err != nil || len(got) != 0 {
		t.Errorf("ChunkNeighbors(no ids) = %v, %v", got, err)
	}

	mustWrite(t, st, rhine, ports)
	g := expectedPassageGraph(rhine, ports)
	// The Rhine is in 4 chunks and Rotterdam in 3: limits 2 and 3 make
	// hubs of one or both; 0 and 10 make none.
	if n := len(g.chunks[graphbuild.EntityID("Rhine")]); n != 4 {
		t.Fatalf("fixture: the Rhine is in %d chunks, want 4", n)
	}
	for _, limit := range []int{0, 1, 2, 3, 10} {
		checkNeighbors(t, pg, g, ids, limit, "rhine and ports")
	}

	// A document back in processing drops out, as it does from search.
	if err := st.SetStatus(ctx, rhine.Document, store.StatusProcessing, ""); err != nil {
		t.Fatal(err)
	}
	checkNeighbors(t, pg, expectedPassageGraph(ports), ids, 2, "rhine processing")
	mustWrite(t, st, rhine)

	// Replacing a version swaps its edges.
	v2 := rhineV2().write(rhine.Document.ID)
	mustWrite(t, st, v2)
	checkNeighbors(t, pg, expectedPassageGraph(ports, v2), ids, 2, "after replace")

	// A deleted document's chunks disappear and its share of the counts.
	if err := st.DeleteDocument(ctx, ports.Document.ID); err != nil {
		t.Fatal(err)
	}
	checkNeighbors(t, pg, expectedPassageGraph(v2), ids, 2, "after delete")
	checkNeighbors(t, pg, expectedPassageGraph(v2), ids, 0, "after delete")
}

// testNeighborsMatchScan checks that the two ways of reading the passage
// graph agree: the entities' neighbourhoods hold exactly the edges
// ScanMentions yields, and the chunks' the same edges seen from the other end.
func (s suite) testNeighborsMatchScan(t *testing.T) {
	st, _ := s.fresh(t)
	ctx := ctxFor(t)
	pg := passageGraph(t, st)
	gs := scanner(t, st)
	mustWrite(t, st, rhineV1().write(), ports().write(), rice().write(), tokyo().write())
	var scan []store.Mention
	entities, chunks := map[string]bool{}, map[string]bool{}
	if err := gs.ScanMentions(ctx, func(m store.Mention) error {
		scan = append(scan, m)
		entities[m.EntityID], chunks[m.ChunkID] = true, true
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	sortMentions(scan)
	keys := func(m map[string]bool) []string {
		var out []string
		for k := range m {
			out = append(out, k)
		}
		return out
	}
	ens, err := pg.EntityNeighbors(ctx, keys(entities), 0)
	if err != nil {
		t.Fatal(err)
	}
	var fromEntities []store.Mention
	for _, e := range ens {
		if e.Chunks != len(e.ChunkList) {
			t.Errorf("entity %s: count %d, %d chunks listed", e.ID, e.Chunks, len(e.ChunkList))
		}
		for _, c := range e.ChunkList {
			fromEntities = append(fromEntities, store.Mention{EntityID: e.ID, ChunkID: c.ID, DocID: c.DocID})
		}
	}
	sortMentions(fromEntities)
	if !reflect.DeepEqual(fromEntities, scan) {
		t.Errorf("EntityNeighbors edges %v\nScanMentions %v", fromEntities, scan)
	}
	cns, err := pg.ChunkNeighbors(ctx, keys(chunks), 0)
	if err != nil {
		t.Fatal(err)
	}
	var fromChunks []store.Mention
	for _, c := range cns {
		if c.Hubs != 0 {
			t.Errorf("chunk %s: %d hubs with no limit", c.ID, c.Hubs)
		}
		for _, e := range c.Entities {
			fromChunks = append(fromChunks, store.Mention{EntityID: e, ChunkID: c.ID, DocID: c.DocID})
		}
	}
	sortMentions(fromChunks)
	if !reflect.DeepEqual(fromChunks, scan) {
		t.Errorf("ChunkNeighbors edges %v\nScanMentions %v", fromChunks, scan)
	}
}
