package storetest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/docgraph/docgraph/graphbuild"
	"github.com/docgraph/docgraph/store"
)

func (s suite) testEmptyStore(t *testing.T) {
	st, _ := s.fresh(t)
	ctx := ctxFor(t)
	stats, err := st.Stats(ctx)
	if err != nil {
		t.Fatalf("Stats: %v", err)
	}
	if stats.Documents+stats.Chunks+stats.Entities+stats.Relations+stats.Mentions != 0 {
		t.Errorf("empty store Stats = %+v", stats)
	}
	if want := Options().Embedder; stats.Embedder != want || st.Embedder() != want {
		t.Errorf("embedder = %+v / %+v, want %+v", stats.Embedder, st.Embedder(), want)
	}
	docs, err := st.Documents(ctx)
	if err != nil || len(docs) != 0 {
		t.Errorf("Documents = %v, %v; want none", docs, err)
	}
	q := Embedder().Vector("anything")
	if hits, err := st.SearchChunks(ctx, q, 5); err != nil || len(hits) != 0 {
		t.Errorf("SearchChunks = %v, %v", hits, err)
	}
	if hits, err := st.SearchEntities(ctx, q, 5); err != nil || len(hits) != 0 {
		t.Errorf("SearchEntities = %v, %v", hits, err)
	}
	if hits, err := st.SearchRelations(ctx, q, 5); err != nil || len(hits) != 0 {
		t.Errorf("SearchRelations = %v, %v", hits, err)
	}
	if hits, err := st.SearchChunksText(ctx, "anything", 5); err != nil || len(hits) != 0 {
		t.Errorf("SearchChunksText = %v, %v", hits, err)
	}
	if hits, err := st.SearchEntitiesText(ctx, "anything", 5); err != nil || len(hits) != 0 {
		t.Errorf("SearchEntitiesText = %v, %v", hits, err)
	}
	for name, fn := range map[string]func() (int, error){
		"Chunks":           func() (int, error) { r, err := st.Chunks(ctx, []string{"x"}); return len(r), err },
		"Entities":         func() (int, error) { r, err := st.Entities(ctx, []string{"x"}); return len(r), err },
		"Relations":        func() (int, error) { r, err := st.Relations(ctx, []string{"x"}); return len(r), err },
		"RelationsOf":      func() (int, error) { r, err := st.RelationsOf(ctx, []string{"x"}, 0); return len(r), err },
		"MentionsOf":       func() (int, error) { r, err := st.MentionsOf(ctx, []string{"x"}, 0); return len(r), err },
		"EntitiesOfChunks": func() (int, error) { r, err := st.EntitiesOfChunks(ctx, []string{"x"}); return len(r), err },
		"DocumentChunks":   func() (int, error) { r, err := st.DocumentChunks(ctx, "x"); return len(r), err },
	} {
		if n, err := fn(); err != nil || n != 0 {
			t.Errorf("%s of unknown ids = %d rows, %v; want none, no error", name, n, err)
		}
	}
}

func (s suite) testWriteAndReadBack(t *testing.T) {
	st, _ := s.fresh(t)
	ctx := ctxFor(t)
	w := rhineV1().write()
	mustWrite(t, st, w)

	d, err := st.Document(ctx, w.Document.ID)
	if err != nil {
		t.Fatalf("Document: %v", err)
	}
	want := w.Document
	if d.ID != want.ID || d.Path != want.Path || d.Title != want.Title || d.Hash != want.Hash ||
		d.Format != want.Format || d.Fingerprint != want.Fingerprint || d.Size != want.Size {
		t.Errorf("Document = %+v, want %+v", d, want)
	}
	if !d.ModTime.Equal(want.ModTime) {
		t.Errorf("ModTime = %v, want %v", d.ModTime, want.ModTime)
	}
	if d.FileKey != want.FileKey || !slices.Equal(d.Warnings, want.Warnings) || len(d.Warnings) != 2 {
		t.Errorf("FileKey %q, Warnings %q; want %q, %q", d.FileKey, d.Warnings, want.FileKey, want.Warnings)
	}
	// A lifecycle row never carries a file key: a file must be read again
	// until a write has stored what it holds.
	pending := want
	pending.ID, pending.Path = "doc-pending-key", "geo/pending.md"
	if err := st.SetStatus(ctx, pending, store.StatusPending, ""); err != nil {
		t.Fatal(err)
	}
	if p, err := st.Document(ctx, pending.ID); err != nil || p.FileKey != "" {
		t.Errorf("SetStatus stored file key %q (err %v); want none", p.FileKey, err)
	}
	if err := st.DeleteDocument(ctx, pending.ID); err != nil {
		t.Fatal(err)
	}
	if err := st.SetFileKey(ctx, want.ID, "size=1;mtime=2"); err != nil {
		t.Fatalf("SetFileKey: %v", err)
	}
	if d, err := st.Document(ctx, want.ID); err != nil || d.FileKey != "size=1;mtime=2" || d.Status != store.StatusDone {
		t.Errorf("after SetFileKey: %+v, %v", d, err)
	}
	if err := st.SetFileKey(ctx, "no-such-doc", "k"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("SetFileKey of an unknown id = %v, want ErrNotFound", err)
	}
	if d.Status != store.StatusDone || d.Error != "" || d.Chunks != len(w.Chunks) || d.UpdatedAt.IsZero() {
		t.Errorf("Document status %q error %q chunks %d updated %v; want done, no error, %d chunks, a time", d.Status, d.Error, d.Chunks, d.UpdatedAt, len(w.Chunks))
	}
	byPath, err := st.DocumentByPath(ctx, want.Path)
	if err != nil || byPath.ID != want.ID {
		t.Errorf("DocumentByPath(%s) = %v, %v", want.Path, byPath, err)
	}
	docs, err := st.Documents(ctx)
	if err != nil || len(docs) != 1 || docs[0].ID != want.ID {
		t.Errorf("Documents = %v, %v", docs, err)
	}

	chunks, err := st.DocumentChunks(ctx, want.ID)
	if err != nil {
		t.Fatalf("DocumentChunks: %v", err)
	}
	if !reflect.DeepEqual(chunks, w.Chunks) {
		t.Errorf("DocumentChunks =\n%+v\nwant\n%+v", chunks, w.Chunks)
	}
	got, err := st.Chunks(ctx, []string{w.Chunks[2].ID, "no-such-chunk", w.Chunks[0].ID})
	if err != nil {
		t.Fatalf("Chunks: %v", err)
	}
	sort.Slice(got, func(i, j int) bool { return got[i].Index < got[j].Index })
	if len(got) != 2 || !reflect.DeepEqual(got[0], w.Chunks[0]) || !reflect.DeepEqual(got[1], w.Chunks[2]) {
		t.Errorf("Chunks(2, missing, 0) = %+v", got)
	}

	u := universeOf(w)
	sn := takeSnapshot(t, st, u)
	wantEnts, wantRels := expectedGraph(t, w)
	if !reflect.DeepEqual(sn.Entities, wantEnts) {
		t.Errorf("Entities =\n%s\nwant the merge of all mentions\n%s", brief(sn.Entities), brief(wantEnts))
	}
	if !reflect.DeepEqual(sn.Relations, wantRels) {
		t.Errorf("Relations =\n%s\nwant\n%s", brief(sn.Relations), brief(wantRels))
	}
	rhine := graphbuild.EntityID("Rhine")
	for _, e := range sn.Entities {
		if e.ID == rhine && (e.Mentions != 3 || !strings.Contains(e.Description, "Basel") || !strings.Contains(e.Description, "Rotterdam")) {
			t.Errorf("Rhine = %+v; want 3 mentions and every chunk's fragment", e)
		}
	}
	var wantMentions []store.Mention
	for _, m := range w.Entities {
		wantMentions = append(wantMentions, store.Mention{EntityID: m.EntityID, ChunkID: m.ChunkID, DocID: w.Document.ID})
	}
	sortMentions(wantMentions)
	if !reflect.DeepEqual(sn.Mentions, wantMentions) || !reflect.DeepEqual(sn.ChunkEnts, wantMentions) {
		t.Errorf("MentionsOf = %v\nEntitiesOfChunks = %v\nwant %v", sn.Mentions, sn.ChunkEnts, wantMentions)
	}
	wantStats := store.Stats{
		Documents: 1, ByStatus: map[store.Status]int{store.StatusDone: 1}, Chunks: len(w.Chunks),
		Entities: len(wantEnts), Relations: len(wantRels), Mentions: len(wantMentions), Embedder: Options().Embedder,
	}
	if !reflect.DeepEqual(sn.Stats, wantStats) {
		t.Errorf("Stats = %+v, want %+v", sn.Stats, wantStats)
	}
}

func (s suite) testRewriteIsIdempotent(t *testing.T) {
	st, _ := s.fresh(t)
	a, p := rhineV1().write(), ports().write()
	mustWrite(t, st, a, p)
	u := universeOf(a, p)
	before := takeSnapshot(t, st, u)
	mustWrite(t, st, a)
	sameSnapshot(t, "after rewriting the same document", takeSnapshot(t, st, u), before)
	mustWrite(t, st, p, a)
	sameSnapshot(t, "after rewriting both", takeSnapshot(t, st, u), before)
}

func (s suite) testReplaceVersion(t *testing.T) {
	st, closeFn := s.fresh(t)
	ctx := ctxFor(t)
	v1, v2, p := rhineV1().write(), rhineV2().write(v1ID()), ports().write()
	mustWrite(t, st, v1, p, v2)
	u := universeOf(v1, v2, p)

	if _, err := st.Document(ctx, v1.Document.ID); !isNotFound(err) {
		t.Errorf("Document(old version) error = %v, want ErrNotFound", err)
	}
	if d, err := st.DocumentByPath(ctx, v2.Document.Path); err != nil || d.ID != v2.Document.ID {
		t.Errorf("DocumentByPath = %+v, %v; want the new version", d, err)
	}
	if cs, err := st.DocumentChunks(ctx, v1.Document.ID); err != nil || len(cs) != 0 {
		t.Errorf("old version's chunks = %d, %v; want none", len(cs), err)
	}
	oldOnly := []string{v1.Chunks[0].ID} // the Alps chunk is not in v2
	if cs, err := st.Chunks(ctx, oldOnly); err != nil || len(cs) != 0 {
		t.Errorf("Chunks(old chunk) = %v, %v", cs, err)
	}
	if ms, err := st.EntitiesOfChunks(ctx, oldOnly); err != nil || len(ms) != 0 {
		t.Errorf("EntitiesOfChunks(old chunk) = %v, %v", ms, err)
	}
	for _, name := range []string{"Alps", "North Sea"} {
		if es, err := st.Entities(ctx, []string{graphbuild.EntityID(name)}); err != nil || len(es) != 0 {
			t.Errorf("%s, only in the old version, = %v, %v; want gone", name, es, err)
		}
	}
	alpsRel := graphbuild.RelationID(graphbuild.EntityID("Rhine"), graphbuild.EntityID("Alps"), "")
	if rs, err := st.Relations(ctx, []string{alpsRel}); err != nil || len(rs) != 0 {
		t.Errorf("Rhine–Alps relation = %v, %v; want gone", rs, err)
	}
	es, err := st.Entities(ctx, []string{graphbuild.EntityID("Rhine"), graphbuild.EntityID("Strasbourg")})
	if err != nil || len(es) != 2 {
		t.Fatalf("Rhine and Strasbourg = %v, %v; want both", es, err)
	}
	for _, e := range es {
		if strings.Contains(e.Description, "rises") || strings.Contains(e.Description, "major European") {
			t.Errorf("%s still carries the old version's fragment: %q", e.Name, e.Description)
		}
	}

	got := takeSnapshot(t, st, u)
	closeFn()
	clean, _ := s.fresh(t)
	mustWrite(t, clean, p, rhineV2().write())
	sameSnapshot(t, "replaced store vs clean store with the new version", got, takeSnapshot(t, clean, u))
	wantEnts, wantRels := expectedGraph(t, p, v2)
	if !reflect.DeepEqual(got.Entities, wantEnts) || !reflect.DeepEqual(got.Relations, wantRels) {
		t.Errorf("graph after replace is not the merge of the remaining mentions:\n got %s\n%s\nwant %s\n%s", brief(got.Entities), brief(got.Relations), brief(wantEnts), brief(wantRels))
	}
}

func v1ID() string { return rhineV1().id }

func (s suite) testDeleteEqualsCleanStore(t *testing.T) {
	st, closeFn := s.fresh(t)
	ctx := ctxFor(t)
	a, p := rhineV1().write(), ports().write()
	mustWrite(t, st, a, p)
	u := universeOf(a, p)
	if err := st.DeleteDocument(ctx, a.Document.ID); err != nil {
		t.Fatalf("DeleteDocument: %v", err)
	}
	got := takeSnapshot(t, st, u)
	closeFn()

	clean, _ := s.fresh(t)
	mustWrite(t, clean, p)
	sameSnapshot(t, "after delete vs clean store", got, takeSnapshot(t, clean, u))
	wantEnts, wantRels := expectedGraph(t, p)
	if !reflect.DeepEqual(got.Entities, wantEnts) || !reflect.DeepEqual(got.Relations, wantRels) {
		t.Errorf("graph after delete is not the merge of the remaining mentions")
	}
	for _, e := range got.Entities {
		if e.ID == graphbuild.EntityID("Rotterdam") && (e.Mentions != 2 || strings.Contains(e.Description, "Largest")) {
			t.Errorf("shared Rotterdam = %+v; want only the ports document's share", e)
		}
	}
	for _, r := range got.Relations {
		if r.ID == graphbuild.RelationID(graphbuild.EntityID("Rotterdam"), graphbuild.EntityID("Rhine"), "") && r.Weight != 1 {
			t.Errorf("shared Rotterdam–Rhine weight = %v, want 1 (the deleted document's share gone)", r.Weight)
		}
	}
}

func (s suite) testWriteOrderIndependent(t *testing.T) {
	a, p := rhineV1().write(), ports().write()
	u := universeOf(a, p)
	st, closeFn := s.fresh(t)
	mustWrite(t, st, a, p)
	first := takeSnapshot(t, st, u)
	closeFn()
	st, _ = s.fresh(t)
	mustWrite(t, st, p, a)
	sameSnapshot(t, "ports then rhine vs rhine then ports", takeSnapshot(t, st, u), first)
	wantEnts, wantRels := expectedGraph(t, a, p)
	if !reflect.DeepEqual(first.Entities, wantEnts) || !reflect.DeepEqual(first.Relations, wantRels) {
		t.Errorf("graph is not the merge of all mentions")
	}
	for _, r := range first.Relations {
		if r.ID == graphbuild.RelationID(graphbuild.EntityID("Rotterdam"), graphbuild.EntityID("Rhine"), "") && r.Weight != 2 {
			t.Errorf("Rotterdam–Rhine weight = %v, want 2 (one per document)", r.Weight)
		}
	}
}

// testOrphanRelations covers relations that lose their last mention while
// both endpoints live on, and relations (as KG imports can write) whose
// endpoint entity is mentioned only by another document.
func (s suite) testOrphanRelations(t *testing.T) {
	st, _ := s.fresh(t)
	ctx := ctxFor(t)
	a, p := rhineV1().write(), ports().write()
	mustWrite(t, st, a, p)
	rhine, basel, antwerp := graphbuild.EntityID("Rhine"), graphbuild.EntityID("Basel"), graphbuild.EntityID("Antwerp")

	// A typed relation in a third document from Antwerp (mentioned there) to
	// Basel (mentioned only by the Rhine document).
	kg := &store.DocumentWrite{
		Document: store.Document{ID: "doc-kg", Path: "kg/links.kg", Format: "kg"},
		Chunks:   []store.Chunk{{ID: "doc-kg#000", DocID: "doc-kg", Text: "Antwerp TRADES_WITH Basel", Tokens: 3, End: 25, Embedding: Embedder().Vector("Antwerp trades with Basel")}},
		Entities: []store.EntityMention{{EntityID: antwerp, ChunkID: "doc-kg#000", Name: "Antwerp", Type: "city"}},
	}
	typed := graphbuild.RelationID(antwerp, basel, "TRADES_WITH")
	kg.Relations = []store.RelationMention{{RelationID: typed, SourceID: antwerp, TargetID: basel, Type: "TRADES_WITH", ChunkID: "doc-kg#000", Weight: 1}}
	mustWrite(t, st, kg)
	if rs, err := st.Relations(ctx, []string{typed}); err != nil || len(rs) != 1 || rs[0].Type != "TRADES_WITH" || rs[0].SourceID != antwerp || rs[0].TargetID != basel {
		t.Fatalf("typed relation = %+v, %v", rs, err)
	}

	if err := st.DeleteDocument(ctx, a.Document.ID); err != nil {
		t.Fatalf("DeleteDocument: %v", err)
	}
	baselRhine := graphbuild.RelationID(basel, rhine, "")
	if rs, err := st.Relations(ctx, []string{baselRhine, typed}); err != nil || len(rs) != 0 {
		t.Errorf("relations of the deleted document / to its vanished entity = %+v, %v; want none", rs, err)
	}
	rs, err := st.RelationsOf(ctx, []string{antwerp, basel}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if r.SourceID == basel || r.TargetID == basel {
			t.Errorf("RelationsOf returns %+v, which points at the deleted Basel", r)
		}
	}
	// Both endpoints back: the typed relation returns, from the mention the
	// kg document kept all along.
	mustWrite(t, st, a)
	if rs, err := st.Relations(ctx, []string{typed}); err != nil || len(rs) != 1 {
		t.Errorf("typed relation after Basel returned = %+v, %v; want it back", rs, err)
	}
	if err := st.DeleteDocument(ctx, kg.Document.ID); err != nil {
		t.Fatal(err)
	}
	if rs, err := st.Relations(ctx, []string{typed}); err != nil || len(rs) != 0 {
		t.Errorf("typed relation after its only document went = %+v, %v", rs, err)
	}
}

func (s suite) testVectorSearch(t *testing.T) {
	st, _ := s.fresh(t)
	ctx := ctxFor(t)
	a, p := rhineV1().write(), ports().write()
	vecs := randomVectors(7, 40)
	q := randomVectors(99, 1)[0]
	// One chunk points exactly along the query, scaled: cosine ignores length.
	for i := range vecs[17] {
		vecs[17][i] = 3 * q[i]
	}
	v := sized("doc-vectors", "vectors.md", "vectors", len(vecs))
	for i := range v.Chunks {
		v.Chunks[i].Embedding = vecs[i]
	}
	mustWrite(t, st, a, p, v)

	chunkVecs := map[string][]float32{}
	for _, w := range []*store.DocumentWrite{a, p, v} {
		for _, c := range w.Chunks {
			chunkVecs[c.ID] = c.Embedding
		}
	}
	want := bruteForce(q, chunkVecs)
	if want[0].id != v.Chunks[17].ID {
		t.Fatalf("fixture: the scaled query vector is not the best match")
	}
	for _, k := range []int{1, 5, 12, 1000} {
		hits, err := st.SearchChunks(ctx, q, k)
		if err != nil {
			t.Fatalf("SearchChunks(k=%d): %v", k, err)
		}
		ids, scores := make([]string, len(hits)), make([]float64, len(hits))
		for i, h := range hits {
			ids[i], scores[i] = h.ID, h.Score
			if h.DocPath == "" || h.Text == "" {
				t.Errorf("hit %s lacks its text or document path: %+v", h.ID, h)
			}
		}
		checkRanking(t, fmt.Sprintf("SearchChunks k=%d", k), ids, scores, want, k)
	}
	if hits, err := st.SearchChunks(ctx, q, 0); err != nil || len(hits) != 0 {
		t.Errorf("SearchChunks(k=0) = %d hits, %v", len(hits), err)
	}

	u := universeOf(a, p, v)
	ents, err := st.Entities(ctx, u.entities)
	if err != nil {
		t.Fatal(err)
	}
	wantEnts, _ := expectedGraph(t, a, p, v)
	entVecs := map[string][]float32{}
	for _, e := range wantEnts {
		entVecs[e.ID] = e.Embedding
	}
	if len(ents) != len(wantEnts) {
		t.Fatalf("%d entities stored, want %d", len(ents), len(wantEnts))
	}
	for _, text := range []string{"river flowing to the sea", "port city"} {
		eq := Embedder().Vector(text)
		want := bruteForce(eq, entVecs)
		for _, k := range []int{1, 3, 100} {
			hits, err := st.SearchEntities(ctx, eq, k)
			if err != nil {
				t.Fatalf("SearchEntities: %v", err)
			}
			ids, scores := make([]string, len(hits)), make([]float64, len(hits))
			for i, h := range hits {
				ids[i], scores[i] = h.ID, h.Score
				if h.Name == "" {
					t.Errorf("entity hit %s has no name", h.ID)
				}
			}
			checkRanking(t, fmt.Sprintf("SearchEntities(%q, k=%d)", text, k), ids, scores, want, k)
		}
	}

	_, wantRels := expectedGraph(t, a, p, v)
	relVecs := map[string][]float32{}
	for _, r := range wantRels {
		relVecs[r.ID] = r.Embedding
	}
	rq := Embedder().Vector("mouth of the river")
	wantR := bruteForce(rq, relVecs)
	for _, k := range []int{2, 100} {
		hits, err := st.SearchRelations(ctx, rq, k)
		if err != nil {
			t.Fatalf("SearchRelations: %v", err)
		}
		ids, scores := make([]string, len(hits)), make([]float64, len(hits))
		for i, h := range hits {
			ids[i], scores[i] = h.ID, h.Score
		}
		checkRanking(t, fmt.Sprintf("SearchRelations k=%d", k), ids, scores, wantR, k)
	}

	// After a delete the vectors of what went are no longer found.
	if err := st.DeleteDocument(ctx, v.Document.ID); err != nil {
		t.Fatal(err)
	}
	hits, err := st.SearchChunks(ctx, q, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != len(a.Chunks)+len(p.Chunks) {
		t.Errorf("after deleting the vectors document SearchChunks finds %d chunks, want %d", len(hits), len(a.Chunks)+len(p.Chunks))
	}
	for _, h := range hits {
		if h.DocID == v.Document.ID {
			t.Errorf("deleted chunk %s still found", h.ID)
		}
	}

	// The same chunk ids come back with new vectors: searches rank by the new ones.
	fresh := randomVectors(8, len(vecs))
	for i := range v.Chunks {
		v.Chunks[i].Embedding = fresh[i]
		chunkVecs[v.Chunks[i].ID] = fresh[i]
	}
	mustWrite(t, st, v)
	want = bruteForce(q, chunkVecs)
	hits, err = st.SearchChunks(ctx, q, 8)
	if err != nil {
		t.Fatal(err)
	}
	ids, scores := make([]string, len(hits)), make([]float64, len(hits))
	for i, h := range hits {
		ids[i], scores[i] = h.ID, h.Score
	}
	checkRanking(t, "SearchChunks after rewriting vectors", ids, scores, want, 8)
}

func (s suite) testTextSearch(t *testing.T) {
	st, _ := s.fresh(t)
	ctx := ctxFor(t)
	a, p := rhineV1().write(), ports().write()
	mustWrite(t, st, a, p)

	for _, c := range []struct {
		query string
		want  string // best chunk
	}{
		{"chemical industry", a.Chunks[1].ID},
		{"Which ports compete for containers?", p.Chunks[0].ID},
		{"scheldt", p.Chunks[1].ID},
		{"Where does the Rhine rise? Alps", a.Chunks[0].ID},
	} {
		hits, err := st.SearchChunksText(ctx, c.query, 3)
		if err != nil {
			t.Fatalf("SearchChunksText(%q): %v", c.query, err)
		}
		if len(hits) == 0 || hits[0].ID != c.want {
			t.Errorf("SearchChunksText(%q) = %v, want %s first", c.query, hitIDs(hits), c.want)
			continue
		}
		if len(hits) > 3 {
			t.Errorf("SearchChunksText(%q) returned %d hits for k=3", c.query, len(hits))
		}
		for i, h := range hits {
			if h.Score <= 0 || (i > 0 && h.Score > hits[i-1].Score) {
				t.Errorf("SearchChunksText(%q) scores %v: want positive and descending", c.query, hitScores(hits))
			}
			if h.DocPath == "" || h.DocTitle == "" {
				t.Errorf("hit %s lacks document path or title", h.ID)
			}
		}
	}
	if hits, err := st.SearchChunksText(ctx, "volcano", 5); err != nil || len(hits) != 0 {
		t.Errorf("SearchChunksText(no such word) = %v, %v", hitIDs(hits), err)
	}

	for _, c := range []struct{ query, want string }{
		{"Scheldt", "Scheldt"},
		{"rotterdam", "Rotterdam"},
		{"Belgian port", "Antwerp"},
		{"pharmaceutical chemical industry Basel", "Basel"},
		{"container", "Rotterdam"}, // a fragment the second document added
	} {
		hits, err := st.SearchEntitiesText(ctx, c.query, 5)
		if err != nil {
			t.Fatalf("SearchEntitiesText(%q): %v", c.query, err)
		}
		if len(hits) == 0 || hits[0].Name != c.want {
			names := []string{}
			for _, h := range hits {
				names = append(names, fmt.Sprintf("%s=%.3f", h.Name, h.Score))
			}
			t.Errorf("SearchEntitiesText(%q) = %v, want %s first", c.query, names, c.want)
			continue
		}
		for i, h := range hits {
			if h.Score <= 0 || (i > 0 && h.Score > hits[i-1].Score) {
				t.Errorf("SearchEntitiesText(%q): scores not positive and descending", c.query)
			}
		}
	}

	// Text search follows deletes too.
	if err := st.DeleteDocument(ctx, p.Document.ID); err != nil {
		t.Fatal(err)
	}
	if hits, err := st.SearchChunksText(ctx, "Scheldt", 5); err != nil || len(hits) != 0 {
		t.Errorf("after delete SearchChunksText(Scheldt) = %v, %v", hitIDs(hits), err)
	}
	if hits, err := st.SearchEntitiesText(ctx, "Scheldt", 5); err != nil || len(hits) != 0 {
		t.Errorf("after delete SearchEntitiesText(Scheldt) = %d hits, %v", len(hits), err)
	}
	if hits, err := st.SearchEntitiesText(ctx, "container", 5); err != nil || len(hits) != 0 {
		t.Errorf("after delete SearchEntitiesText(container), a fragment only the deleted document gave, = %d hits, %v", len(hits), err)
	}
	// New rows written after the delete must not inherit its index entries.
	mustWrite(t, st, sized("doc-later", "later.md", "filler", 4))
	if hits, err := st.SearchChunksText(ctx, "Scheldt Antwerp", 5); err != nil || len(hits) != 0 {
		t.Errorf("after delete and a new write SearchChunksText(Scheldt Antwerp) = %v, %v", hitIDs(hits), err)
	}
	if hits, err := st.SearchChunksText(ctx, "filler", 10); err != nil || len(hits) != 4 {
		t.Errorf("SearchChunksText(filler) = %v, %v; want the 4 new chunks", hitIDs(hits), err)
	}
}

func (s suite) testTextSearchHostileQueries(t *testing.T) {
	st, _ := s.fresh(t)
	ctx := ctxFor(t)
	mustWrite(t, st, rhineV1().write(), ports().write())
	for _, c := range []struct {
		query    string
		findsAny bool
	}{
		{`"`, false},
		{`*`, false},
		{`AND`, false},
		{`-`, false},
		{`:`, false},
		{``, false},
		{`   `, false},
		{`"Rhine`, true},
		{`Rhine*`, true},
		{`Rhine AND`, true},
		{`NOT Rhine`, true},
		{`-Rhine`, true},
		{`text:Rhine`, true},
		{`name:Basel OR`, true},
		{`NEAR(Rhine Basel)`, true},
		{`(Rhine`, true},
		{`Rhine)`, true},
		{`^Rhine`, true},
		{`'Rhine'`, true},
		{`{Rhine}`, true},
		{`Rhine + Basel`, true},
		{`Rhine's "mouth" -- at: Rotterdam; AND OR NOT *`, true},
		{"\x00Rhine\\", true},
		{`Zürich über Straße`, false},
		{`ライン川`, false},
	} {
		ch, err := st.SearchChunksText(ctx, c.query, 5)
		if err != nil {
			t.Errorf("SearchChunksText(%q): %v", c.query, err)
		}
		en, err := st.SearchEntitiesText(ctx, c.query, 5)
		if err != nil {
			t.Errorf("SearchEntitiesText(%q): %v", c.query, err)
		}
		if c.findsAny && (len(ch) == 0 || len(en) == 0) {
			t.Errorf("query %q found %d chunks and %d entities; its word Rhine/Basel should match", c.query, len(ch), len(en))
		}
	}
}

func (s suite) testNeighbourhoods(t *testing.T) {
	st, _ := s.fresh(t)
	ctx := ctxFor(t)
	a, p := rhineV1().write(), ports().write()
	mustWrite(t, st, a, p)
	_, rels := expectedGraph(t, a, p)
	rhine, rotterdam := graphbuild.EntityID("Rhine"), graphbuild.EntityID("Rotterdam")

	for _, ids := range [][]string{{rhine}, {rhine, rotterdam}, {graphbuild.EntityID("Scheldt")}} {
		in := map[string]bool{}
		for _, id := range ids {
			in[id] = true
		}
		var want []string
		for _, r := range rels {
			if in[r.SourceID] || in[r.TargetID] {
				want = append(want, r.ID)
			}
		}
		sort.Strings(want)
		got, err := st.RelationsOf(ctx, ids, 0)
		if err != nil {
			t.Fatalf("RelationsOf: %v", err)
		}
		gotIDs := []string{}
		for _, r := range got {
			gotIDs = append(gotIDs, r.ID)
			if r.Description == "" || r.Weight <= 0 {
				t.Errorf("RelationsOf returned an unmerged relation %+v", r)
			}
		}
		sort.Strings(gotIDs)
		if !reflect.DeepEqual(gotIDs, want) {
			t.Errorf("RelationsOf(%v) = %v, want %v", ids, gotIDs, want)
		}
		if lim, err := st.RelationsOf(ctx, ids, 1); err != nil || len(lim) != min(1, len(want)) {
			t.Errorf("RelationsOf(limit 1) = %d relations, %v", len(lim), err)
		}
	}

	var want []store.Mention
	for _, w := range []*store.DocumentWrite{a, p} {
		for _, m := range w.Entities {
			if m.EntityID == rotterdam {
				want = append(want, store.Mention{EntityID: m.EntityID, ChunkID: m.ChunkID, DocID: w.Document.ID})
			}
		}
	}
	sortMentions(want)
	got, err := st.MentionsOf(ctx, []string{rotterdam, "no-such-entity"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	sortMentions(got)
	if len(want) != 3 || !reflect.DeepEqual(got, want) {
		t.Errorf("MentionsOf(Rotterdam) = %v, want %v", got, want)
	}
	if lim, err := st.MentionsOf(ctx, []string{rotterdam, rhine}, 2); err != nil || len(lim) != 2 {
		t.Errorf("MentionsOf(limit 2) = %v, %v", lim, err)
	}

	chunk := p.Chunks[1]
	var wantC []store.Mention
	for _, m := range p.Entities {
		if m.ChunkID == chunk.ID {
			wantC = append(wantC, store.Mention{EntityID: m.EntityID, ChunkID: m.ChunkID, DocID: p.Document.ID})
		}
	}
	sortMentions(wantC)
	gotC, err := st.EntitiesOfChunks(ctx, []string{chunk.ID})
	if err != nil {
		t.Fatal(err)
	}
	sortMentions(gotC)
	if len(wantC) != 4 || !reflect.DeepEqual(gotC, wantC) {
		t.Errorf("EntitiesOfChunks(%s) = %v, want %v", chunk.ID, gotC, wantC)
	}
}

func (s suite) testStatusLifecycle(t *testing.T) {
	st, _ := s.fresh(t)
	ctx := ctxFor(t)
	w := rhineV1().write()
	bare := w.Document
	status := func(want store.Status, reason string) {
		t.Helper()
		d, err := st.Document(ctx, bare.ID)
		if err != nil {
			t.Fatalf("Document after SetStatus(%s): %v", want, err)
		}
		if d.Status != want || d.Error != reason || d.Path != bare.Path {
			t.Errorf("Document = status %q error %q path %q; want %q %q %q", d.Status, d.Error, d.Path, want, reason, bare.Path)
		}
	}
	// Another, done document stays searchable throughout: a hidden document
	// must not eat into k.
	other := ports().write()
	mustWrite(t, st, other)
	invisible := func(when string) {
		t.Helper()
		if hits, err := st.SearchChunksText(ctx, "Basel chemical Rotterdam", 10); err != nil || len(hits) != 2 || hits[0].DocID != other.Document.ID || hits[1].DocID != other.Document.ID {
			t.Errorf("%s: SearchChunksText finds %v, %v; want only the other document's 2 chunks", when, hitIDs(hits), err)
		}
		for _, k := range []int{1, 2, 10} {
			hits, err := st.SearchChunks(ctx, w.Chunks[1].Embedding, k)
			if err != nil || len(hits) != min(k, 2) {
				t.Errorf("%s: SearchChunks(k=%d) finds %v, %v; want %d of the other document's chunks", when, k, hitIDs(hits), err, min(k, 2))
			}
			for _, h := range hits {
				if h.DocID != other.Document.ID {
					t.Errorf("%s: SearchChunks finds %s of a document not done", when, h.ID)
				}
			}
		}
	}

	if err := st.SetStatus(ctx, bare, store.StatusPending, ""); err != nil {
		t.Fatalf("SetStatus(unknown id, pending): %v", err)
	}
	status(store.StatusPending, "")
	if d, _ := st.Document(ctx, bare.ID); d != nil && d.Chunks != 0 {
		t.Errorf("bare row has %d chunks", d.Chunks)
	}
	if d, err := st.DocumentByPath(ctx, bare.Path); err != nil || d.ID != bare.ID {
		t.Errorf("DocumentByPath(bare row) = %v, %v", d, err)
	}
	invisible("pending")
	if err := st.SetStatus(ctx, bare, store.StatusProcessing, ""); err != nil {
		t.Fatal(err)
	}
	status(store.StatusProcessing, "")
	if err := st.SetStatus(ctx, bare, store.StatusFailed, "extract: model timed out"); err != nil {
		t.Fatal(err)
	}
	status(store.StatusFailed, "extract: model timed out")
	invisible("failed")
	stats, err := st.Stats(ctx)
	if err != nil || stats.Documents != 2 || stats.ByStatus[store.StatusFailed] != 1 || stats.ByStatus[store.StatusDone] != 1 || stats.Chunks != len(other.Chunks) {
		t.Errorf("Stats with one done document and one failed bare row = %+v, %v", stats, err)
	}

	mustWrite(t, st, w)
	status(store.StatusDone, "")
	if hits, err := st.SearchChunksText(ctx, "Basel chemical", 10); err != nil || len(hits) == 0 {
		t.Errorf("done document not found by text search: %v", err)
	}

	// Re-processing a stored document hides it from search until it is
	// written again; its graph stays.
	if err := st.SetStatus(ctx, bare, store.StatusProcessing, ""); err != nil {
		t.Fatal(err)
	}
	status(store.StatusProcessing, "")
	invisible("stored document back in processing")
	if cs, err := st.DocumentChunks(ctx, bare.ID); err != nil || len(cs) != len(w.Chunks) {
		t.Errorf("SetStatus touched the chunks: %d, %v", len(cs), err)
	}
	if err := st.SetStatus(ctx, bare, store.StatusFailed, "boom"); err != nil {
		t.Fatal(err)
	}
	invisible("stored document failed")
	mustWrite(t, st, w)
	status(store.StatusDone, "")
	if hits, err := st.SearchChunks(ctx, w.Chunks[1].Embedding, 1); err != nil || len(hits) != 1 || hits[0].ID != w.Chunks[1].ID {
		t.Errorf("SearchChunks after rewrite = %v, %v", hitIDs(hits), err)
	}
	if err := st.SetStatus(ctx, bare, store.Status("bogus"), ""); err == nil {
		t.Errorf("SetStatus(bogus status) succeeded")
	}
}

func (s suite) testRenameDocument(t *testing.T) {
	st, _ := s.fresh(t)
	ctx := ctxFor(t)
	w := rhineV1().write()
	mustWrite(t, st, w)
	before := takeSnapshot(t, st, universeOf(w))
	if err := st.RenameDocument(ctx, w.Document.ID, "moved/rhine.md"); err != nil {
		t.Fatalf("RenameDocument: %v", err)
	}
	if _, err := st.DocumentByPath(ctx, w.Document.Path); !isNotFound(err) {
		t.Errorf("DocumentByPath(old path) error = %v, want ErrNotFound", err)
	}
	d, err := st.DocumentByPath(ctx, "moved/rhine.md")
	if err != nil || d.ID != w.Document.ID || d.Status != store.StatusDone || d.Chunks != len(w.Chunks) {
		t.Fatalf("DocumentByPath(new path) = %+v, %v", d, err)
	}
	hits, err := st.SearchChunksText(ctx, "chemical", 1)
	if err != nil || len(hits) != 1 || hits[0].DocPath != "moved/rhine.md" {
		t.Errorf("search hit after rename = %+v, %v; want the new path", hits, err)
	}
	after := takeSnapshot(t, st, universeOf(w))
	after.Documents[0].Path = w.Document.Path
	sameSnapshot(t, "rename changes only the path", after, before)
	if err := st.RenameDocument(ctx, "no-such-doc", "x.md"); !isNotFound(err) {
		t.Errorf("RenameDocument(unknown) error = %v, want ErrNotFound", err)
	}
}

func (s suite) testNotFound(t *testing.T) {
	st, _ := s.fresh(t)
	ctx := ctxFor(t)
	mustWrite(t, st, ports().write())
	if _, err := st.Document(ctx, "no-such-doc"); !isNotFound(err) {
		t.Errorf("Document(unknown) error = %v", err)
	}
	if _, err := st.DocumentByPath(ctx, "no/such.md"); !isNotFound(err) {
		t.Errorf("DocumentByPath(unknown) error = %v", err)
	}
	if err := st.DeleteDocument(ctx, "no-such-doc"); !isNotFound(err) {
		t.Errorf("DeleteDocument(unknown) error = %v", err)
	}
	if stats, err := st.Stats(ctx); err != nil || stats.Documents != 1 {
		t.Errorf("a failed delete changed the store: %+v, %v", stats, err)
	}
}

// testCancelledWrite checks atomicity under cancellation: whatever the moment
// the context ends, the store holds the old state or the new one.
func (s suite) testCancelledWrite(t *testing.T) {
	st, _ := s.fresh(t)
	v1, p := rhineV1().write(), ports().write()
	mustWrite(t, st, v1, p)
	u := universeOf(v1, rhineV2().write(), p)
	old := takeSnapshot(t, st, u)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := st.WriteDocument(ctx, rhineV2().write(v1.Document.ID)); err == nil {
		t.Errorf("WriteDocument with a cancelled context succeeded")
	}
	sameSnapshot(t, "after a write with a cancelled context", takeSnapshot(t, st, u), old)
	if err := st.DeleteDocument(ctx, p.Document.ID); err == nil {
		t.Errorf("DeleteDocument with a cancelled context succeeded")
	}
	sameSnapshot(t, "after a delete with a cancelled context", takeSnapshot(t, st, u), old)

	// Cancel while the write runs, at a different moment each round.
	for round := 0; round < 6; round++ {
		cur := takeSnapshot(t, st, u)
		ctx, cancel := context.WithCancel(context.Background())
		var w *store.DocumentWrite
		if round%2 == 0 {
			w = rhineV2().write(v1.Document.ID)
		} else {
			w = rhineV1().write(rhineV2().id)
		}
		done := make(chan error, 1)
		go func() { done <- st.WriteDocument(ctx, w) }()
		for i := 0; i < round*3; i++ {
			runtime.Gosched() // the cancel lands at a different point each round
		}
		cancel()
		err := <-done
		got := takeSnapshot(t, st, u)
		if err != nil {
			sameSnapshot(t, fmt.Sprintf("round %d: failed write (%v) must leave the previous state", round, err), got, cur)
			continue
		}
		clean := expectedAfter(t, w, p)
		if !reflect.DeepEqual(got.Entities, clean.Entities) || !reflect.DeepEqual(got.Relations, clean.Relations) {
			t.Errorf("round %d: successful write left a graph that is not the new version's", round)
		}
	}
}

// expectedAfter is the graph of exactly these writes.
func expectedAfter(t *testing.T, ws ...*store.DocumentWrite) snapshot {
	ents, rels := expectedGraph(t, ws...)
	return snapshot{Entities: ents, Relations: rels}
}

func (s suite) testInvalidWrite(t *testing.T) {
	st, _ := s.fresh(t)
	ctx := ctxFor(t)
	p := ports().write()
	mustWrite(t, st, p)
	u := universeOf(p)
	before := takeSnapshot(t, st, u)

	dangling := rhineV1().write()
	dangling.Entities = append(dangling.Entities, store.EntityMention{EntityID: graphbuild.EntityID("Ghost"), ChunkID: "no-such-chunk", Name: "Ghost"})
	badDim := rhineV1().write()
	badDim.Chunks[0].Embedding = make([]float32, Dimension+3)
	noID := rhineV1().write()
	noID.Document.ID = ""
	for name, w := range map[string]*store.DocumentWrite{
		"mention of a chunk not in the document": dangling,
		"vector of the wrong dimension":          badDim,
		"empty document id":                      noID,
	} {
		if err := st.WriteDocument(ctx, w); err == nil {
			t.Errorf("WriteDocument(%s) succeeded", name)
		}
		sameSnapshot(t, "after rejected write: "+name, takeSnapshot(t, st, u), before)
	}
}

// testConcurrentReaders checks readers only ever see whole documents while a
// document is rewritten with 3 and then 6 chunks, again and again.
func (s suite) testConcurrentReaders(t *testing.T) {
	st, _ := s.fresh(t)
	ctx := ctxFor(t)
	static := sized("doc-static", "static.md", "steady", 2)
	small, big := sized("doc-flip", "flip.md", "flipper", 3), sized("doc-flip", "flip.md", "flipper", 6)
	mustWrite(t, st, static, small)

	stop := make(chan struct{})
	errs := make(chan error, 100)
	var wg sync.WaitGroup
	report := func(err error) {
		select {
		case errs <- err:
		default:
		}
	}
	readers := []func() error{
		func() error {
			cs, err := st.DocumentChunks(ctx, "doc-flip")
			if err == nil && len(cs) != 3 && len(cs) != 6 {
				err = fmt.Errorf("DocumentChunks saw %d chunks, want 3 or 6", len(cs))
			}
			return err
		},
		func() error {
			stats, err := st.Stats(ctx)
			if err == nil && stats.Chunks != 5 && stats.Chunks != 8 {
				err = fmt.Errorf("Stats saw %d chunks, want 5 or 8", stats.Chunks)
			}
			return err
		},
		func() error {
			hits, err := st.SearchChunksText(ctx, "flipper", 50)
			if err == nil && len(hits) != 3 && len(hits) != 6 {
				err = fmt.Errorf("text search saw %d chunks of the document, want 3 or 6", len(hits))
			}
			return err
		},
		func() error {
			d, err := st.Document(ctx, "doc-flip")
			if err == nil && d.Chunks != 3 && d.Chunks != 6 {
				err = fmt.Errorf("Document says %d chunks, want 3 or 6", d.Chunks)
			}
			return err
		},
	}
	for _, read := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := read(); err != nil {
					report(err)
					return
				}
			}
		}()
	}
	for i := 0; i < 16; i++ {
		w := big
		if i%2 == 1 {
			w = small
		}
		if err := st.WriteDocument(ctx, w); err != nil {
			report(err)
			break
		}
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func hitIDs(hits []store.ChunkHit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return out
}

func hitScores(hits []store.ChunkHit) []float64 {
	out := make([]float64, len(hits))
	for i, h := range hits {
		out[i] = h.Score
	}
	return out
}
