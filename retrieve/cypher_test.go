package retrieve_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	n4j "github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/docgraph/docgraph/embedstore"
	"github.com/docgraph/docgraph/llm/llmtest"
	"github.com/docgraph/docgraph/retrieve"
	"github.com/docgraph/docgraph/splitter"
	"github.com/docgraph/docgraph/store"
	"github.com/docgraph/docgraph/store/neo4j"
	"github.com/docgraph/docgraph/store/sqlite"
)

func TestCheckCypher(t *testing.T) {
	tests := []struct {
		name  string
		query string
		want  string // the checked query; "" means rejected
	}{
		{"adds limit", "MATCH (e:Entity) RETURN e.name", "MATCH (e:Entity) RETURN e.name\nLIMIT 25"},
		{"keeps smaller limit", "MATCH (e:Entity) RETURN e.name LIMIT 5;", "MATCH (e:Entity) RETURN e.name LIMIT 5"},
		{"lowers larger limit", "MATCH (e:Entity) RETURN e.name ORDER BY e.name LIMIT 1000", "MATCH (e:Entity) RETURN e.name ORDER BY e.name LIMIT 25"},
		{"limit inside with", "MATCH (e:Entity) WITH e LIMIT 500 RETURN e.name", "MATCH (e:Entity) WITH e LIMIT 500 RETURN e.name\nLIMIT 25"},
		{"keywords in strings and comments", "MATCH (e:Entity) WHERE e.name = 'CREATE (x) DELETE y' // SET z\nRETURN e.description AS delete_note",
			"MATCH (e:Entity) WHERE e.name = 'CREATE (x) DELETE y' // SET z\nRETURN e.description AS delete_note\nLIMIT 25"},
		{"property named like a clause", "MATCH (d:Document) RETURN d.set, d.create", "MATCH (d:Document) RETURN d.set, d.create\nLIMIT 25"},
		{"paths and types", "MATCH p = (a:Entity)-[:RELATES|MENTIONED_IN*1..2]-(b:Entity|Chunk) RETURN length(p)", "MATCH p = (a:Entity)-[:RELATES|MENTIONED_IN*1..2]-(b:Entity|Chunk) RETURN length(p)\nLIMIT 25"},
		{"bound variable without a label", "MATCH (a:Entity) WITH a LIMIT 3 MATCH (a)-[:MENTIONED_IN]->(c:Chunk) RETURN c.id", "MATCH (a:Entity) WITH a LIMIT 3 MATCH (a)-[:MENTIONED_IN]->(c:Chunk) RETURN c.id\nLIMIT 25"},
		{"unlabelled end node", "MATCH p = (a:Entity)-[:RELATES*1..2]-(b) RETURN length(p)", ""},
		{"node without a label", "MATCH (n) RETURN n", ""},
		{"relationship type as a node label", "MATCH (n:RELATES) RETURN n", ""},
		{"untyped relationship", "MATCH (a:Entity)-[r]-(b:Entity) RETURN r", ""},
		{"all properties", "MATCH (a:Entity) RETURN a {.*}", ""},
		{"property by string", "MATCH (a:Entity) RETURN a['name']", ""},
		{"optional match start", "OPTIONAL MATCH (c:Chunk)-[:PART_OF]->(d:Document) RETURN count(c)", "OPTIONAL MATCH (c:Chunk)-[:PART_OF]->(d:Document) RETURN count(c)\nLIMIT 25"},
		{"create", "CREATE (e:Entity {name: 'x'}) RETURN e", ""},
		{"merge", "MATCH (e:Entity) MERGE (e)-[:RELATES]->(e) RETURN e", ""},
		{"set", "MATCH (e:Entity) SET e.name = 'x' RETURN e", ""},
		{"detach delete", "MATCH (e:Entity) DETACH DELETE e", ""},
		{"remove", "MATCH (e:Entity) REMOVE e.name RETURN e", ""},
		{"procedure", "CALL db.labels() YIELD label RETURN label", ""},
		{"subquery", "MATCH (e:Entity) CALL { WITH e MATCH (e)--(x) RETURN x } RETURN x", ""},
		{"load csv", "LOAD CSV FROM 'file:///x' AS row RETURN row", ""},
		{"foreach", "MATCH p = (a:Entity)--(b) FOREACH (n IN nodes(p) | SET n.x = 1) RETURN p", ""},
		{"two statements", "MATCH (e:Entity) RETURN e; MATCH (n) DETACH DELETE n", ""},
		{"write after return", "MATCH (e:Entity) RETURN e UNION MATCH (n) DELETE n RETURN n", ""},
		{"unknown label", "MATCH (u:User) RETURN u.password", ""},
		{"unknown type", "MATCH (a:Entity)-[:OWNS]->(b) RETURN b", ""},
		{"backquoted label", "MATCH (u:`User`) RETURN u", ""},
		{"no return", "MATCH (e:Entity)", ""},
		{"show", "SHOW DATABASES", ""},
		{"unterminated string", "MATCH (e:Entity) WHERE e.name = 'x RETURN e", ""},
		{"parameter limit", "MATCH (e:Entity) RETURN e LIMIT $n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := retrieve.CheckCypher(tt.query, 25)
			if tt.want == "" {
				if !errors.Is(err, retrieve.ErrUnsafeCypher) {
					t.Errorf("CheckCypher(%q) = %q, %v; want ErrUnsafeCypher", tt.query, got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("CheckCypher(%q) = %q, %v; want %q", tt.query, got, err, tt.want)
			}
		})
	}
}

// neo4jLike stands in for the Neo4j store, which cannot run here: the
// SQLite store plus the read-only query method text-to-Cypher looks for.
type neo4jLike struct {
	*sqlite.Store
	mu      sync.Mutex
	queries []string
	fail    bool
}

func (s *neo4jLike) QueryReadOnly(_ context.Context, cypher string, _ map[string]any, maxRows int) ([]map[string]any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queries = append(s.queries, cypher)
	if s.fail {
		return nil, errors.New("Neo.ClientError.Statement.SyntaxError")
	}
	return []map[string]any{{"director": "Harold Fairfax", "film": "Won In The Clouds"}}[:min(1, maxRows)], nil
}

func TestTextToCypher(t *testing.T) {
	sq, _ := ingest(t, film[:2])
	tok, err := splitter.NewTokenizer("")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name       string
		generated  string
		fail       bool
		wantQuery  string // what the store runs; "" means it is never called
		wantInCtxt bool
	}{
		{"checked and run", "```cypher\nMATCH (f:Entity)-[:RELATES]-(d:Entity) WHERE toLower(f.name) CONTAINS 'won in the clouds' RETURN f.name AS film, d.name AS director\n```",
			false, "MATCH (f:Entity)-[:RELATES]-(d:Entity) WHERE toLower(f.name) CONTAINS 'won in the clouds' RETURN f.name AS film, d.name AS director\nLIMIT 7", true},
		{"unsafe query never runs", "MATCH (n) DETACH DELETE n", false, "", false},
		{"store failure falls back", "MATCH (e:Entity) RETURN e.name", true, "MATCH (e:Entity) RETURN e.name\nLIMIT 7", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := &neo4jLike{Store: sq, fail: c.fail}
			model, _ := fakeModel(t, func(r llmtest.Request) llmtest.Reply {
				if strings.Contains(r.Last(), "Cypher query") {
					return llmtest.Reply{Content: c.generated}
				}
				return llmtest.Reply{Content: `{"high_level_keywords": ["birthplace"], "low_level_keywords": ["Won In The Clouds"]}`}
			})
			r := retrieve.New(st, embedstore.NewHash(), retrieve.WithModel(model), retrieve.WithCypher(7))
			res, err := r.Retrieve(context.Background(), filmQuestion, retrieve.ModeMix)
			if err != nil {
				t.Fatalf("a failing Cypher path must not fail the query: %v", err)
			}
			if len(res.Passages) == 0 {
				t.Error("no passages from the other paths")
			}
			if got := strings.Join(st.queries, "|"); got != c.wantQuery {
				t.Errorf("store ran %q, want %q", got, c.wantQuery)
			}
			if (res.Cypher != nil) != c.wantInCtxt {
				t.Fatalf("res.Cypher = %+v, want present=%v", res.Cypher, c.wantInCtxt)
			}
			ctxt, err := retrieve.Assemble(res, tok, retrieve.DefaultBudget(), "")
			if err != nil {
				t.Fatal(err)
			}
			has := strings.Contains(ctxt.String(), "-----Graph query results-----") && strings.Contains(ctxt.String(), `"director":"Harold Fairfax"`)
			if has != c.wantInCtxt {
				t.Errorf("context has Cypher rows = %v, want %v:\n%s", has, c.wantInCtxt, ctxt)
			}
		})
	}
}

func ExampleCheckCypher() {
	q, err := retrieve.CheckCypher("MATCH (e:Entity) RETURN e.name ORDER BY e.mentions DESC", 10)
	fmt.Println(q, err)
	_, err = retrieve.CheckCypher("MATCH (e:Entity) DETACH DELETE e", 10)
	fmt.Println(err)
	// Output:
	// MATCH (e:Entity) RETURN e.name ORDER BY e.mentions DESC
	// LIMIT 10 <nil>
	// unsafe cypher: DETACH is not allowed
}

// The Neo4j store is the CypherRunner --cypher uses.
var _ retrieve.CypherRunner = (*neo4j.Store)(nil)

// cypherCase is one line of testdata/cypher/bypass.jsonl: hostile queries
// (each a way past an earlier check, or past a check written from the
// text instead of the lexer) and benign ones the check must keep passing.
type cypherCase struct {
	Name          string `json:"name"`
	Query         string `json:"query"`
	Hostile       bool   `json:"hostile"`
	ServerRefuses bool   `json:"server_refuses"`
}

func readCypherCases(t *testing.T) []cypherCase {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "testdata", "cypher", "bypass.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []cypherCase
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var c cypherCase
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		cases = append(cases, c)
	}
	return cases
}

func TestCheckCypherBypassCorpus(t *testing.T) {
	hostile, benign := 0, 0
	for _, c := range readCypherCases(t) {
		t.Run(c.Name, func(t *testing.T) {
			got, err := retrieve.CheckCypher(c.Query, 25)
			if c.Hostile {
				hostile++
				if !errors.Is(err, retrieve.ErrUnsafeCypher) {
					t.Errorf("hostile %q accepted as %q (err %v)", c.Query, got, err)
				}
				return
			}
			benign++
			if err != nil {
				t.Errorf("benign %q refused: %v", c.Query, err)
			}
		})
	}
	if hostile < 30 || benign < 15 {
		t.Errorf("corpus has %d hostile and %d benign queries; want the whole corpus", hostile, benign)
	}
}

// FuzzCheckCypher starts from every query of the bypass corpus, hostile
// and benign, so the fuzzer mutates the shapes that got past earlier
// checks.
func FuzzCheckCypher(f *testing.F) {
	f.Add("MATCH (e:Entity) RETURN e.name")
	f.Add("MATCH (n:Entity) RETURN n.name //\rUNION CALL db.labels() YIELD label RETURN label")
	data, err := os.ReadFile(filepath.Join("..", "testdata", "cypher", "bypass.jsonl"))
	if err != nil {
		f.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var c cypherCase
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			f.Fatal(err)
		}
		f.Add(c.Query)
	}
	f.Fuzz(func(t *testing.T, q string) {
		got, err := retrieve.CheckCypher(q, 10)
		if err != nil {
			return
		}
		// Whatever passes must pass again unchanged in meaning: checking the
		// checked query accepts it, and it never calls anything.
		if _, err := retrieve.CheckCypher(got, 10); err != nil {
			t.Errorf("CheckCypher(%q) = %q, which it then refuses: %v", q, got, err)
		}
	})
}

// TestCypherBypassOnNeo4j runs the corpus against a real server beside a
// node that is not docgraph's (a :Secret with a property, linked to
// another): every hostile query the server would plan with a procedure
// call, LOAD CSV, a write or a scan outside the schema is refused by the
// store's EXPLAIN check even without CheckCypher; no query that passes
// CheckCypher returns the foreign value; and every benign query, once
// checked, answers.
func TestCypherBypassOnNeo4j(t *testing.T) {
	uri, user, pw := os.Getenv("NEO4J_URI"), os.Getenv("NEO4J_USER"), os.Getenv("NEO4J_PASSWORD")
	if uri == "" || user == "" || pw == "" {
		t.Skip("set NEO4J_URI, NEO4J_USER and NEO4J_PASSWORD to run against a Neo4j server")
	}
	u, err := url.Parse(uri)
	if err != nil {
		t.Fatal(err)
	}
	// No embedder: the store adopts whatever the server's database holds,
	// since text-to-Cypher reads no vector.
	opts := store.Options{Username: user, Password: pw, Database: os.Getenv("NEO4J_DATABASE")}
	ctx := context.Background()
	st, err := neo4j.Open(ctx, u, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	secret := plantForeignNodes(t, uri, user, pw, opts.Database)
	leaks := func(rows []map[string]any) bool {
		b, _ := json.Marshal(rows)
		return strings.Contains(string(b), secret)
	}
	for _, c := range readCypherCases(t) {
		t.Run(c.Name, func(t *testing.T) {
			if q, err := retrieve.CheckCypher(c.Query, 25); err == nil {
				rows, err := st.QueryReadOnly(ctx, q, nil, 25)
				if !c.Hostile && err != nil {
					t.Errorf("benign %q: %v", q, err)
				}
				if leaks(rows) {
					t.Errorf("%q passed the check and returned the foreign node's value: %v", q, rows)
				}
				return
			} else if !c.Hostile {
				t.Fatal(err)
			}
			// The server alone, on the raw text: what does it let through?
			rows, err := st.QueryReadOnly(ctx, c.Query, nil, 25)
			t.Logf("server alone: rows=%d leaked=%v err=%v", len(rows), leaks(rows), err)
			if c.ServerRefuses && !errors.Is(err, neo4j.ErrNotReadOnly) {
				t.Errorf("hostile %q: the server's plan check let it run (rows %v, err %v)", c.Query, rows, err)
			}
		})
	}
}

// plantForeignNodes writes two linked :Secret nodes that are not
// docgraph's into the test database and removes them when the test ends;
// it returns the value they hold.
func plantForeignNodes(t *testing.T, uri, user, pw, database string) string {
	t.Helper()
	ctx := context.Background()
	d, err := n4j.NewDriverWithContext(uri, n4j.BasicAuth(user, pw, ""))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close(ctx) })
	secret := fmt.Sprintf("foreign-%d", time.Now().UnixNano())
	run := func(q string) {
		if _, err := n4j.ExecuteQuery(ctx, d, q, map[string]any{"v": secret}, n4j.EagerResultTransformer,
			n4j.ExecuteQueryWithDatabase(database)); err != nil {
			t.Fatal(err)
		}
	}
	run(`CREATE (:Secret {v: $v, name: $v})-[:OWNS {v: $v}]->(:Secret {v: $v})`)
	t.Cleanup(func() { run(`MATCH (s:Secret {v: $v}) DETACH DELETE s`) })
	return secret
}

// TestCheckCypherBounds: a query's size, boolean terms, nesting and
// pattern parts are bounded before it reaches the server, which plans
// before any timeout applies (a megabyte of OR terms kept its planner busy
// for 19 minutes), and the largest accepted shapes stay accepted.
func TestCheckCypherBounds(t *testing.T) {
	ors := func(n int) string {
		terms := make([]string, n)
		for i := range terms {
			terms[i] = fmt.Sprintf("n.name = 'x%d'", i)
		}
		return "MATCH (n:Entity) WHERE " + strings.Join(terms, " OR ") + " RETURN n.name"
	}
	nested := func(n int) string {
		return "MATCH (n:Entity) WHERE " + strings.Repeat("(", n) + "n.name = 'x'" + strings.Repeat(")", n) + " RETURN n.name"
	}
	parts := func(n int) string {
		q := "MATCH (a0:Entity)"
		for i := 1; i < n; i++ {
			q += fmt.Sprintf("-[:RELATES]->(a%d:Entity)", i)
		}
		return q + " RETURN a0.name"
	}
	long := "MATCH (n:Entity) WHERE n.name IN ['" + strings.Repeat("x", 4100) + "'] RETURN n.name"
	for _, c := range []struct {
		name  string
		query string
		ok    bool
	}{
		{"a megabyte of OR terms", ors(60000), false},
		{"2,000 OR terms", ors(2000), false},
		{"33 boolean terms", ors(34), false},
		{"32 boolean terms", ors(33), true},
		{"brackets 13 deep", nested(13), false},
		{"brackets 12 deep", nested(12), true},
		{"25 pattern parts", parts(13), false}, // 13 nodes and 12 relationships
		{"24 pattern parts", parts(12) + ", (b:Entity)", true},
		{"over 4 KiB", long, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := retrieve.CheckCypher(c.query, 25)
			if c.ok && err != nil {
				t.Errorf("refused: %v", err)
			}
			if !c.ok && !errors.Is(err, retrieve.ErrUnsafeCypher) {
				t.Errorf("accepted (%d bytes)", len(c.query))
			}
		})
	}
}

// BenchmarkCypherPlanning has a real Neo4j plan (EXPLAIN, a fresh text
// each time so no cached plan is reused) the largest shapes CheckCypher
// accepts, and one beyond its bound for scale. Run it with the NEO4J_*
// variables set:
//
//	go test ./retrieve -run '^$' -bench CypherPlanning -benchtime 5x
func BenchmarkCypherPlanning(b *testing.B) {
	uri, user, pw := os.Getenv("NEO4J_URI"), os.Getenv("NEO4J_USER"), os.Getenv("NEO4J_PASSWORD")
	if uri == "" || user == "" || pw == "" {
		b.Skip("set NEO4J_URI, NEO4J_USER and NEO4J_PASSWORD to run against a Neo4j server")
	}
	ctx := context.Background()
	d, err := n4j.NewDriverWithContext(uri, n4j.BasicAuth(user, pw, ""))
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close(ctx)
	join := func(n int, sep string, f func(i int) string) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = f(i)
		}
		return strings.Join(parts, sep)
	}
	or := func(n int) string {
		return "MATCH (n:Entity) WHERE " + join(n, " OR ", func(i int) string { return fmt.Sprintf("n.name = 'x%d'", i) }) + " RETURN n.name"
	}
	chain := "MATCH (a0:Entity)" + join(11, "", func(i int) string { return fmt.Sprintf("-[:RELATES]->(a%d:Entity)", i+1) }) + " RETURN a0.name"
	parts := "MATCH " + join(8, ", ", func(i int) string { return fmt.Sprintf("(a%d:Entity)-[:RELATES]->(b%d:Entity)", i, i) }) + " RETURN a0.name"
	in := "MATCH (n:Entity) WHERE n.name IN [" + join(380, ",", func(i int) string { return fmt.Sprintf("'x%06d'", i) }) + "] RETURN n.name"
	for _, c := range []struct {
		name, query string
		accepted    bool
	}{
		{"32 ORs", or(32), true},
		{"256 ORs", or(256), false},
		{"chain of 11 relationships", chain, true},
		{"8 comma-separated parts", parts, true},
		{"IN list of 380 strings (3.8 KiB)", in, true},
	} {
		if _, err := retrieve.CheckCypher(c.query, 25); (err == nil) != c.accepted {
			b.Fatalf("%s: CheckCypher accepted=%v, want %v (%v)", c.name, err == nil, c.accepted, err)
		}
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				q := fmt.Sprintf("EXPLAIN %s // %d", c.query, time.Now().UnixNano())
				if _, err := n4j.ExecuteQuery(ctx, d, q, nil, n4j.EagerResultTransformer); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
