package neo4j

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
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
)

// benchTimeout bounds one batch size's corpus write.
const benchTimeout = time.Hour

// BenchmarkWriteThroughput ingests the 2wiki corpus (each passage one
// document: the offline extractor, graphbuild and the hashing embedder make
// its write beforehand, outside the timer) through a store.Batcher, in the
// groups ingest writes (transactions/op), and reports graph elements
// (nodes + relationships) written per second at three UNWIND batch sizes,
// next to the rate of a plain `UNWIND $rows AS r MERGE (n:BenchNode {id: r.id})`
// of as many bare nodes at the same batch size, in the same run. slower-x is
// bare rate / graph rate; the bar is 3. round-trips/doc counts statements
// and commits per document.
//
// Most of the graph write is spent by the server maintaining the HNSW
// vector indexes at commit, which bare nodes do not have. So the benchmark
// also writes every vector the graph write wrote (vectors/op: chunk,
// entity and relation embeddings, rewrites included) onto bare nodes,
// `CREATE (:BenchChunkVector {id})` plus the vector procedure, into three
// vector indexes (chunk, entity and relation vectors, as the store has) of
// the store's configuration, and reports the seconds that takes
// (bare-vector-s) and same-data-x: the graph write's time against bare
// nodes plus bare vectors, the same data written with no graph around it.
// The last run writes the same graph into a store opened without an
// embedder, so without vector indexes (the vectors are still written as
// properties, and so are the bare ones): the difference is what
// maintaining the three HNSW indexes costs. The log lists the statements
// that took the most time. Needs NEO4J_URI, NEO4J_USER and
// NEO4J_PASSWORD; -short uses the first 1000 passages. Run with
// -benchtime=1x.
func BenchmarkWriteThroughput(b *testing.B) {
	ts, ws, emb := benchCorpus(b)
	for _, c := range []struct {
		batch   int
		indexed bool
	}{{100, true}, {1000, true}, {5000, true}, {1000, false}} {
		name := fmt.Sprintf("batch=%d", c.batch)
		if !c.indexed {
			name += ",vectors=unindexed"
		}
		b.Run(name, func(b *testing.B) {
			b.StopTimer() // only the writes themselves are timed
			var graphSecs, bareSecs, vecSecs, commitSecs float64
			var elements, trips, vectors, txs int64
			for i := 0; i < b.N; i++ {
				db := ts.database(b)
				info := store.EmbedderInfo{Name: emb.Name(), Dimension: emb.Dimension()}
				if !c.indexed {
					info.Dimension = 0
				}
				w := writeCorpus(b, ts, db, ws, emb, info, c.batch)
				elements, trips, txs = elements+w.elements, trips+w.trips, txs+w.transactions
				for _, vs := range w.vectors {
					vectors += int64(len(vs))
				}
				graphSecs += w.secs
				commitSecs += w.commitSecs
				ts.wipe(b, db)
				bareSecs += writeBareNodes(b, ts, db, w.elements, c.batch)
				ts.wipe(b, db)
				vecSecs += writeBareVectors(b, ts, db, w.vectors, c.batch, c.indexed)
			}
			graphRate, bareRate := float64(elements)/graphSecs, float64(elements)/bareSecs
			b.ReportMetric(graphRate, "elements/s")
			b.ReportMetric(bareRate, "bare-nodes/s")
			b.ReportMetric(bareRate/graphRate, "slower-x")
			b.ReportMetric(float64(elements)/float64(b.N), "elements/op")
			b.ReportMetric(float64(trips)/float64(b.N*len(ws)), "round-trips/doc")
			b.ReportMetric(commitSecs/graphSecs, "commit-share")
			b.ReportMetric(float64(vectors)/float64(b.N), "vectors/op")
			b.ReportMetric(float64(txs)/float64(b.N), "transactions/op")
			b.ReportMetric(vecSecs/float64(b.N), "bare-vector-s")
			b.ReportMetric(graphSecs/(bareSecs+vecSecs), "same-data-x")
		})
	}
}

// Kinds of vectors a graph write feeds: one vector index each.
const (
	chunkVectors = iota
	entityVectors
	relationVectors
	vectorKinds
)

// benchVectorKinds are the bare-vector statements per kind of vector: a
// label and a vector index each, as the store has.
var benchVectorKinds = [vectorKinds]struct {
	create      statement
	index, drop string
}{
	{testBenchChunkVectors, testBenchChunkVectorIndex, testDropBenchChunkVectorIndex},
	{testBenchEntityVectors, testBenchEntityVectorIndex, testDropBenchEntityVectorIndex},
	{testBenchRelationVectors, testBenchRelationVectorIndex, testDropBenchRelationVectorIndex},
}

// corpusWrite is what one write of the corpus did.
type corpusWrite struct {
	elements     int64                    // nodes and relationships written
	secs         float64                  // the write's time
	commitSecs   float64                  // time in commits: Neo4j applies the transaction to the store and its indexes (vector, full-text)
	trips        int64                    // round trips: statements and commits
	transactions int64                    // write transactions the Batcher committed
	vectors      [vectorKinds][][]float32 // every embedding written, rewrites included, by kind
}

// writeCorpus writes the corpus as ingest does, through a store.Batcher
// with the default options (which take the store's MaxGroupRows), logging
// the statements that took the most time.
func writeCorpus(b *testing.B, ts *testServer, db string, ws []*store.DocumentWrite, emb *embedstore.Hash, info store.EmbedderInfo, batch int) corpusWrite {
	b.Helper()
	// The whole corpus takes longer than testCtx allows on a small machine.
	ctx, cancel := context.WithTimeout(context.Background(), benchTimeout)
	defer cancel()
	st, err := ts.open(b, db, store.Options{
		Embedder:  info,
		Merger:    graphbuild.NewMerger(emb),
		BatchSize: batch,
	})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	before := countElements(b, ts, db)
	var w corpusWrite
	var commit time.Duration
	spent := map[string]time.Duration{}
	statementHook = func(cypher string, params map[string]any, d time.Duration) {
		w.trips++
		spent[cypher] += d
		if cypher == "COMMIT" {
			commit += d
		}
		kind := relationVectors
		if cypher == string(stmtUpdateEntities) {
			kind = entityVectors
		}
		rows, _ := params["rows"].([]map[string]any)
		for _, r := range rows {
			if p, ok := r["props"].(map[string]any); ok {
				w.vectors[kind] = appendVector(w.vectors[kind], p["embedding"])
			}
			w.vectors[chunkVectors] = appendVector(w.vectors[chunkVectors], r["embedding"])
			w.vectors[kind] = appendVector(w.vectors[kind], r["vec"])
		}
	}
	defer func() { statementHook = nil }()
	b.StartTimer()
	start := time.Now()
	writer := store.NewBatcher(st, store.BatchOptions{})
	var mu sync.Mutex
	var failed []error
	for _, dw := range ws {
		err := writer.Submit(ctx, dw, func(err error) {
			if err != nil {
				mu.Lock()
				failed = append(failed, err)
				mu.Unlock()
			}
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	if err := writer.Close(); err != nil {
		b.Fatal(err)
	}
	w.secs = time.Since(start).Seconds()
	if len(failed) > 0 {
		b.Fatalf("%d documents failed, the first: %v", len(failed), failed[0])
	}
	w.transactions = writer.Stats().Transactions
	statementHook = nil
	b.StopTimer()
	w.commitSecs = commit.Seconds()
	w.elements = countElements(b, ts, db) - before
	logSpent(b, spent, w.secs)
	return w
}

// appendVector appends v when it is an embedding parameter.
func appendVector(vs [][]float32, v any) [][]float32 {
	fs, ok := v.([]float64)
	if !ok || len(fs) == 0 {
		return vs
	}
	out := make([]float32, len(fs))
	for i, f := range fs {
		out[i] = float32(f)
	}
	return append(vs, out)
}

// logSpent logs where a corpus write spent its time: the statements that
// took the most (their first two lines) and what is left for the client
// (merging, embedding, encoding).
func logSpent(b *testing.B, spent map[string]time.Duration, secs float64) {
	b.Helper()
	stmts := make([]string, 0, len(spent))
	var total time.Duration
	for c, d := range spent {
		stmts = append(stmts, c)
		total += d
	}
	sort.Slice(stmts, func(i, j int) bool { return spent[stmts[i]] > spent[stmts[j]] })
	var sb strings.Builder
	fmt.Fprintf(&sb, "%.1f s: %.1f s in statements and commits, %.1f s in the client", secs, total.Seconds(), secs-total.Seconds())
	for _, c := range stmts[:min(12, len(stmts))] {
		lines := strings.SplitN(c, "\n", 3)
		fmt.Fprintf(&sb, "\n  %6.1f s  %s", spent[c].Seconds(), strings.Join(lines[:min(2, len(lines))], " / "))
	}
	b.Log(sb.String())
}

// writeBareNodes merges n bare nodes in batches, one managed transaction per
// batch, and returns the seconds it took.
func writeBareNodes(b *testing.B, ts *testServer, db string, n int64, batch int) float64 {
	b.Helper()
	ctx := testCtx(b)
	if _, err := ts.run(ctx, db, testBenchNodeConstraint, nil); err != nil {
		b.Fatal(err)
	}
	sess := ts.driver.NewSession(ctx, n4j.SessionConfig{DatabaseName: db})
	defer sess.Close(ctx)
	rows := make([]map[string]any, 0, batch)
	flush := func() {
		if len(rows) == 0 {
			return
		}
		_, err := sess.ExecuteWrite(ctx, func(tx n4j.ManagedTransaction) (any, error) {
			return nil, exec(ctx, tx, testBenchNodes, map[string]any{"rows": rows})
		})
		if err != nil {
			b.Fatal(err)
		}
		rows = rows[:0]
	}
	b.StartTimer()
	start := time.Now()
	for i := int64(0); i < n; i++ {
		rows = append(rows, map[string]any{"id": fmt.Sprintf("bench-%d", i)})
		if len(rows) == batch {
			flush()
		}
	}
	flush()
	secs := time.Since(start).Seconds()
	b.StopTimer()
	return secs
}

// writeBareVectors creates one bare node per vector, its embedding set by
// the vector procedure, in batches, one managed transaction per batch, each
// kind (chunk, entity, relation) under its own label, into a vector index
// of the store's HNSW configuration when indexed (three indexes, as the
// store has), and returns the seconds it took.
func writeBareVectors(b *testing.B, ts *testServer, db string, vs [vectorKinds][][]float32, batch int, indexed bool) float64 {
	b.Helper()
	ctx := testCtx(b)
	if indexed {
		for k, kind := range benchVectorKinds {
			if len(vs[k]) == 0 {
				continue
			}
			createHNSWIndexes(b, ts, db, hnswConfig{hnswM, hnswEfConstruction, hnswQuantization}, len(vs[k][0]), kind.index)
			defer func() {
				if _, err := ts.run(context.Background(), db, kind.drop, nil); err != nil {
					b.Errorf("drop a bare vector index: %v", err)
				}
			}()
		}
	}
	sess := ts.driver.NewSession(ctx, n4j.SessionConfig{DatabaseName: db})
	defer sess.Close(ctx)
	b.StartTimer()
	start := time.Now()
	for k, kind := range benchVectorKinds {
		for i := 0; i < len(vs[k]); i += batch {
			rows := make([]map[string]any, 0, batch)
			for j, v := range vs[k][i:min(i+batch, len(vs[k]))] {
				rows = append(rows, map[string]any{"id": int64(i + j), "vec": param(v)})
			}
			_, err := sess.ExecuteWrite(ctx, func(tx n4j.ManagedTransaction) (any, error) {
				return nil, exec(ctx, tx, kind.create, map[string]any{"rows": rows})
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	secs := time.Since(start).Seconds()
	b.StopTimer()
	return secs
}

func countElements(b *testing.B, ts *testServer, db string) int64 {
	b.Helper()
	recs, err := ts.run(testCtx(b), db, testCountElements, nil)
	if err != nil || len(recs) == 0 {
		b.Fatalf("count elements: %v", err)
	}
	return recordInt(recs[0], "nodes") + recordInt(recs[0], "rels")
}

// benchCorpus is the server and the 2wiki corpus writes a benchmark
// uses; -short takes the first 1000 passages.
func benchCorpus(b *testing.B) (*testServer, []*store.DocumentWrite, *embedstore.Hash) {
	b.Helper()
	ts := newTestServer(b)
	limit := 0
	if testing.Short() {
		limit = 1000
	}
	ws, emb := corpusWrites(b, limit)
	return ts, ws, emb
}

// createHNSWIndexes runs vector index DDL taking testHNSWOptions' parameters
// with configuration c, and waits until every index is online: writes to an
// index still populating are queued and indexed after a benchmark's timer
// stops (measured: 1.8 s of writes, then 4.5 s until online; 4.2 s when it
// is online first).
func createHNSWIndexes(b *testing.B, ts *testServer, db string, c hnswConfig, dim int, ddl ...string) {
	b.Helper()
	ctx := testCtx(b)
	params := map[string]any{"dimension": int64(dim), "m": int64(c.m), "ef": int64(c.ef), "quant": c.quant}
	for _, stmt := range append(ddl, testAwaitIndexes) {
		if _, err := ts.run(ctx, db, stmt, params); err != nil {
			b.Fatalf("%s: %v", stmt, err)
		}
	}
}

// corpusWrites reads the 2wiki corpus and builds one write per passage.
func corpusWrites(b testing.TB, limit int) ([]*store.DocumentWrite, *embedstore.Hash) {
	b.Helper()
	path := filepath.Join(sharedData(b), "2wiki", "corpus.jsonl")
	f, err := os.Open(path)
	if err != nil {
		b.Skipf("2wiki corpus not available: %v", err)
	}
	defer f.Close()
	emb := embedstore.NewHash()
	ex := ner.NewOffline()
	var ws []*store.DocumentWrite
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() && (limit == 0 || len(ws) < limit) {
		var p struct{ ID, Title, Text string }
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			b.Fatalf("%s: %v", path, err)
		}
		id := "2wiki-" + p.ID
		sum := sha256.Sum256([]byte(p.Text))
		chunk := store.Chunk{ID: id + "#000", DocID: id, Text: p.Text, Tokens: len(strings.Fields(p.Text)),
			End: len(p.Text), Embedding: emb.Vector(p.Text)}
		x, err := ex.Extract(context.Background(), ner.Chunk{ID: chunk.ID, DocTitle: p.Title, Text: p.Text})
		if err != nil {
			b.Fatal(err)
		}
		w := &store.DocumentWrite{
			Document: store.Document{ID: id, Path: "2wiki/" + p.ID + ".txt", Title: p.Title,
				Hash: hex.EncodeToString(sum[:]), Format: "txt", Size: int64(len(p.Text))},
			Chunks: []store.Chunk{chunk},
		}
		w.Entities, w.Relations = graphbuild.Build([]graphbuild.ChunkExtraction{{ChunkID: chunk.ID, Extraction: x}})
		ws = append(ws, w)
	}
	if err := sc.Err(); err != nil {
		b.Fatalf("%s: %v", path, err)
	}
	return ws, emb
}

// sharedData is ../shared/data beside the repository root (the directory
// holding go.mod).
func sharedData(tb testing.TB) string {
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "..", "shared", "data")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Skip("repository root (go.mod) not found")
		}
		dir = parent
	}
}

// TestCorpusWritesAreValid checks, without a server, that the benchmark's
// input is what the store accepts: every passage's write passes validation.
func TestCorpusWritesAreValid(t *testing.T) {
	ws, emb := corpusWrites(t, 200)
	s := &Store{emb: store.EmbedderInfo{Name: emb.Name(), Dimension: emb.Dimension()}, merger: graphbuild.NewMerger(emb)}
	if err := s.validate(ws); err != nil {
		t.Fatal(err)
	}
	var ents, rels int
	for _, w := range ws {
		ents += len(w.Entities)
		rels += len(w.Relations)
	}
	if len(ws) != 200 || ents == 0 || rels == 0 {
		t.Errorf("%d documents with %d entity and %d relation mentions; want 200 with a graph", len(ws), ents, rels)
	}
}
