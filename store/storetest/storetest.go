// Package storetest is the conformance suite every store backend runs: the
// same writes, deletes, reads, searches and failure cases against fresh stores.
//
// A backend's test calls Run with a function that opens a fresh, empty store
// configured with Options (plus whatever the backend itself needs):
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store {
//			s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "g.db"), storetest.Options())
//			...
//			return s
//		})
//	}
//
// The suite closes every store it opens and never holds two open at once, so
// a server backend may hand out the same database each time, wiped clean,
// and drop what the test wrote in a t.Cleanup.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/docgraph/docgraph/embedstore"
	"github.com/docgraph/docgraph/graphbuild"
	"github.com/docgraph/docgraph/store"
)

// Dimension is the length of every vector the suite writes.
const Dimension = 16

// Embedder returns the embedder whose vectors the suite writes.
func Embedder() *embedstore.Hash { return embedstore.NewHash(embedstore.WithDimension(Dimension)) }

// CountingEmbedder is the suite's embedder, counting the texts it embeds:
// for tests that a write makes no vectors it should not.
type CountingEmbedder struct {
	*embedstore.Hash
	Texts int
}

// NewCountingEmbedder wraps Embedder.
func NewCountingEmbedder() *CountingEmbedder { return &CountingEmbedder{Hash: Embedder()} }

// EmbedDocuments embeds texts and counts them.
func (c *CountingEmbedder) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	c.Texts += len(texts)
	return c.Hash.EmbedDocuments(ctx, texts)
}

// Options are the store options every suite store must be opened with; a
// backend adds its own fields (credentials, database) to a copy.
func Options() store.Options {
	emb := Embedder()
	return store.Options{
		Embedder: store.EmbedderInfo{Name: emb.Name(), Dimension: emb.Dimension()},
		Merger:   graphbuild.NewMerger(emb),
	}
}

// Run runs the whole conformance suite, one subtest per behaviour, each on
// stores it opens with open.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	s := suite{open: open}
	for _, c := range []struct {
		name string
		fn   func(*testing.T)
	}{
		{"EmptyStore", s.testEmptyStore},
		{"WriteAndReadBack", s.testWriteAndReadBack},
		{"RewriteIsIdempotent", s.testRewriteIsIdempotent},
		{"ReplaceVersion", s.testReplaceVersion},
		{"DeleteEqualsCleanStore", s.testDeleteEqualsCleanStore},
		{"WriteOrderIndependent", s.testWriteOrderIndependent},
		{"OrphanRelations", s.testOrphanRelations},
		{"VectorSearch", s.testVectorSearch},
		{"TextSearch", s.testTextSearch},
		{"TextSearchHostileQueries", s.testTextSearchHostileQueries},
		{"TextSearchCJK", s.testTextSearchCJK},
		{"Neighbourhoods", s.testNeighbourhoods},
		{"StatusLifecycle", s.testStatusLifecycle},
		{"Claim", s.testClaim},
		{"ClaimDocuments", s.testClaimDocuments},
		{"RenameDocument", s.testRenameDocument},
		{"NotFound", s.testNotFound},
		{"CancelledWrite", s.testCancelledWrite},
		{"InvalidWrite", s.testInvalidWrite},
		{"ConcurrentReaders", s.testConcurrentReaders},
		{"BatchWrite", s.testBatchWrite},
		{"Batcher", s.testBatcher},
		{"BatcherCancelled", s.testBatcherCancelled},
		{"BatcherGroupLimit", s.testBatcherGroupLimit},
	} {
		t.Run(c.name, c.fn)
	}
}

// RunReopen runs the persistence cases: data survives close and reopen, and
// a store refuses to open with another embedder. open must open the store
// kept at dir (a server backend may use dir only as a key) with opts plus
// the backend's own fields; successive calls with the same dir reach the same data.
func RunReopen(t *testing.T, open func(t *testing.T, dir string, opts store.Options) (store.Store, error)) {
	t.Run("Reopen", func(t *testing.T) { testReopen(t, open) })
	t.Run("EmbedderMismatch", func(t *testing.T) { testEmbedderMismatch(t, open) })
}

type suite struct {
	open func(t *testing.T) store.Store
}

// fresh opens a store the suite closes at the end of the test (or earlier
// through the returned close func, which is safe to call twice).
func (s suite) fresh(t *testing.T) (store.Store, func()) {
	t.Helper()
	st := s.open(t)
	closed := false
	closeFn := func() {
		if closed {
			return
		}
		closed = true
		if err := st.Close(); err != nil {
			t.Errorf("close store: %v", err)
		}
	}
	t.Cleanup(closeFn)
	return st, closeFn
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func mustWrite(t *testing.T, st store.Store, ws ...*store.DocumentWrite) {
	t.Helper()
	for _, w := range ws {
		if err := st.WriteDocument(ctxFor(t), w); err != nil {
			t.Fatalf("WriteDocument(%s): %v", w.Document.ID, err)
		}
	}
}

// universe is every id a set of writes could leave in a store.
type universe struct {
	docs, chunks, entities, relations []string
}

func universeOf(ws ...*store.DocumentWrite) universe {
	sets := [4]map[string]bool{{}, {}, {}, {}}
	for _, w := range ws {
		sets[0][w.Document.ID] = true
		for _, id := range w.Replaces {
			sets[0][id] = true
		}
		for _, c := range w.Chunks {
			sets[1][c.ID] = true
		}
		for _, m := range w.Entities {
			sets[2][m.EntityID] = true
		}
		for _, m := range w.Relations {
			sets[3][m.RelationID] = true
			sets[2][m.SourceID] = true
			sets[2][m.TargetID] = true
		}
	}
	var lists [4][]string
	for i, set := range sets {
		for id := range set {
			lists[i] = append(lists[i], id)
		}
		sort.Strings(lists[i])
	}
	return universe{lists[0], lists[1], lists[2], lists[3]}
}

// snapshot is everything a store exposes about a universe of ids, in a
// canonical order with volatile fields (UpdatedAt) cleared and floats rounded
// to what any backend's storage keeps.
type snapshot struct {
	Documents []store.Document
	Chunks    []store.Chunk
	Entities  []store.Entity
	Relations []store.Relation
	Mentions  []store.Mention // MentionsOf every entity
	ChunkEnts []store.Mention // EntitiesOfChunks of every chunk
	Stats     store.Stats
}

func takeSnapshot(t *testing.T, st store.Store, u universe) snapshot {
	t.Helper()
	ctx := ctxFor(t)
	var sn snapshot
	docs, err := st.Documents(ctx)
	if err != nil {
		t.Fatalf("Documents: %v", err)
	}
	for _, d := range docs {
		d.UpdatedAt = time.Time{}
		if !d.ModTime.IsZero() {
			d.ModTime = time.Unix(0, d.ModTime.UnixNano()).UTC()
		}
		sn.Documents = append(sn.Documents, d)
		cs, err := st.DocumentChunks(ctx, d.ID)
		if err != nil {
			t.Fatalf("DocumentChunks(%s): %v", d.ID, err)
		}
		sn.Chunks = append(sn.Chunks, cs...)
	}
	sort.Slice(sn.Documents, func(i, j int) bool { return sn.Documents[i].ID < sn.Documents[j].ID })
	sort.SliceStable(sn.Chunks, func(i, j int) bool {
		a, b := sn.Chunks[i], sn.Chunks[j]
		if a.DocID != b.DocID {
			return a.DocID < b.DocID
		}
		return a.Index < b.Index
	})
	if sn.Entities, err = st.Entities(ctx, u.entities); err != nil {
		t.Fatalf("Entities: %v", err)
	}
	if sn.Relations, err = st.Relations(ctx, u.relations); err != nil {
		t.Fatalf("Relations: %v", err)
	}
	if sn.Mentions, err = st.MentionsOf(ctx, u.entities, 0); err != nil {
		t.Fatalf("MentionsOf: %v", err)
	}
	if sn.ChunkEnts, err = st.EntitiesOfChunks(ctx, u.chunks); err != nil {
		t.Fatalf("EntitiesOfChunks: %v", err)
	}
	stats, err := st.Stats(ctx)
	if err != nil {
		t.Fatalf("Stats: %v", err)
	}
	sn.Stats = *stats
	canonical(&sn)
	return sn
}

func canonical(sn *snapshot) {
	for i := range sn.Chunks {
		sn.Chunks[i].Embedding = roundVec(sn.Chunks[i].Embedding)
	}
	sort.Slice(sn.Entities, func(i, j int) bool { return sn.Entities[i].ID < sn.Entities[j].ID })
	for i := range sn.Entities {
		sn.Entities[i].Embedding = roundVec(sn.Entities[i].Embedding)
	}
	sort.Slice(sn.Relations, func(i, j int) bool { return sn.Relations[i].ID < sn.Relations[j].ID })
	for i := range sn.Relations {
		sn.Relations[i].Embedding = roundVec(sn.Relations[i].Embedding)
		sn.Relations[i].Weight = math.Round(sn.Relations[i].Weight*1e9) / 1e9
	}
	sortMentions(sn.Mentions)
	sortMentions(sn.ChunkEnts)
	if len(sn.Stats.ByStatus) == 0 {
		sn.Stats.ByStatus = nil
	}
	for k, v := range sn.Stats.ByStatus {
		if v == 0 {
			delete(sn.Stats.ByStatus, k)
		}
	}
}

func sortMentions(ms []store.Mention) {
	sort.Slice(ms, func(i, j int) bool {
		a, b := ms[i], ms[j]
		if a.EntityID != b.EntityID {
			return a.EntityID < b.EntityID
		}
		return a.ChunkID < b.ChunkID
	})
}

func roundVec(v []float32) []float32 {
	if len(v) == 0 {
		return nil
	}
	out := make([]float32, len(v))
	for i, f := range v {
		out[i] = float32(math.Round(float64(f)*1e6) / 1e6)
	}
	return out
}

// sameSnapshot reports the first differences between two snapshots.
func sameSnapshot(t *testing.T, what string, got, want snapshot) {
	t.Helper()
	if reflect.DeepEqual(got, want) {
		return
	}
	gv, wv := reflect.ValueOf(got), reflect.ValueOf(want)
	for i := 0; i < gv.NumField(); i++ {
		g, w := gv.Field(i).Interface(), wv.Field(i).Interface()
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s: %s differ:\n got: %s\nwant: %s", what, gv.Type().Field(i).Name, brief(g), brief(w))
		}
	}
}

// brief prints a value without its vectors, which only add noise.
func brief(v any) string {
	s := fmt.Sprintf("%+v", v)
	if len(s) > 3000 {
		s = s[:3000] + "..."
	}
	return s
}

// expectedGraph is what any store must hold after the writes, computed
// without a store: every entity's and relation's mentions merged by the
// suite's Merger, relations only between entities that exist.
func expectedGraph(t *testing.T, ws ...*store.DocumentWrite) ([]store.Entity, []store.Relation) {
	t.Helper()
	ctx := ctxFor(t)
	m := Options().Merger
	egroups := map[string][]store.EntityMention{}
	for _, w := range ws {
		for _, e := range w.Entities {
			egroups[e.EntityID] = append(egroups[e.EntityID], e)
		}
	}
	ents, err := m.MergeEntities(ctx, groupsInOrder(egroups))
	if err != nil {
		t.Fatalf("merge entities: %v", err)
	}
	exists := map[string]bool{}
	for _, e := range ents {
		exists[e.ID] = true
	}
	rgroups := map[string][]store.RelationMention{}
	for _, w := range ws {
		for _, r := range w.Relations {
			if exists[r.SourceID] && exists[r.TargetID] {
				rgroups[r.RelationID] = append(rgroups[r.RelationID], r)
			}
		}
	}
	rels, err := m.MergeRelations(ctx, groupsInOrder(rgroups))
	if err != nil {
		t.Fatalf("merge relations: %v", err)
	}
	sn := snapshot{Entities: ents, Relations: rels}
	canonical(&sn)
	return sn.Entities, sn.Relations
}

func groupsInOrder[T any](m map[string][]T) [][]T {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([][]T, len(keys))
	for i, k := range keys {
		out[i] = m[k]
	}
	return out
}

// cosine is the reference the vector searches are checked against.
func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

type ranked struct {
	id    string
	score float64
}

// bruteForce ranks every vector against q by exact cosine.
func bruteForce(q []float32, vecs map[string][]float32) []ranked {
	out := make([]ranked, 0, len(vecs))
	for id, v := range vecs {
		out = append(out, ranked{id, cosine(q, v)})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].score != out[j].score {
			return out[i].score > out[j].score
		}
		return out[i].id < out[j].id
	})
	return out
}

// checkRanking compares a search's ids and scores with the exact ranking:
// same scores (within float32 rounding), descending, and the same ids except
// where the reference itself has a tie.
func checkRanking(t *testing.T, what string, gotIDs []string, gotScores []float64, want []ranked, k int) {
	t.Helper()
	n := min(k, len(want))
	if len(gotIDs) != n {
		t.Errorf("%s: %d hits for k=%d over %d vectors, want %d", what, len(gotIDs), k, len(want), n)
		return
	}
	for i := range gotIDs {
		if i > 0 && gotScores[i] > gotScores[i-1] {
			t.Errorf("%s: scores not descending at %d: %v", what, i, gotScores)
		}
		if math.Abs(gotScores[i]-want[i].score) > 1e-4 {
			t.Errorf("%s: hit %d (%s) score %.6f, want %.6f (%s)", what, i, gotIDs[i], gotScores[i], want[i].score, want[i].id)
		}
		tied := (i > 0 && want[i-1].score-want[i].score < 1e-5) || (i+1 < len(want) && want[i].score-want[i+1].score < 1e-5)
		if !tied && gotIDs[i] != want[i].id {
			t.Errorf("%s: hit %d is %s, want %s", what, i, gotIDs[i], want[i].id)
		}
	}
}

func isNotFound(err error) bool { return errors.Is(err, store.ErrNotFound) }
