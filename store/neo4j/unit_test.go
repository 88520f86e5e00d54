package neo4j

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	n4j "github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/docgraph/docgraph/embedstore"
	"github.com/docgraph/docgraph/graphbuild"
	"github.com/docgraph/docgraph/store"
)

func TestRegistersSchemes(t *testing.T) {
	have := store.Schemes()
	for _, s := range []string{"neo4j", "neo4j+s", "neo4j+ssc", "bolt", "bolt+s", "bolt+ssc"} {
		if !slices.Contains(have, s) {
			t.Errorf("scheme %s not registered (have %v)", s, have)
		}
	}
}

func TestConnConfig(t *testing.T) {
	for _, c := range []struct {
		name    string
		url     string
		opts    store.Options
		want    connection
		wantErr string
	}{
		{
			name: "options give credentials and database",
			url:  "neo4j://db.example:7687",
			opts: store.Options{Username: "neo4j", Password: "pw", Database: "graph"},
			want: connection{target: "neo4j://db.example:7687", username: "neo4j", password: "pw", database: "graph"},
		},
		{
			name: "URL user info and path are used and stripped from the target",
			url:  "bolt://alice:s3cret@db.example:7688/docs",
			want: connection{target: "bolt://db.example:7688", username: "alice", password: "s3cret", database: "docs"},
		},
		{
			name: "options win over the URL",
			url:  "bolt+s://alice:old@db.example/urldb",
			opts: store.Options{Username: "bob", Password: "new", Database: "optdb"},
			want: connection{target: "bolt+s://db.example", username: "bob", password: "new", database: "optdb"},
		},
		{
			name: "routing context survives on neo4j schemes",
			url:  "neo4j+ssc://h:7687?region=eu",
			want: connection{target: "neo4j+ssc://h:7687?region=eu"},
		},
		{
			name: "query dropped on bolt schemes",
			url:  "bolt+ssc://h:7687?region=eu",
			want: connection{target: "bolt+ssc://h:7687"},
		},
		{name: "no host", url: "neo4j:///graph", wantErr: "no host"},
		{name: "wrong scheme", url: "http://h:7474", wantErr: "unsupported scheme"},
	} {
		t.Run(c.name, func(t *testing.T) {
			u, err := url.Parse(c.url)
			if err != nil {
				t.Fatal(err)
			}
			got, err := connConfig(u, c.opts)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("connConfig(%s) error = %v, want %q", c.url, err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("connConfig(%s) = %+v, want %+v", c.url, got, c.want)
			}
			if strings.Contains(got.target, "@") || (got.password != "" && strings.Contains(got.target, got.password)) {
				t.Errorf("target %q carries credentials", got.target)
			}
		})
	}
}

// closedPort is a local TCP port nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skipf("no local TCP: %v", err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// TestOpenErrorsHideThePassword opens stores against a port where no server
// listens: the connection error must not carry the password, whether it
// came in the options or the URL.
func TestOpenErrorsHideThePassword(t *testing.T) {
	const secret = "Tr0ub4dor&3-correct-horse"
	addr := closedPort(t)
	for _, c := range []struct {
		url  string
		opts store.Options
	}{
		{"bolt://" + addr, store.Options{Username: "neo4j", Password: secret}},
		{"neo4j://" + addr, store.Options{Username: "neo4j", Password: secret, Database: "docs"}},
		{"bolt://neo4j:" + url.QueryEscape(secret) + "@" + addr, store.Options{}},
		{"bolt+s://neo4j:" + url.QueryEscape(secret) + "@" + addr + "/docs", store.Options{}},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		st, err := store.Open(ctx, c.url, c.opts)
		cancel()
		if err == nil {
			st.Close()
			t.Fatalf("Open(%s) succeeded against a closed port", store.Redact(c.url))
		}
		msg := err.Error()
		for _, leak := range []string{secret, url.QueryEscape(secret), url.PathEscape(secret)} {
			if strings.Contains(msg, leak) {
				t.Errorf("Open(%s) error leaks the password: %s", store.Redact(c.url), msg)
			}
		}
		if !strings.Contains(msg, addr) {
			t.Errorf("Open error %q does not say which server it tried", msg)
		}
	}
}

func TestFailRedactsAndKeepsTheChain(t *testing.T) {
	s := &Store{target: "bolt://h:7687", database: "docs", secrets: connection{password: "hunter2"}.secrets()}
	err := s.fail("read", fmt.Errorf("server said: bad password hunter2 for user: %w", store.ErrNotFound))
	if strings.Contains(err.Error(), "hunter2") {
		t.Errorf("fail leaks the password: %v", err)
	}
	if !errors.Is(err, store.ErrNotFound) {
		t.Errorf("fail broke the error chain: %v", err)
	}
	for _, want := range []string{"bolt://h:7687", "docs", "read", "[redacted]"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if s.fail("x", nil) != nil {
		t.Error("fail(nil) is not nil")
	}
	// Wrapping an already redacted error again keeps it redacted.
	again := s.fail("outer", fmt.Errorf("retry: %w", err))
	if strings.Contains(again.Error(), "hunter2") || !errors.Is(again, store.ErrNotFound) {
		t.Errorf("rewrapped error = %v", again)
	}
}

func TestEscapeLucene(t *testing.T) {
	for in, want := range map[string]string{
		"rhine":           "rhine",
		"a+b":             `a\+b`,
		"-x":              `\-x`,
		`"quoted"`:        `\"quoted\"`,
		"name:Basel":      `name\:Basel`,
		"(a) [b] {c}":     `\(a\)\ \[b\]\ \{c\}`,
		"a && b || !c":    `a\ \&\&\ b\ \|\|\ \!c`,
		"x^2~1*?":         `x\^2\~1\*\?`,
		`back\slash/path`: `back\\slash\/path`,
		"tab\tnew\nline":  "tab\\\tnew\\\nline",
		"Zürich":          "Zürich",
	} {
		if got := escapeLucene(in); got != want {
			t.Errorf("escapeLucene(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestQueryTerms(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{`" * : - AND`, []string{"and"}},
		{"NOT Rhine OR rhine", []string{"not", "rhine", "or"}},
		{`text:Rhine^2 (Basel) "mouth"`, []string{"text", "rhine", "2", "basel", "mouth"}},
		{`Rhine's  Zürich ライン川`, []string{"rhine", "s", "zürich", "ライ", "イン", "ン川"}},
		{`稻花香2号的亲本`, []string{"稻花", "花香", "2", "号的", "的亲", "亲本"}},
		{`\x00Rhine\`, []string{"x00rhine"}},
		{"\x00Rhine\\", []string{"rhine"}},
	} {
		got := queryTerms(c.in)
		if len(got) == 0 && len(c.want) == 0 {
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("queryTerms(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	many := strings.Repeat("w ", 10) + strings.Join(func() []string {
		var ws []string
		for i := 0; i < 200; i++ {
			ws = append(ws, fmt.Sprintf("word%d", i))
		}
		return ws
	}(), " ")
	if n := len(queryTerms(many)); n != maxQueryTerms {
		t.Errorf("queryTerms of 201 distinct words = %d terms, want %d", n, maxQueryTerms)
	}
	// No term can carry an unescaped operator character.
	for _, term := range queryTerms(`a+b c-d e:f (g) "h" i*`) {
		for i, r := range term {
			if strings.ContainsRune(`+-:()"*`, r) && (i == 0 || term[i-1] != '\\') {
				t.Errorf("term %q has an unescaped %q", term, r)
			}
		}
	}
}

func TestDimensionConflict(t *testing.T) {
	emb := store.EmbedderInfo{Name: "hash-v1", Dimension: 384}
	s := &Store{emb: emb, relVector: true}
	want := s.searchIndexes()
	chunkIdx := existingIndex{name: idxChunkVector, kind: "VECTOR", entity: "NODE", tokens: []string{"Chunk"}, properties: []string{"embedding"}, dimension: 384, similarity: "cosine"}
	for _, c := range []struct {
		name     string
		existing []existingIndex
		wantErr  []string
	}{
		{name: "none", existing: nil},
		{name: "ours, same dimension", existing: []existingIndex{chunkIdx}},
		{name: "ours, other dimension", existing: []existingIndex{func() existingIndex { x := chunkIdx; x.dimension = 1536; return x }()},
			wantErr: []string{"1536 dimensions", "DROP INDEX `docgraph_chunk_embedding`", "--neo4j-database", "hash-v1", "384"}},
		{name: "someone else's on our property", existing: []existingIndex{func() existingIndex { x := chunkIdx; x.name = "plots"; x.dimension = 768; return x }()},
			wantErr: []string{"plots", "(:Chunk).embedding", "DROP INDEX `plots`"}},
		{name: "relationship index, euclidean", existing: []existingIndex{{name: "rel_vec", kind: "VECTOR", entity: "RELATIONSHIP", tokens: []string{"RELATES"}, properties: []string{"embedding"}, dimension: 384, similarity: "euclidean"}},
			wantErr: []string{"euclidean similarity", "()-[:RELATES]-()"}},
		{name: "unrelated vector index", existing: []existingIndex{{name: "movies", kind: "VECTOR", entity: "NODE", tokens: []string{"Movie"}, properties: []string{"embedding"}, dimension: 12}}},
		{name: "full-text index with a vector index's name", existing: []existingIndex{{name: idxEntityVector, kind: "FULLTEXT", entity: "NODE", tokens: []string{"Entity"}, properties: []string{"name"}}},
			wantErr: []string{idxEntityVector}},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := dimensionConflict(c.existing, want, emb)
			if len(c.wantErr) == 0 {
				if err != nil {
					t.Fatalf("unexpected conflict: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("no conflict reported")
			}
			if !errors.Is(err, store.ErrEmbedderMismatch) {
				t.Errorf("conflict %v does not wrap ErrEmbedderMismatch", err)
			}
			for _, w := range c.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("conflict %q does not say %q", err, w)
				}
			}
		})
	}
}

func TestAnalyzerConflict(t *testing.T) {
	want := (&Store{}).searchIndexes()
	chunkText := existingIndex{name: idxChunkText, kind: "FULLTEXT", entity: "NODE", tokens: []string{"Chunk"}, properties: []string{"text"}, analyzer: "cjk"}
	with := func(x existingIndex, f func(*existingIndex)) existingIndex { f(&x); return x }
	for _, c := range []struct {
		name        string
		existing    []existingIndex
		wantRebuild []string
		wantErr     []string
	}{
		{name: "none", existing: nil},
		{name: "ours, cjk", existing: []existingIndex{chunkText}},
		{name: "ours from an earlier docgraph, english", existing: []existingIndex{with(chunkText, func(x *existingIndex) { x.analyzer = "english" }),
			{name: idxEntityText, kind: "FULLTEXT", entity: "NODE", tokens: []string{"Entity"}, properties: []string{"name", "description"}, analyzer: "english"}},
			wantRebuild: []string{idxChunkText, idxEntityText}},
		{name: "ours on other properties", existing: []existingIndex{with(chunkText, func(x *existingIndex) { x.properties = []string{"body"}; x.analyzer = "standard" })},
			wantRebuild: []string{idxChunkText}},
		{name: "someone else's on our properties, cjk", existing: []existingIndex{with(chunkText, func(x *existingIndex) { x.name = "chunk_search" })}},
		{name: "someone else's on our properties, standard", existing: []existingIndex{with(chunkText, func(x *existingIndex) { x.name = "chunk_search"; x.analyzer = "standard" })},
			wantErr: []string{"chunk_search", "(:Chunk).text", `"standard"`, `"cjk"`, "DROP INDEX `chunk_search`"}},
		{name: "someone else's elsewhere", existing: []existingIndex{{name: "titles", kind: "FULLTEXT", entity: "NODE", tokens: []string{"Document"}, properties: []string{"title"}, analyzer: "english"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			rebuild, err := analyzerConflict(c.existing, want)
			var names []string
			for _, w := range rebuild {
				names = append(names, w.name)
				if len(w.drop) == 0 {
					t.Errorf("index %s has no drop statement", w.name)
				}
			}
			if !reflect.DeepEqual(names, c.wantRebuild) {
				t.Errorf("rebuild %v, want %v", names, c.wantRebuild)
			}
			if (err != nil) != (len(c.wantErr) > 0) {
				t.Fatalf("err = %v, want one saying %q", err, c.wantErr)
			}
			for _, w := range c.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("conflict %q does not say %q", err, w)
				}
			}
		})
	}
	for _, w := range want {
		if !strings.Contains(string(w.create), "'"+w.analyzer+"'") || !strings.Contains(string(w.drop), w.name) {
			t.Errorf("index %s: create %q or drop %q disagrees with analyzer %q", w.name, w.create, w.drop, w.analyzer)
		}
	}
}

func TestResolveNames(t *testing.T) {
	s := &Store{emb: store.EmbedderInfo{Name: "e", Dimension: 8}}
	want := s.searchIndexes()
	existing := []existingIndex{
		{name: "my_chunk_vectors", kind: "VECTOR", entity: "NODE", tokens: []string{"Chunk"}, properties: []string{"embedding"}, dimension: 8},
		{name: idxEntityVector, kind: "VECTOR", entity: "NODE", tokens: []string{"Entity"}, properties: []string{"embedding"}, dimension: 8},
		{name: "other_entity_vectors", kind: "VECTOR", entity: "NODE", tokens: []string{"Entity"}, properties: []string{"embedding"}, dimension: 8},
		{name: "entity_names_only", kind: "FULLTEXT", entity: "NODE", tokens: []string{"Entity"}, properties: []string{"name"}},
	}
	resolveNames(existing, want)
	got := map[string]string{}
	for _, w := range want {
		got[w.kind+" "+w.token] = w.name
	}
	wantNames := map[string]string{
		"VECTOR Chunk":    "my_chunk_vectors", // IF NOT EXISTS kept the equivalent one
		"VECTOR Entity":   idxEntityVector,    // ours wins over an equivalent
		"FULLTEXT Chunk":  idxChunkText,
		"FULLTEXT Entity": idxEntityText, // a different property list is not equivalent
	}
	if !reflect.DeepEqual(got, wantNames) {
		t.Errorf("resolved names = %v, want %v", got, wantNames)
	}
	// Without an embedder dimension there are no vector indexes to resolve.
	if n := len((&Store{}).searchIndexes()); n != 2 {
		t.Errorf("indexes without an embedder = %d, want the 2 full-text ones", n)
	}
}

func TestGroupMentionsOrder(t *testing.T) {
	ms := []store.EntityMention{
		{EntityID: "e2", ChunkID: "c1", Name: "B"},
		{EntityID: "e1", ChunkID: "c2", Name: "A2"},
		{EntityID: "e1", ChunkID: "c1", Name: "A1-second"},
		{EntityID: "e1", ChunkID: "c1", Name: "A1-first"},
	}
	seq := []int64{0, 4, 9, 3}
	groups := groupEntityMentions(ms, seq)
	var got [][]string
	for _, g := range groups {
		var names []string
		for _, m := range g {
			names = append(names, m.Name)
		}
		got = append(got, names)
	}
	want := [][]string{{"A1-first", "A1-second", "A2"}, {"B"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("groups = %v, want %v", got, want)
	}
	if counts := chunkCounts(groups); counts["e1"] != 2 || counts["e2"] != 1 {
		t.Errorf("chunkCounts = %v, want e1:2 e2:1", counts)
	}
	rgroups := groupRelationMentions([]store.RelationMention{
		{RelationID: "r1", ChunkID: "c9"}, {RelationID: "r0", ChunkID: "c1"}, {RelationID: "r1", ChunkID: "c2"},
	}, []int64{0, 0, 0})
	if len(rgroups) != 2 || rgroups[0][0].RelationID != "r0" || rgroups[1][0].ChunkID != "c2" {
		t.Errorf("relation groups = %+v", rgroups)
	}
}

func TestValueRoundTrip(t *testing.T) {
	v := []float32{0.25, -1.5, 3.1415927, 1e-7}
	p, ok := param(v).([]float64)
	if !ok || len(p) != len(v) {
		t.Fatalf("param(vector) = %#v", param(v))
	}
	// What the server returns: a list of floats.
	list := make([]any, len(p))
	for i, f := range p {
		list[i] = f
	}
	if got := vector(map[string]any{"embedding": list}, "embedding"); !reflect.DeepEqual(got, v) {
		t.Errorf("vector round trip = %v, want %v", got, v)
	}
	if param(nil) != nil || param([]float32{}) != nil {
		t.Error("an empty vector must become no property")
	}
	if vector(map[string]any{}, "embedding") != nil {
		t.Error("a missing property must decode as nil")
	}
	local := time.Date(2024, 5, 17, 11, 30, 0, 123456789, time.FixedZone("CEST", 2*3600))
	tp, ok := timeParam(local).(time.Time)
	if !ok || tp.Location() != time.UTC || !tp.Equal(local) {
		t.Errorf("timeParam(%v) = %v, want the same instant in UTC", local, tp)
	}
	if timeParam(time.Time{}) != nil {
		t.Error("the zero time must become no property")
	}
}

func TestValidateRejectsHalfWrites(t *testing.T) {
	s := &Store{emb: store.EmbedderInfo{Name: "e", Dimension: 4}, merger: graphbuild.NewMerger(embedstore.NewHash(embedstore.WithDimension(4)))}
	good := func() *store.DocumentWrite {
		return &store.DocumentWrite{
			Document:  store.Document{ID: "d1", Path: "a.md"},
			Chunks:    []store.Chunk{{ID: "d1#0", DocID: "d1", Embedding: []float32{1, 0, 0, 0}}, {ID: "d1#1", Index: 1}},
			Entities:  []store.EntityMention{{EntityID: "e1", ChunkID: "d1#0"}},
			Relations: []store.RelationMention{{RelationID: "r1", SourceID: "e1", TargetID: "e2", ChunkID: "d1#1"}},
		}
	}
	if err := s.validate([]*store.DocumentWrite{good()}); err != nil {
		t.Fatalf("valid write rejected: %v", err)
	}
	for name, mutate := range map[string]func(w *store.DocumentWrite){
		"empty id":         func(w *store.DocumentWrite) { w.Document.ID = "" },
		"empty chunk id":   func(w *store.DocumentWrite) { w.Chunks[1].ID = "" },
		"duplicate chunk":  func(w *store.DocumentWrite) { w.Chunks[1].ID = "d1#0" },
		"foreign chunk":    func(w *store.DocumentWrite) { w.Chunks[0].DocID = "d2" },
		"wrong dimension":  func(w *store.DocumentWrite) { w.Chunks[0].Embedding = []float32{1, 2} },
		"dangling mention": func(w *store.DocumentWrite) { w.Entities[0].ChunkID = "elsewhere" },
		"relation no ends": func(w *store.DocumentWrite) { w.Relations[0].TargetID = "" },
	} {
		w := good()
		mutate(w)
		if err := s.validate([]*store.DocumentWrite{w}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	// Repeated ids in Replaces are harmless: they are de-duplicated.
	twice := good()
	twice.Replaces = []string{"d0", "d0", "d1"}
	if err := s.validate([]*store.DocumentWrite{twice}); err != nil {
		t.Errorf("repeated Replaces: %v", err)
	}
	if err := s.validate([]*store.DocumentWrite{good(), good()}); err == nil {
		t.Error("two writes of one document in one transaction accepted")
	}
	other := good()
	other.Document.ID = "d2"
	other.Replaces = []string{"d1"}
	for i := range other.Chunks {
		other.Chunks[i].ID += "x"
		other.Chunks[i].DocID = ""
	}
	other.Entities[0].ChunkID = "d1#0x"
	other.Relations[0].ChunkID = "d1#1x"
	if err := s.validate([]*store.DocumentWrite{good(), other}); err == nil {
		t.Error("a write replacing another write of the same transaction accepted")
	}
	if err := (&Store{}).validate([]*store.DocumentWrite{good()}); err == nil || !strings.Contains(err.Error(), "Merger") {
		t.Errorf("write without a Merger: %v", err)
	}
	if err := s.validate([]*store.DocumentWrite{func() *store.DocumentWrite { w := good(); w.Chunks[0].Embedding = []float32{1}; return w }()}); !errors.Is(err, store.ErrEmbedderMismatch) {
		t.Errorf("wrong-dimension vector error %v does not wrap ErrEmbedderMismatch", err)
	}
}

func TestRetryableKeepsDriverErrorsRecognisable(t *testing.T) {
	conn := &n4j.ConnectivityError{Inner: errors.New("connection reset")}
	wrapped := fmt.Errorf("write chunks: %w", conn)
	if got := retryable(wrapped); got != error(conn) || !n4j.IsRetryable(got) {
		t.Errorf("retryable(%v) = %v, want the bare connectivity error, which the driver retries", wrapped, got)
	}
	transient := &n4j.Neo4jError{Code: "Neo.TransientError.Transaction.DeadlockDetected", Msg: "deadlock"}
	if got := retryable(fmt.Errorf("merge: %w", transient)); !n4j.IsRetryable(got) {
		t.Errorf("a wrapped deadlock is not retried: %v", got)
	}
	plain := fmt.Errorf("merge 3 entities: %w", errors.New("embedder down"))
	if got := retryable(plain); got != plain || n4j.IsRetryable(got) {
		t.Errorf("retryable(%v) = %v; a Merger failure must not be retried", plain, got)
	}
}

func TestRetryClassification(t *testing.T) {
	conn := &n4j.ConnectivityError{Inner: errors.New("connection refused")}
	deadlock := &n4j.Neo4jError{Code: "Neo.TransientError.Transaction.DeadlockDetected", Msg: "deadlock"}
	if !isUnreachable(fmt.Errorf("begin: %w", conn)) || isUnreachable(deadlock) {
		t.Error("a lost connection must count as unreachable, a deadlock as contention")
	}
	pause := func(attempt int) time.Duration {
		start := time.Now()
		if err := store.RetryPause(context.Background(), attempt); err != nil {
			t.Fatal(err)
		}
		return time.Since(start)
	}
	// The upper bounds leave a loaded machine's oversleeping room.
	if first, later := pause(0), pause(8); first > time.Second || later < time.Second || later > 10*time.Second {
		t.Errorf("retry pauses %v then %v; want about 25-50 ms growing to 1-2 s", first, later)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := store.RetryPause(ctx, 8); !errors.Is(err, context.Canceled) {
		t.Errorf("RetryPause with a cancelled context = %v", err)
	}
	if got := vecDigest([]float32{1, 2}); got == vecDigest([]float32{1, 2.0000002}) || got != vecDigest([]float32{1, 2}) || vecDigest(nil) != "" {
		t.Error("vecDigest must tell vectors apart and be stable")
	}
}

// TestMaxGroupRows checks that groups are capped only while the store has
// vector indexes (a store opened without an embedder has none).
func TestMaxGroupRows(t *testing.T) {
	for _, c := range []struct {
		dim  int
		want int
	}{{384, maxGroupRows}, {0, 0}} {
		s := &Store{emb: store.EmbedderInfo{Name: "hash-v2", Dimension: c.dim}}
		if got := s.MaxGroupRows(); got != c.want {
			t.Errorf("dimension %d: MaxGroupRows() = %d, want %d", c.dim, got, c.want)
		}
	}
}
