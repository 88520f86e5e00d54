package neo4j

// Tests against a real server run when NEO4J_URI, NEO4J_USER and
// NEO4J_PASSWORD are set (NEO4J_DATABASE picks the database; default: the
// server's). Each test gets a database of its own: on Enterprise a new one
// (CREATE DATABASE, dropped afterwards) when the user may create databases;
// otherwise the configured database is wiped of every docgraph node and
// vector index before and after the test. Point them at a scratch server.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"math"
	"net/url"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	n4j "github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/docgraph/docgraph/embedstore"
	"github.com/docgraph/docgraph/graphbuild"
	"github.com/docgraph/docgraph/ner"
	"github.com/docgraph/docgraph/store"
	"github.com/docgraph/docgraph/store/storetest"
)

// Test-only statements: clean-up and database administration.
const (
	testWipeNodes = `MATCH (n)
WHERE n:Document OR n:Chunk OR n:Entity OR n:RelationMention OR n:DocgraphMeta OR n:BenchNode
   OR n:BenchChunkVector OR n:BenchEntityVector OR n:BenchRelationVector
CALL { WITH n DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS`
	testDropChunkVectors             = `DROP INDEX docgraph_chunk_embedding IF EXISTS`
	testDropEntityVectors            = `DROP INDEX docgraph_entity_embedding IF EXISTS`
	testDropRelatesVectors           = `DROP INDEX docgraph_relates_embedding IF EXISTS`
	testCreateDatabase               = `CREATE DATABASE $name IF NOT EXISTS WAIT`
	testDropDatabase                 = `DROP DATABASE $name IF EXISTS`
	testDeleteMeta                   = `MATCH (m:DocgraphMeta) DETACH DELETE m`
	testCountElements                = `CALL { MATCH (n) RETURN count(n) AS nodes } CALL { MATCH ()-[r]->() RETURN count(r) AS rels } RETURN nodes, rels`
	testBenchNodeConstraint          = `CREATE CONSTRAINT docgraph_bench_id IF NOT EXISTS FOR (n:BenchNode) REQUIRE n.id IS UNIQUE`
	testBenchNodes                   = `UNWIND $rows AS r MERGE (n:BenchNode {id: r.id})`
	testBenchChunkVectors            = `UNWIND $rows AS r CREATE (n:BenchChunkVector {id: r.id}) WITH n, r CALL db.create.setNodeVectorProperty(n, 'embedding', r.vec)`
	testBenchChunkVectorIndex        = "CREATE VECTOR INDEX docgraph_bench_chunk_vectors FOR (n:BenchChunkVector) ON (n.embedding) " + testHNSWOptions
	testDropBenchChunkVectorIndex    = `DROP INDEX docgraph_bench_chunk_vectors IF EXISTS`
	testBenchEntityVectors           = `UNWIND $rows AS r CREATE (n:BenchEntityVector {id: r.id}) WITH n, r CALL db.create.setNodeVectorProperty(n, 'embedding', r.vec)`
	testBenchEntityVectorIndex       = "CREATE VECTOR INDEX docgraph_bench_entity_vectors FOR (n:BenchEntityVector) ON (n.embedding) " + testHNSWOptions
	testDropBenchEntityVectorIndex   = `DROP INDEX docgraph_bench_entity_vectors IF EXISTS`
	testBenchRelationVectors         = `UNWIND $rows AS r CREATE (n:BenchRelationVector {id: r.id}) WITH n, r CALL db.create.setNodeVectorProperty(n, 'embedding', r.vec)`
	testBenchRelationVectorIndex     = "CREATE VECTOR INDEX docgraph_bench_relation_vectors FOR (n:BenchRelationVector) ON (n.embedding) " + testHNSWOptions
	testDropBenchRelationVectorIndex = `DROP INDEX docgraph_bench_relation_vectors IF EXISTS`
)

// testServer is the server the environment names.
type testServer struct {
	url        *url.URL
	opts       store.Options // credentials and the base database
	driver     n4j.DriverWithContext
	enterprise bool
}

func newTestServer(tb testing.TB) *testServer {
	tb.Helper()
	uri, user, pw := os.Getenv("NEO4J_URI"), os.Getenv("NEO4J_USER"), os.Getenv("NEO4J_PASSWORD")
	if uri == "" || user == "" || pw == "" {
		tb.Skip("set NEO4J_URI, NEO4J_USER and NEO4J_PASSWORD to run against a Neo4j server")
	}
	u, err := url.Parse(uri)
	if err != nil {
		tb.Fatalf("NEO4J_URI: %v", err)
	}
	ts := &testServer{url: u, opts: store.Options{Username: user, Password: pw, Database: os.Getenv("NEO4J_DATABASE")}}
	cfg, err := connConfig(u, ts.opts)
	if err != nil {
		tb.Fatal(err)
	}
	ts.driver, err = n4j.NewDriverWithContext(cfg.target, n4j.BasicAuth(user, pw, ""))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ts.driver.Close(context.Background()) })
	ctx := testCtx(tb)
	res, err := n4j.ExecuteQuery(ctx, ts.driver, stmtServerInfo, nil, n4j.EagerResultTransformer)
	if err != nil {
		tb.Fatalf("reach %s: %v", cfg.target, err)
	}
	for _, r := range res.Records {
		ts.enterprise = ts.enterprise || recordString(r, "edition") == "enterprise"
	}
	return ts
}

func testCtx(tb testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	tb.Cleanup(cancel)
	return ctx
}

// run runs one auto-commit statement on a database.
func (ts *testServer) run(ctx context.Context, database, cypher string, params map[string]any) ([]*n4j.Record, error) {
	sess := ts.driver.NewSession(ctx, n4j.SessionConfig{DatabaseName: database})
	defer sess.Close(ctx)
	res, err := sess.Run(ctx, cypher, params)
	if err != nil {
		return nil, err
	}
	return res.Collect(ctx)
}

// database returns a database the test may use alone, empty of docgraph data.
func (ts *testServer) database(tb testing.TB) string {
	tb.Helper()
	ctx := testCtx(tb)
	if ts.enterprise {
		b := make([]byte, 5)
		rand.Read(b)
		name := "docgraph-test-" + hex.EncodeToString(b)
		if _, err := ts.run(ctx, "system", testCreateDatabase, map[string]any{"name": name}); err == nil {
			tb.Cleanup(func() {
				if _, err := ts.run(context.Background(), "system", testDropDatabase, map[string]any{"name": name}); err != nil {
					tb.Errorf("drop test database %s: %v", name, err)
				}
			})
			return name
		}
		// Not allowed to create databases: share the configured one.
	}
	db := ts.opts.Database
	ts.wipe(tb, db)
	tb.Cleanup(func() { ts.wipe(tb, db) })
	return db
}

// wipe deletes every docgraph node and the vector indexes (whose dimension
// the next test may not share).
func (ts *testServer) wipe(tb testing.TB, database string) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for _, stmt := range []string{testWipeNodes, testDropChunkVectors, testDropEntityVectors, testDropRelatesVectors} {
		if _, err := ts.run(ctx, database, stmt, nil); err != nil {
			tb.Fatalf("wipe database %q: %v", database, err)
		}
	}
}

// open opens the store on a database with the suite's options plus ours.
func (ts *testServer) open(tb testing.TB, database string, opts store.Options) (*Store, error) {
	opts.Username, opts.Password, opts.Database = ts.opts.Username, ts.opts.Password, database
	return Open(testCtx(tb), ts.url, opts)
}

// openFresh opens the store on a database of its own with the suite's options.
func (ts *testServer) openFresh(tb testing.TB) *Store {
	tb.Helper()
	st, err := ts.open(tb, ts.database(tb), storetest.Options())
	if err != nil {
		tb.Fatalf("open: %v", err)
	}
	return st
}

func TestConformance(t *testing.T) {
	ts := newTestServer(t)
	storetest.Run(t, func(t *testing.T) store.Store { return ts.openFresh(t) })
}

func TestConformanceReopen(t *testing.T) {
	ts := newTestServer(t)
	databases := map[string]string{}
	storetest.RunReopen(t, func(t *testing.T, dir string, opts store.Options) (store.Store, error) {
		db, ok := databases[dir]
		if !ok {
			db = ts.database(t)
			databases[dir] = db
		}
		st, err := ts.open(t, db, opts)
		if err != nil {
			return nil, err // not a typed nil
		}
		return st, nil
	})
}

// TestSchema checks that Open is idempotent, creates every index under its
// name with the embedder's dimension, and refuses a database whose vector
// index has another dimension even when no meta node says so.
func TestSchema(t *testing.T) {
	ts := newTestServer(t)
	db := ts.database(t)
	opts := storetest.Options()
	for i := 0; i < 2; i++ {
		st, err := ts.open(t, db, opts)
		if err != nil {
			t.Fatalf("open %d: %v", i+1, err)
		}
		st.Close()
	}
	st, err := ts.open(t, db, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	sess := autoCommit{st.session(ctx, n4j.AccessModeRead)}
	existing, err := st.listSearchIndexes(ctx, sess)
	sess.sess.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]existingIndex{}
	for _, x := range existing {
		found[x.name] = x
	}
	configs := indexConfigs(t, ts, db)
	want := []string{idxChunkVector, idxEntityVector, idxChunkText, idxEntityText}
	if st.relVector {
		want = append(want, idxRelatesVector)
	}
	for _, name := range want {
		x, ok := found[name]
		if !ok {
			t.Errorf("index %s missing (server %s)", name, st.server.Version)
			continue
		}
		if x.kind == "VECTOR" && (x.dimension != storetest.Dimension || x.similarity != "cosine") {
			t.Errorf("index %s: %d dimensions, %s; want %d, cosine", name, x.dimension, x.similarity, storetest.Dimension)
		}
		if got := configs[name]; x.kind == "VECTOR" && st.hnswConfig && !sameHNSW(got, hnswM, hnswEfConstruction, hnswQuantization) {
			t.Errorf("index %s: HNSW settings %v; want m %d, ef_construction %d, quantization %v", name, got, hnswM, hnswEfConstruction, hnswQuantization)
		}
	}
	st.Close()

	// Forget the embedder but keep its indexes: the dimension check alone
	// must refuse an embedder of another dimension.
	if _, err := ts.run(ctx, db, testDeleteMeta, nil); err != nil {
		t.Fatal(err)
	}
	other := opts
	other.Embedder.Dimension = 2 * storetest.Dimension
	if st, err := ts.open(t, db, other); err == nil {
		st.Close()
		t.Fatal("open with another dimension over existing vector indexes succeeded")
	} else if !errors.Is(err, store.ErrEmbedderMismatch) || !strings.Contains(err.Error(), "DROP INDEX") {
		t.Errorf("error %q should wrap ErrEmbedderMismatch and say to drop the index", err)
	}
}

// indexConfigs is each vector and full-text index's indexConfig as SHOW
// INDEXES reports it, by name.
func indexConfigs(t *testing.T, ts *testServer, db string) map[string]map[string]any {
	t.Helper()
	recs, err := ts.run(testCtx(t), db, string(stmtSearchIndexes), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]any{}
	for _, rec := range recs {
		cfg, _ := recordMap(rec, "options")["indexConfig"].(map[string]any)
		out[recordString(rec, "name")] = cfg
	}
	return out
}

// sameHNSW reports whether an indexConfig's HNSW settings are m, ef and quant.
func sameHNSW(got map[string]any, m, ef int, quant bool) bool {
	return asInt(got["vector.hnsw.m"]) == int64(m) && asInt(got["vector.hnsw.ef_construction"]) == int64(ef) &&
		got["vector.quantization.enabled"] == quant
}

// TestVectorIndexesOfEarlierConfigKept opens a database whose vector
// indexes an earlier docgraph made with the server's HNSW defaults: Open
// keeps them as they are (no rebuild) and vector search uses them.
func TestVectorIndexesOfEarlierConfigKept(t *testing.T) {
	ts := newTestServer(t)
	db := ts.database(t)
	ctx := testCtx(t)
	params := map[string]any{"dimension": int64(storetest.Dimension)}
	for _, stmt := range []string{stmtChunkVectorIndex, stmtEntityVectorIndex, stmtRelatesVectorIndex, testAwaitIndexes} {
		if _, err := ts.run(ctx, db, stmt, params); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	st, err := ts.open(t, db, storetest.Options())
	if err != nil {
		t.Fatalf("open over vector indexes with the server's defaults: %v", err)
	}
	defer st.Close()
	if !st.hnswConfig {
		t.Skipf("server %s predates HNSW settings", st.server.Version)
	}
	ws := sampleWrites(t)
	if err := st.WriteDocuments(ctx, ws...); err != nil {
		t.Fatal(err)
	}
	sess := autoCommit{st.session(ctx, n4j.AccessModeRead)}
	existing, err := st.listSearchIndexes(ctx, sess)
	sess.sess.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	configs := indexConfigs(t, ts, db)
	kept := 0
	for _, x := range existing {
		if x.kind != "VECTOR" {
			continue
		}
		if !sameHNSW(configs[x.name], 16, 100, true) {
			t.Errorf("index %s has HNSW settings %v after open; want the server defaults it was made with", x.name, configs[x.name])
		}
		kept++
	}
	if kept != 3 {
		t.Errorf("%d vector indexes after open, want the 3 made before", kept)
	}
	q := storetest.Embedder().Vector("Teutberga married the king of Lotharingia")
	if st.indexName("VECTOR", "Chunk") != idxChunkVector {
		t.Errorf("chunk vector searches use %q, want %s", st.indexName("VECTOR", "Chunk"), idxChunkVector)
	}
	if hits, err := st.SearchChunks(ctx, q, 3); err != nil || len(hits) == 0 {
		t.Errorf("SearchChunks over the kept index = %v, %v", hits, err)
	}
	if hits, err := st.SearchRelations(ctx, q, 3); err != nil || len(hits) == 0 {
		t.Errorf("SearchRelations over the kept index = %v, %v", hits, err)
	}
}

// offlineWrite builds one document's write the way the pipeline does: the
// offline extractor, graphbuild and the hashing embedder, one chunk per
// paragraph.
func offlineWrite(tb testing.TB, emb *embedstore.Hash, id, title string, paragraphs ...string) *store.DocumentWrite {
	tb.Helper()
	ex := ner.NewOffline()
	w := &store.DocumentWrite{Document: store.Document{ID: id, Path: id + ".txt", Title: title, Format: "txt"}}
	var exs []graphbuild.ChunkExtraction
	pos := 0
	for i, p := range paragraphs {
		c := store.Chunk{ID: id + "#" + string(rune('a'+i)), DocID: id, Index: i, Text: p, Tokens: len(strings.Fields(p)),
			Start: pos, End: pos + len(p), Embedding: emb.Vector(p)}
		pos += len(p) + 2
		x, err := ex.Extract(context.Background(), ner.Chunk{ID: c.ID, DocTitle: title, Text: p})
		if err != nil {
			tb.Fatal(err)
		}
		exs = append(exs, graphbuild.ChunkExtraction{ChunkID: c.ID, Extraction: x})
		w.Chunks = append(w.Chunks, c)
	}
	w.Entities, w.Relations = graphbuild.Build(exs)
	w.Document.Size = int64(pos)
	return w
}

func sampleWrites(tb testing.TB) []*store.DocumentWrite {
	emb := storetest.Embedder()
	return []*store.DocumentWrite{
		offlineWrite(tb, emb, "d-lothair", "Lothair II",
			"Lothair II was King of Lotharingia. He married Teutberga, daughter of Boso the Elder.",
			"Lothair II sought to divorce Teutberga to marry Waldrada, and Pope Nicholas I opposed him."),
		offlineWrite(tb, emb, "d-boso", "Boso the Elder",
			"Boso the Elder was a Frankish noble. His daughter Teutberga married Lothair II of Lotharingia.",
			"Hucbert, the lay abbot of St. Maurice's Abbey, was a son of Boso the Elder."),
		offlineWrite(tb, emb, "d-tuscany", "Lambert of Tuscany",
			"Lambert was margrave of Tuscany. Hugh, King of Italy, removed Lambert and gave Tuscany to Boso."),
	}
}

type graphState struct {
	stats     store.Stats
	entities  []store.Entity
	relations []store.Relation
}

func readGraph(t *testing.T, st *Store, ws []*store.DocumentWrite) graphState {
	t.Helper()
	ctx := testCtx(t)
	var eids, rids []string
	for _, w := range ws {
		for _, m := range w.Entities {
			eids = append(eids, m.EntityID)
		}
		for _, m := range w.Relations {
			rids = append(rids, m.RelationID)
		}
	}
	var g graphState
	stats, err := st.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	g.stats = *stats
	if g.entities, err = st.Entities(ctx, eids); err != nil {
		t.Fatal(err)
	}
	if g.relations, err = st.Relations(ctx, rids); err != nil {
		t.Fatal(err)
	}
	sort.Slice(g.entities, func(i, j int) bool { return g.entities[i].ID < g.entities[j].ID })
	sort.Slice(g.relations, func(i, j int) bool { return g.relations[i].ID < g.relations[j].ID })
	return g
}

// TestWriteDocumentsMatchesOneByOne checks the bulk write: several documents
// in one transaction leave the graph writing them one by one leaves.
func TestWriteDocumentsMatchesOneByOne(t *testing.T) {
	ts := newTestServer(t)
	ws := sampleWrites(t)
	if len(ws[0].Relations) == 0 || len(ws[1].Entities) == 0 {
		t.Fatal("fixture: the offline extractor found no graph")
	}
	ctx := testCtx(t)

	st, err := ts.open(t, ts.database(t), storetest.Options())
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range ws {
		if err := st.WriteDocument(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
	one := readGraph(t, st, ws)
	st.Close()

	opts := storetest.Options()
	opts.BatchSize = 3 // many batches per statement kind
	st, err = ts.open(t, ts.database(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.WriteDocuments(ctx, ws...); err != nil {
		t.Fatal(err)
	}
	bulk := readGraph(t, st, ws)
	if one.stats.Entities == 0 || one.stats.Relations == 0 {
		t.Fatalf("graph of the samples is empty: %+v", one.stats)
	}
	if !sameGraph(one, bulk) {
		t.Errorf("bulk write differs from one-by-one writes:\n one %+v\nbulk %+v", one.stats, bulk.stats)
	}
	// A bulk write naming one document twice is refused whole.
	if err := st.WriteDocuments(ctx, ws[0], ws[0]); err == nil {
		t.Error("bulk write with a repeated document succeeded")
	}
}

func sameGraph(a, b graphState) bool {
	if a.stats.Documents != b.stats.Documents || a.stats.Chunks != b.stats.Chunks || a.stats.Entities != b.stats.Entities ||
		a.stats.Relations != b.stats.Relations || a.stats.Mentions != b.stats.Mentions || len(a.entities) != len(b.entities) ||
		len(a.relations) != len(b.relations) {
		return false
	}
	for i := range a.entities {
		x, y := a.entities[i], b.entities[i]
		if x.ID != y.ID || x.Name != y.Name || x.Description != y.Description || x.Mentions != y.Mentions {
			return false
		}
	}
	for i := range a.relations {
		x, y := a.relations[i], b.relations[i]
		if x.ID != y.ID || x.Description != y.Description || math.Abs(x.Weight-y.Weight) > 1e-9 {
			return false
		}
	}
	return true
}

// TestScanAgreesWithIndexes checks the fallback searches (servers without
// relationship vector indexes, stores without an embedder) against the
// vector indexes: same hits, same cosine scores.
func TestScanAgreesWithIndexes(t *testing.T) {
	ts := newTestServer(t)
	st := ts.openFresh(t)
	defer st.Close()
	ctx := testCtx(t)
	ws := sampleWrites(t)
	if err := st.WriteDocuments(ctx, ws...); err != nil {
		t.Fatal(err)
	}
	q := storetest.Embedder().Vector("Teutberga married the king of Lotharingia")
	type search func() ([]string, []float64, error)
	searches := map[string]search{
		"chunks": func() ([]string, []float64, error) {
			hs, err := st.SearchChunks(ctx, q, 3)
			var ids []string
			var sc []float64
			for _, h := range hs {
				ids, sc = append(ids, h.ID), append(sc, h.Score)
			}
			return ids, sc, err
		},
		"entities": func() ([]string, []float64, error) {
			hs, err := st.SearchEntities(ctx, q, 3)
			var ids []string
			var sc []float64
			for _, h := range hs {
				ids, sc = append(ids, h.ID), append(sc, h.Score)
			}
			return ids, sc, err
		},
		"relations": func() ([]string, []float64, error) {
			hs, err := st.SearchRelations(ctx, q, 3)
			var ids []string
			var sc []float64
			for _, h := range hs {
				ids, sc = append(ids, h.ID), append(sc, h.Score)
			}
			return ids, sc, err
		},
	}
	indexed := map[string][]float64{}
	for name, fn := range searches {
		ids, scores, err := fn()
		if err != nil || len(ids) == 0 {
			t.Fatalf("%s with indexes = %v, %v", name, ids, err)
		}
		indexed[name] = scores
	}
	saved := st.indexes
	st.indexes = map[string]string{"FULLTEXT Chunk": idxChunkText, "FULLTEXT Entity": idxEntityText}
	defer func() { st.indexes = saved }()
	for name, fn := range searches {
		_, scores, err := fn()
		if err != nil {
			t.Fatalf("%s by scan: %v", name, err)
		}
		if len(scores) != len(indexed[name]) {
			t.Errorf("%s: scan found %d hits, index %d", name, len(scores), len(indexed[name]))
			continue
		}
		for i := range scores {
			if math.Abs(scores[i]-indexed[name][i]) > 1e-4 {
				t.Errorf("%s hit %d: scan cosine %.6f, index %.6f", name, i, scores[i], indexed[name][i])
			}
		}
	}
}

// TestConcurrentWritersShareEntities runs two writers with drivers of
// their own (as two processes would) over overlapping halves of 2wiki
// passages, which share many entities, in small interleaving transactions:
// both finish without a failed document, and the graph equals the one a
// single sequential writer leaves.
func TestConcurrentWritersShareEntities(t *testing.T) {
	ts := newTestServer(t)
	ws, _ := corpusWrites(t, 300)
	ctx := testCtx(t)

	db := ts.database(t)
	seq, err := ts.open(t, db, storetest.Options())
	if err != nil {
		t.Fatal(err)
	}
	seqWrites := corpusFor(t, ws)
	if err := seq.WriteDocuments(ctx, seqWrites...); err != nil {
		t.Fatal(err)
	}
	want := readGraph(t, seq, seqWrites)
	seq.Close()
	ts.wipe(t, db)

	halves := [][]*store.DocumentWrite{corpusFor(t, ws[:200]), corpusFor(t, ws[100:])}
	errs := make(chan error, len(ws))
	var wg sync.WaitGroup
	var writers []*Store
	var batchers []*store.Batcher
	for _, half := range halves {
		st, err := ts.open(t, db, storetest.Options())
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		b := store.NewBatcher(st, store.BatchOptions{MaxDocuments: 7})
		writers, batchers = append(writers, st), append(batchers, b)
		for _, w := range half {
			wg.Add(1)
			if err := b.Submit(ctx, w, func(err error) {
				if err != nil {
					errs <- err
				}
				wg.Done()
			}); err != nil {
				t.Fatal(err)
			}
		}
	}
	wg.Wait()
	var retries int64
	for i, b := range batchers {
		b.Close()
		retries += writers[i].WriteStats().Retries
	}
	close(errs)
	for err := range errs {
		t.Errorf("concurrent write failed: %v", err)
	}
	st, err := ts.open(t, db, storetest.Options())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	got := readGraph(t, st, seqWrites)
	if want.stats.Entities == 0 || !sameGraph(got, want) {
		t.Errorf("concurrent writers left %+v, a sequential writer %+v", got.stats, want.stats)
	}
	t.Logf("retries: %d", retries)
}

// corpusFor rebuilds corpus writes with the suite's embedder (16
// dimensions), so they fit a store opened with storetest.Options.
func corpusFor(t *testing.T, ws []*store.DocumentWrite) []*store.DocumentWrite {
	t.Helper()
	emb := storetest.Embedder()
	out := make([]*store.DocumentWrite, len(ws))
	for i, w := range ws {
		c := *w
		c.Chunks = append([]store.Chunk(nil), w.Chunks...)
		for j := range c.Chunks {
			c.Chunks[j].Embedding = emb.Vector(c.Chunks[j].Text)
		}
		out[i] = &c
	}
	return out
}
