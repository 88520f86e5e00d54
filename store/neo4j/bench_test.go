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
	"strings"
	"testing"
	"time"

	n4j "github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"docgraph/embedstore"
	"docgraph/graphbuild"
	"docgraph/ner"
	"docgraph/store"
)

// docsPerTransaction is how many corpus documents one WriteDocuments call
// (one transaction) carries in the benchmark.
const docsPerTransaction = 500

// benchTimeout bounds one batch size's corpus write.
const benchTimeout = time.Hour

// BenchmarkWriteThroughput ingests the 2wiki corpus (each passage one
// document: the offline extractor, graphbuild and the hashing embedder make
// its write beforehand, outside the timer) and reports graph elements
// (nodes + relationships) written per second at three UNWIND batch sizes,
// next to the rate of a plain `UNWIND $rows AS r MERGE (n:BenchNode {id: r.id})`
// of as many bare nodes at the same batch size, in the same run. slower-x is
// bare rate / graph rate; the bar is 3. round-trips/doc counts statements
// and commits per document. The last run writes the same graph into a store
// opened without an embedder, so without vector indexes (the vectors are
// still written as properties): the difference is what maintaining the
// three HNSW indexes costs. Needs NEO4J_URI, NEO4J_USER and
// NEO4J_PASSWORD; -short uses the first 1000 passages. Run with -benchtime=1x.
func BenchmarkWriteThroughput(b *testing.B) {
	ts := newTestServer(b)
	limit := 0
	if testing.Short() {
		limit = 1000
	}
	ws, emb := corpusWrites(b, limit)
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
			var graphSecs, bareSecs, commitSecs float64
			var elements, trips int64
			for i := 0; i < b.N; i++ {
				db := ts.database(b)
				info := store.EmbedderInfo{Name: emb.Name(), Dimension: emb.Dimension()}
				if !c.indexed {
					info.Dimension = 0
				}
				n, secs, commit, rt := writeCorpus(b, ts, db, ws, emb, info, c.batch)
				elements, trips = elements+n, trips+rt
				graphSecs += secs
				commitSecs += commit
				ts.wipe(b, db)
				bareSecs += writeBareNodes(b, ts, db, n, c.batch)
			}
			graphRate, bareRate := float64(elements)/graphSecs, float64(elements)/bareSecs
			b.ReportMetric(graphRate, "elements/s")
			b.ReportMetric(bareRate, "bare-nodes/s")
			b.ReportMetric(bareRate/graphRate, "slower-x")
			b.ReportMetric(float64(elements)/float64(b.N), "elements/op")
			b.ReportMetric(float64(trips)/float64(b.N*len(ws)), "round-trips/doc")
			b.ReportMetric(commitSecs/graphSecs, "commit-share")
		})
	}
}

// writeCorpus writes the corpus in transactions of docsPerTransaction
// documents and returns the elements written, the seconds it took, the
// seconds spent in commits (where Neo4j applies the transaction to the
// store and its indexes: vector, full-text) and the round trips
// (statements and commits) it made.
func writeCorpus(b *testing.B, ts *testServer, db string, ws []*store.DocumentWrite, emb *embedstore.Hash, info store.EmbedderInfo, batch int) (int64, float64, float64, int64) {
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
	var trips int64
	var commit time.Duration
	statementHook = func(cypher string, _ map[string]any, d time.Duration) {
		trips++
		if cypher == "COMMIT" {
			commit += d
		}
	}
	defer func() { statementHook = nil }()
	b.StartTimer()
	start := time.Now()
	for i := 0; i < len(ws); i += docsPerTransaction {
		if err := st.WriteDocuments(ctx, ws[i:min(i+docsPerTransaction, len(ws))]...); err != nil {
			b.Fatalf("write documents %d..: %v", i, err)
		}
	}
	secs := time.Since(start).Seconds()
	statementHook = nil
	b.StopTimer()
	return countElements(b, ts, db) - before, secs, commit.Seconds(), trips
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

func countElements(b *testing.B, ts *testServer, db string) int64 {
	b.Helper()
	recs, err := ts.run(testCtx(b), db, testCountElements, nil)
	if err != nil || len(recs) == 0 {
		b.Fatalf("count elements: %v", err)
	}
	return recordInt(recs[0], "nodes") + recordInt(recs[0], "rels")
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
