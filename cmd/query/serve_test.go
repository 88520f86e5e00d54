package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/spf13/pflag"

	"github.com/docgraph/docgraph/llm/llmtest"
	"github.com/docgraph/docgraph/store"

	"github.com/docgraph/docgraph/server"
)

// testFlags are serve's flags as parsed from args, for store db.
func testFlags(t *testing.T, db string, args ...string) *serverFlags {
	t.Helper()
	f := &serverFlags{}
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	f.add(fs)
	if err := fs.Parse(append([]string{"--store", db}, args...)); err != nil {
		t.Fatal(err)
	}
	return f
}

// testEngine opens an engine over db with serve's flags in args.
func testEngine(t *testing.T, db string, args ...string) *server.Engine {
	t.Helper()
	f := testFlags(t, db, args...)
	e, err := openTestEngine(f)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	if err := e.Warm(context.Background()); err != nil {
		t.Fatal(err)
	}
	return e
}

// openTestEngine opens the engine the flags name, as serve does.
func openTestEngine(f *serverFlags) (*server.Engine, error) {
	cfg, err := f.config()
	if err != nil {
		return nil, err
	}
	return server.OpenEngine(context.Background(), f.Settings, cfg, false)
}

// corpusStore is testdata/corpus ingested into a new store.
func corpusStore(t *testing.T) string {
	t.Helper()
	db := "sqlite://" + filepath.Join(t.TempDir(), "g.db")
	ingestCorpus(t, db)
	return db
}

func startAPI(t *testing.T, e *server.Engine, cfg server.HandlerConfig) *httptest.Server {
	t.Helper()
	if cfg.Timeout == 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.MaxConcurrent == 0 {
		cfg.MaxConcurrent = 4
	}
	srv := httptest.NewServer(server.NewHandler(e, cfg))
	t.Cleanup(srv.Close)
	return srv
}

type reply struct {
	Status int
	Header http.Header
	Body   []byte
}

func do(t *testing.T, method, url, body string, header ...string) reply {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Host" {
			req.Host = header[i+1]
			continue
		}
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return reply{resp.StatusCode, resp.Header, b}
}

func decode[T any](t *testing.T, b []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("decode %T: %v\n%s", v, err, b)
	}
	return v
}

// withoutTimings drops the stage timings, which differ between runs.
func withoutTimings(t *testing.T, b []byte) map[string]any {
	t.Helper()
	m := decode[map[string]any](t, b)
	delete(m, "timings_ns")
	return m
}

// TestServeQueryIsQueryJSON: POST /v1/query returns what `query --json`
// prints for the same question and settings, in every mode.
func TestServeQueryIsQueryJSON(t *testing.T) {
	db := corpusStore(t)
	srv := startAPI(t, testEngine(t, db), server.HandlerConfig{})
	q := "Who broke Enigma messages at Bletchley Park?"
	for _, c := range []struct {
		flags []string
		body  string
	}{
		{[]string{"--top-k", "3"}, `{"question": %q, "top_k": 3}`},
		{[]string{"--mode", "naive"}, `{"question": %q, "mode": "naive"}`},
		{[]string{"--mode", "hybrid", "--max-entities", "5"}, `{"question": %q, "mode": "hybrid", "max_entities": 5}`},
		{[]string{"--mode", "path", "--top-k", "4"}, `{"question": %q, "mode": "path", "top_k": 4}`},
	} {
		out, errs, err := run(t, append(append([]string{"--store", db, "--config", "", "--json"}, c.flags...), q)...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", c.flags, err, errs)
		}
		r := do(t, "POST", srv.URL+"/v1/query", fmt.Sprintf(c.body, q))
		if r.Status != http.StatusOK {
			t.Fatalf("%s: %d %s", c.body, r.Status, r.Body)
		}
		cli, api := withoutTimings(t, []byte(out)), withoutTimings(t, r.Body)
		a, _ := json.Marshal(cli)
		b, _ := json.Marshal(api)
		if !bytes.Equal(a, b) {
			t.Errorf("%v: the API's JSON differs from query --json:\n cli %.600s\n api %.600s", c.flags, a, b)
		}
	}
}

func TestServeRejectsBadInput(t *testing.T) {
	db := corpusStore(t)
	srv := startAPI(t, testEngine(t, db), server.HandlerConfig{})
	big := `{"question": "` + strings.Repeat("a", 100<<10) + `"}`
	long := `{"question": "` + strings.Repeat("why ", 5000) + `"}`
	for _, c := range []struct {
		method, path, body string
		status             int
		code               string
	}{
		{"POST", "/v1/query", `{"question": ""}`, 400, server.CodeEmptyQuestion},
		{"POST", "/v1/query", `{"question": "   \n"}`, 400, server.CodeEmptyQuestion},
		{"POST", "/v1/query", `{}`, 400, server.CodeEmptyQuestion},
		{"POST", "/v1/query", big, 413, server.CodeBodyTooLarge},
		{"POST", "/v1/query", long, 400, server.CodeQuestionTooLong},
		{"POST", "/v1/query", `{"question": "x", "mode": "deep"}`, 400, server.CodeUnknownMode},
		{"POST", "/v1/query", `{"question": "x", "top_k": 0}`, 400, server.CodeOutOfRange},
		{"POST", "/v1/query", `{"question": "x", "top_k": -3}`, 400, server.CodeOutOfRange},
		{"POST", "/v1/query", `{"question": "x", "top_k": 100000}`, 400, server.CodeOutOfRange},
		{"POST", "/v1/query", `{"question": "x", "top_k": 1e400}`, 400, server.CodeInvalidJSON},
		{"POST", "/v1/query", `{"question": "x", "damping": 1}`, 400, server.CodeOutOfRange},
		{"POST", "/v1/query", `{"question": "x", "max_context_tokens": 10}`, 400, server.CodeOutOfRange},
		{"POST", "/v1/query", `{"question": "x", "seeds": ["Go"]}`, 400, server.CodeInvalidParam},
		{"POST", "/v1/query", `{"question": "x", "mode": "path", "paths": "se=nonsense"}`, 400, server.CodeInvalidParam},
		{"POST", "/v1/query", `{"question": "x", "mode": "path", "seeds": ["No Such Entity Anywhere"]}`, 400, server.CodeInvalidParam},
		{"POST", "/v1/query", `{"question": "x", "cypher": true}`, 400, server.CodeUnknownField},
		{"POST", "/v1/query", `{"question": "x", "top_k": "5"}`, 400, server.CodeInvalidJSON},
		{"POST", "/v1/query", `{"question": "x"`, 400, server.CodeInvalidJSON},
		{"POST", "/v1/query", `{"question": "x"} {"question": "y"}`, 400, server.CodeInvalidJSON},
		{"POST", "/v1/query", `["question"]`, 400, server.CodeInvalidJSON},
		{"POST", "/v1/query", ``, 400, server.CodeInvalidJSON},
		{"GET", "/v1/query", ``, 405, server.CodeMethod},
		{"DELETE", "/v1/documents", ``, 405, server.CodeMethod},
		{"GET", "/v1/documents?limit=0", ``, 400, server.CodeOutOfRange},
		{"GET", "/v1/documents?limit=x", ``, 400, server.CodeInvalidParam},
		{"GET", "/v1/documents?offset=-1", ``, 400, server.CodeOutOfRange},
		{"GET", "/v1/documents?status=gone", ``, 400, server.CodeInvalidParam},
		{"GET", "/v1/entities", ``, 400, server.CodeMissingParam},
		{"GET", "/v1/entities?name=Go&limit=1000", ``, 400, server.CodeOutOfRange},
		{"GET", "/v1/entities/no-such-entity", ``, 404, server.CodeNotFound},
		{"GET", "/v1/graph", ``, 400, server.CodeMissingParam},
		{"GET", "/v1/graph?entity=Go&hops=3", ``, 400, server.CodeOutOfRange},
		{"GET", "/v1/graph?entity=no-such-entity", ``, 404, server.CodeNotFound},
		{"GET", "/v1/chunks/no-such-chunk", ``, 404, server.CodeNotFound},
		{"GET", "/v2/query", ``, 404, server.CodeNotFound},
	} {
		r := do(t, c.method, srv.URL+c.path, c.body)
		e := decode[server.APIError](t, r.Body)
		if r.Status != c.status || e.Code != c.code || e.Message == "" {
			t.Errorf("%s %s %.60q: %d %+v; want %d %s", c.method, c.path, c.body, r.Status, e, c.status, c.code)
		}
		if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("%s %s: error content type %q", c.method, c.path, ct)
		}
	}
	if r := do(t, "GET", srv.URL+"/healthz", ""); r.Status != 200 {
		t.Errorf("after bad input the server is unhealthy: %d %s", r.Status, r.Body)
	}
}

func TestServeBrowse(t *testing.T) {
	db := corpusStore(t)
	srv := startAPI(t, testEngine(t, db), server.HandlerConfig{})
	get := func(path string) []byte {
		t.Helper()
		r := do(t, "GET", srv.URL+path, "")
		if r.Status != 200 {
			t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
		}
		return r.Body
	}

	// Documents page by page, in path order.
	var paths []string
	next := "/v1/documents?limit=4"
	for pages := 0; next != ""; pages++ {
		p := decode[server.DocPage](t, get(next))
		if p.Total != 10 || len(p.Documents) > 4 || pages > 3 {
			t.Fatalf("page %+v", p)
		}
		for _, d := range p.Documents {
			paths = append(paths, d.Path)
			if d.Status != "done" || d.Chunks != 1 || d.Title == "" {
				t.Errorf("document %+v", d)
			}
		}
		next = ""
		if p.NextOffset != nil {
			next = fmt.Sprintf("/v1/documents?limit=4&offset=%d", *p.NextOffset)
		}
	}
	if len(paths) != 10 || !sort.StringsAreSorted(paths) {
		t.Errorf("paged documents %v", paths)
	}
	if p := decode[server.DocPage](t, get("/v1/documents?status=failed")); p.Total != 0 || len(p.Documents) != 0 {
		t.Errorf("failed documents %+v", p)
	}
	if p := decode[server.DocPage](t, get("/v1/documents?path_prefix="+url.QueryEscape(filepath.Dir(paths[0])))); p.Total == 0 || p.Total == 10 {
		t.Errorf("path_prefix %s: %d documents", filepath.Dir(paths[0]), p.Total)
	}

	// Entities by name: the exact one first, then full-text matches.
	ents := decode[struct{ Entities []server.EntityJSON }](t, get("/v1/entities?name="+url.QueryEscape("alan turing"))).Entities
	if len(ents) < 2 || ents[0].Name != "Alan Turing" || ents[0].Via != "name" || ents[1].Via != "fulltext" {
		t.Fatalf("entities for alan turing: %+v", ents)
	}
	// One entity, by id and by name: passages with text and path, relations.
	for _, ref := range []string{ents[0].ID, url.PathEscape("Alan Turing")} {
		d := decode[server.EntityDetail](t, get("/v1/entities/"+ref))
		if d.ID != ents[0].ID || len(d.Passages) == 0 || len(d.Relations) == 0 {
			t.Fatalf("entity %s: %+v", ref, d)
		}
		if !slices.ContainsFunc(d.Passages, func(p server.MentionJSON) bool {
			return strings.HasSuffix(p.DocPath, "alan-turing.txt") && strings.Contains(p.Text, "Turing")
		}) {
			t.Errorf("entity passages lack alan-turing.txt: %+v", d.Passages)
		}
		for _, r := range d.Relations {
			if r.Source != d.ID && r.Target != d.ID || r.SourceName == "" || r.TargetName == "" {
				t.Errorf("relation %+v does not touch %s or lacks names", r, d.ID)
			}
		}
	}

	// Neighbourhoods: every edge's ends are nodes; two hops reach further.
	g1 := decode[server.GraphJSON](t, get("/v1/graph?entity="+ents[0].ID))
	g2 := decode[server.GraphJSON](t, get("/v1/graph?hops=2&limit=200&entity="+ents[0].ID))
	for _, g := range []server.GraphJSON{g1, g2} {
		nodes := map[string]int{}
		for _, n := range g.Nodes {
			nodes[n.ID] = n.Hops
		}
		if nodes[g.Center] != 0 || len(g.Edges) == 0 {
			t.Fatalf("graph %+v", g)
		}
		for _, e := range g.Edges {
			if _, ok := nodes[e.Source]; !ok {
				t.Errorf("edge %s source %s is not a node", e.ID, e.Source)
			}
			if _, ok := nodes[e.Target]; !ok {
				t.Errorf("edge %s target %s is not a node", e.ID, e.Target)
			}
		}
	}
	if len(g2.Nodes) <= len(g1.Nodes) || !slices.ContainsFunc(g2.Nodes, func(n server.GraphNode) bool { return n.Hops == 2 }) {
		t.Errorf("2 hops: %d nodes, 1 hop: %d", len(g2.Nodes), len(g1.Nodes))
	}
	if g := decode[server.GraphJSON](t, get("/v1/graph?limit=2&entity="+ents[0].ID)); len(g.Edges) != 2 || !g.Truncated {
		t.Errorf("limit 2: %d edges, truncated %v", len(g.Edges), g.Truncated)
	}

	// A passage of a query, read back as a chunk with its entities.
	r := do(t, "POST", srv.URL+"/v1/query", `{"question": "Who designed Go?", "top_k": 1}`)
	res := decode[struct {
		Passages []struct {
			ChunkID string `json:"chunk_id"`
			DocPath string `json:"doc_path"`
		}
	}](t, r.Body)
	c := decode[server.ChunkJSON](t, get("/v1/chunks/"+url.PathEscape(res.Passages[0].ChunkID)))
	if c.DocPath != res.Passages[0].DocPath || c.Text == "" || len(c.Entities) == 0 || c.DocChunks != 1 {
		t.Errorf("chunk %+v", c)
	}

	s := decode[server.StatsJSON](t, get("/v1/stats"))
	if s.Documents != 10 || s.Chunks != 10 || s.Entities == 0 || s.GraphVersion == "" || s.LLM || s.Cypher {
		t.Errorf("stats %+v", s)
	}
}

// TestServeIsReadOnly: nothing any endpoint does moves the store's version.
func TestServeIsReadOnly(t *testing.T) {
	db := corpusStore(t)
	e := testEngine(t, db)
	srv := startAPI(t, e, server.HandlerConfig{})
	gs := e.Store().(store.GraphScanner)
	before, _ := gs.GraphVersion(context.Background())
	for _, b := range []string{`{"question": "Go"}`, `{"question": "Go", "mode": "path"}`, `{"question": "Go", "mode": "hybrid", "context_only": true}`} {
		do(t, "POST", srv.URL+"/v1/query", b)
	}
	for _, p := range []string{"/v1/documents", "/v1/entities?name=Go", "/v1/entities/Go", "/v1/graph?entity=Go&hops=2", "/v1/stats"} {
		do(t, "GET", srv.URL+p, "")
	}
	if after, _ := gs.GraphVersion(context.Background()); after != before {
		t.Errorf("the store's version moved from %s to %s", before, after)
	}
}

func TestServeToken(t *testing.T) {
	db := corpusStore(t)
	const token = "s3cret-token-0123456789abcdef"
	var logs bytes.Buffer
	logw := &syncWriter{w: &logs}
	srv := startAPI(t, testEngine(t, db), server.HandlerConfig{Token: token, AccessLog: true, Logf: logw.logf})
	body := `{"question": "Who designed Go?"}`
	for _, c := range []struct {
		header []string
		status int
	}{
		{nil, 401},
		{[]string{"Authorization", "Bearer wrong-token-0123456789abcdef"}, 401},
		{[]string{"Authorization", token}, 401},
		{[]string{"Authorization", "Bearer " + token[:len(token)-1]}, 401},
		{[]string{"Authorization", "Bearer " + token}, 200},
		// The scheme is case-insensitive (RFC 7235).
		{[]string{"Authorization", "bearer " + token}, 200},
		{[]string{"Authorization", "BEARER " + token}, 200},
		{[]string{"Authorization", "Basic " + token}, 401},
		{[]string{"Authorization", "Bearer" + token}, 401},
		{[]string{"Authorization", "bearer wrong-token-0123456789abcdef"}, 401},
		// A token also lifts the localhost-only host check.
		{[]string{"Authorization", "Bearer " + token, "Host", "docgraph.example.com"}, 200},
	} {
		r := do(t, "POST", srv.URL+"/v1/query", body, c.header...)
		if r.Status != c.status {
			t.Errorf("%v: %d %s, want %d", c.header, r.Status, r.Body, c.status)
		}
		if r.Status == 401 && (r.Header.Get("WWW-Authenticate") == "" || decode[server.APIError](t, r.Body).Code != server.CodeUnauthorized) {
			t.Errorf("401 without WWW-Authenticate or code: %v %s", r.Header, r.Body)
		}
		if bytes.Contains(r.Body, []byte(token)) {
			t.Errorf("the token is echoed in a response")
		}
	}
	if r := do(t, "GET", srv.URL+"/healthz", ""); r.Status != 200 {
		t.Errorf("healthz wants no token: %d", r.Status)
	}
	if r := do(t, "GET", srv.URL+"/v1/stats", ""); r.Status != 401 {
		t.Errorf("stats without token: %d", r.Status)
	}
	logw.mu.Lock()
	defer logw.mu.Unlock()
	if !strings.Contains(logs.String(), "POST /v1/query 401") || strings.Contains(logs.String(), token) || strings.Contains(logs.String(), "wrong-token") {
		t.Errorf("access log shows a token or misses requests:\n%s", logs.String())
	}
}

func TestServeHostCheckWithoutToken(t *testing.T) {
	srv := startAPI(t, testEngine(t, corpusStore(t)), server.HandlerConfig{})
	for host, status := range map[string]int{"": 200, "localhost:8080": 200, "[::1]:8080": 200, "attacker.example:8080": 403, "10.1.2.3": 403} {
		var h []string
		if host != "" {
			h = []string{"Host", host}
		}
		if r := do(t, "GET", srv.URL+"/v1/stats", "", h...); r.Status != status {
			t.Errorf("Host %q: %d, want %d", host, r.Status, status)
		}
	}
	r := do(t, "POST", srv.URL+"/v1/query", `{"question": "Go"}`, "Sec-Fetch-Site", "cross-site", "Origin", "https://attacker.example")
	if r.Status != 403 {
		t.Errorf("cross-site POST: %d %s", r.Status, r.Body)
	}
}

func TestCheckAddr(t *testing.T) {
	for _, c := range []struct {
		addr, token string
		ok          bool
	}{
		{"127.0.0.1:8080", "", true},
		{"localhost:0", "", true},
		{"[::1]:8080", "", true},
		{"0.0.0.0:8080", "", false},
		{":8080", "", false},
		{"192.0.2.10:8080", "", false},
		{"0.0.0.0:8080", "a-token-of-enough-length", true},
		{"nonsense", "", false},
	} {
		if err := checkAddr("--addr", c.addr, c.token); (err == nil) != c.ok {
			t.Errorf("checkAddr(%q, token %v) = %v", c.addr, c.token != "", err)
		}
	}
	// The token is checked, and never printed, by the command.
	_, errs, err := run(t, "serve", "--config", "", "--addr", "0.0.0.0:0")
	if err == nil || !strings.Contains(errs, "DOCGRAPH_TOKEN") {
		t.Errorf("serve on 0.0.0.0 without a token: %v %q", err, errs)
	}
	_, errs, err = run(t, "serve", "--config", "", "--store", "sqlite://"+filepath.Join(t.TempDir(), "none.db"), "--addr", "127.0.0.1:0")
	if err == nil || !strings.Contains(errs, "no store at") {
		t.Errorf("serve on a missing store: %v %q", err, errs)
	}
	_, errs, err = run(t, "serve", "--config", "", "--token", "short")
	if err == nil || !strings.Contains(errs, "at least 16") {
		t.Errorf("short token: %v %q", err, errs)
	}
}

// TestServeStreamsAnswer: with an LLM, "stream": true sends the answer as
// token events, then the sources, then the whole result.
func TestServeStreamsAnswer(t *testing.T) {
	db := corpusStore(t)
	srv := fakeLLM(t, "Alan Turing led the work on Enigma at Bletchley Park [1].")
	srv.SetChunkSize(5)
	api := startAPI(t, testEngine(t, db, "--llm", "openai:test-model"), server.HandlerConfig{})
	r := do(t, "POST", api.URL+"/v1/query", `{"question": "Who broke Enigma messages at Bletchley Park?", "stream": true}`)
	if r.Status != 200 || r.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("%d %s\n%s", r.Status, r.Header.Get("Content-Type"), r.Body)
	}
	events := parseSSE(t, r.Body)
	var answer strings.Builder
	var names []string
	for _, ev := range events {
		if len(names) == 0 || names[len(names)-1] != ev.name {
			names = append(names, ev.name)
		}
		if ev.name == "token" {
			answer.WriteString(decode[server.TokenEvent](t, ev.data).Text)
		}
	}
	if strings.Join(names, ",") != "token,sources,result" || len(events) < 4 {
		t.Fatalf("events %v (%d)", names, len(events))
	}
	if answer.String() != "Alan Turing led the work on Enigma at Bletchley Park [1]." {
		t.Errorf("streamed answer %q", answer.String())
	}
	srcs := decode[struct {
		Sources []struct {
			N       int
			DocPath string `json:"doc_path"`
			Cited   bool
		}
	}](t, events[len(events)-2].data).Sources
	if len(srcs) == 0 || !srcs[0].Cited || !strings.HasSuffix(srcs[0].DocPath, "alan-turing.txt") {
		t.Errorf("sources %+v", srcs)
	}
	res := decode[struct{ Answer string }](t, events[len(events)-1].data)
	if res.Answer != answer.String() {
		t.Errorf("result answer %q", res.Answer)
	}

	// Without "stream" the same request gets the answer in the JSON.
	r = do(t, "POST", api.URL+"/v1/query", `{"question": "Who broke Enigma messages at Bletchley Park?"}`)
	if res := decode[struct{ Answer string }](t, r.Body); r.Status != 200 || res.Answer != answer.String() {
		t.Errorf("JSON answer: %d %q", r.Status, res.Answer)
	}
}

type sseEvent struct {
	name string
	data []byte
}

func parseSSE(t *testing.T, body []byte) []sseEvent {
	t.Helper()
	var out []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.name != "" {
				out = append(out, cur)
			}
			cur = sseEvent{}
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.data = []byte(strings.TrimPrefix(line, "data: "))
		default:
			t.Fatalf("not a server-sent event line: %q", line)
		}
	}
	return out
}

// slowLLM points the openai provider at a fake model answering content
// after delay.
func slowLLM(t *testing.T, content string, delay time.Duration) {
	t.Helper()
	llm := llmtest.NewServer(func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Content: content, Delay: delay} })
	t.Cleanup(llm.Close)
	t.Setenv("OPENAI_BASE_URL", llm.OpenAIBaseURL())
	t.Setenv("OPENAI_API_KEY", "sk-test-not-real")
}

// TestServeTimesOut: a request that outlives --request-timeout gets a 504,
// and the server goes on answering.
func TestServeTimesOut(t *testing.T) {
	db := corpusStore(t)
	// A model that never answers in time; the timeout leaves the follow-up
	// query, which needs no model, room on a loaded machine.
	slowLLM(t, "late", time.Hour)
	srv := startAPI(t, testEngine(t, db, "--llm", "openai:test-model"), server.HandlerConfig{Timeout: 2 * time.Second})
	r := do(t, "POST", srv.URL+"/v1/query", `{"question": "Who designed Go?", "mode": "naive"}`)
	if e := decode[server.APIError](t, r.Body); r.Status != http.StatusGatewayTimeout || e.Code != server.CodeTimeout {
		t.Errorf("slow answer: %d %+v", r.Status, e)
	}
	if r := do(t, "POST", srv.URL+"/v1/query", `{"question": "Who designed Go?", "mode": "naive", "context_only": true}`); r.Status != 200 {
		t.Errorf("after a timeout: %d %s", r.Status, r.Body)
	}
}

// TestServeConcurrentQueriesAgree: many clients at once get what one gets.
func TestServeConcurrentQueriesAgree(t *testing.T) {
	srv := startAPI(t, testEngine(t, corpusStore(t)), server.HandlerConfig{MaxConcurrent: 3})
	questions := []string{"Who designed Go?", "Who broke Enigma messages at Bletchley Park?", "Which languages did Ken Thompson create?", "What is a graph database?"}
	want := map[string][]byte{}
	for _, q := range questions {
		body, _ := json.Marshal(map[string]any{"question": q, "top_k": 4})
		want[q] = passagesOf(t, do(t, "POST", srv.URL+"/v1/query", string(body)).Body)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 6; i++ {
				q := questions[(w+i)%len(questions)]
				body, _ := json.Marshal(map[string]any{"question": q, "top_k": 4})
				resp, err := http.Post(srv.URL+"/v1/query", "application/json", bytes.NewReader(body))
				if err != nil {
					errs <- err.Error()
					return
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					errs <- fmt.Sprintf("%d %s", resp.StatusCode, b)
				} else if got := passagesOf(t, b); !bytes.Equal(got, want[q]) {
					errs <- fmt.Sprintf("%q: concurrent passages differ:\n%s\n%s", q, got, want[q])
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func passagesOf(t *testing.T, b []byte) []byte {
	t.Helper()
	p, _ := json.Marshal(decode[map[string]any](t, b)["passages"])
	return p
}

// TestServeShutdownFinishesRequests: cancelling serve's context (SIGTERM)
// lets the request in flight finish, then the command returns nil.
func TestServeShutdownFinishesRequests(t *testing.T) {
	db := corpusStore(t)
	// The model holds its answer until serve has stopped listening, so the
	// request is in flight when the shutdown begins, however slow the machine.
	asked, release := make(chan struct{}, 1), make(chan struct{})
	llm := llmtest.NewServer(func(llmtest.Request) llmtest.Reply {
		select {
		case asked <- struct{}{}:
		default:
		}
		<-release
		return llmtest.Reply{Content: "Robert Griesemer, Rob Pike and Ken Thompson [1]."}
	})
	t.Cleanup(llm.Close)
	letGo := sync.OnceFunc(func() { close(release) })
	t.Cleanup(letGo) // before llm.Close, which waits for its handlers
	t.Setenv("OPENAI_BASE_URL", llm.OpenAIBaseURL())
	t.Setenv("OPENAI_API_KEY", "sk-test-not-real")
	f := testFlags(t, db, "--llm", "openai:test-model")
	opts := &serveOptions{serverFlags: *f, Addr: "127.0.0.1:0", MaxConcurrent: 4}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr := make(chan string, 1)
	done := make(chan error, 1)
	var errs bytes.Buffer
	go func() {
		done <- runServe(ctx, opts, streams{Out: io.Discard, Err: &syncWriter{w: &errs}}, func(a string) { addr <- a })
	}()
	base := "http://" + <-addr
	answered := make(chan reply, 1)
	go func() {
		answered <- do(t, "POST", base+"/v1/query", `{"question": "Who designed Go?", "mode": "naive"}`)
	}()
	select {
	case <-asked:
	case <-time.After(30 * time.Second):
		t.Fatal("the request never reached the model")
	}
	cancel()
	for deadline := time.Now().Add(30 * time.Second); ; {
		r, err := http.Get(base + "/healthz")
		if err != nil {
			break // no longer listening: the shutdown has begun
		}
		r.Body.Close()
		if time.Now().After(deadline) {
			t.Fatal("serve still listening 30 s after its context ended")
		}
		time.Sleep(10 * time.Millisecond)
	}
	letGo()
	if r := <-answered; r.Status != 200 || !strings.Contains(string(r.Body), "Griesemer") {
		t.Errorf("request in flight at shutdown: %d %s", r.Status, r.Body)
	}
	if err := <-done; err != nil {
		t.Errorf("serve returned %v", err)
	}
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Error("still serving after shutdown")
	}
	if !strings.Contains(errs.String(), "stopped") {
		t.Errorf("log:\n%s", errs.String())
	}
}

type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// logf writes one log line, as server.HandlerConfig.Logf does.
func (s *syncWriter) logf(format string, args ...any) {
	fmt.Fprintf(s, format+"\n", args...)
}

// openAPISpec is the served OpenAPI document, with schemas ready to
// validate responses.
type openAPISpec struct {
	doc     map[string]any
	schemas json.RawMessage // components.schemas, refs rewritten to #/$defs/
}

func loadOpenAPI(t *testing.T, b []byte) *openAPISpec {
	t.Helper()
	doc := decode[map[string]any](t, b)
	comps, _ := json.Marshal(doc["components"].(map[string]any)["schemas"])
	return &openAPISpec{doc: doc, schemas: json.RawMessage(strings.ReplaceAll(string(comps), "#/components/schemas/", "#/$defs/"))}
}

// operations lists "METHOD /path" of every operation in the document.
func (o *openAPISpec) operations() []string {
	var out []string
	for p, item := range o.doc["paths"].(map[string]any) {
		for m := range item.(map[string]any) {
			out = append(out, strings.ToUpper(m)+" "+p)
		}
	}
	sort.Strings(out)
	return out
}

// documents says whether the document gives status for the operation.
func (o *openAPISpec) documents(op string, status int) bool {
	method, path, _ := strings.Cut(op, " ")
	item, _ := o.doc["paths"].(map[string]any)[path].(map[string]any)
	operation, _ := item[strings.ToLower(method)].(map[string]any)
	responses, _ := operation["responses"].(map[string]any)
	_, ok := responses[fmt.Sprint(status)]
	return ok
}

// validate checks a response body against the schema the document gives
// for the operation, status and content type.
func (o *openAPISpec) validate(t *testing.T, op string, status int, contentType string, body []byte) {
	t.Helper()
	method, path, _ := strings.Cut(op, " ")
	item, ok := o.doc["paths"].(map[string]any)[path].(map[string]any)
	if !ok {
		t.Fatalf("%s: not in the OpenAPI document", op)
	}
	resp, ok := item[strings.ToLower(method)].(map[string]any)["responses"].(map[string]any)[fmt.Sprint(status)].(map[string]any)
	if !ok {
		t.Errorf("%s: status %d is not documented", op, status)
		return
	}
	ct, _, _ := strings.Cut(contentType, ";")
	media, ok := resp["content"].(map[string]any)[ct].(map[string]any)
	if !ok {
		t.Errorf("%s %d: content type %s is not documented", op, status, ct)
		return
	}
	schema, _ := json.Marshal(media["schema"])
	if err := o.check(schema, body); err != nil {
		t.Errorf("%s %d: %v", op, status, err)
	}
}

// check validates body against schema, which may refer to the components.
func (o *openAPISpec) check(schema, body []byte) error {
	root := map[string]any{}
	if err := json.Unmarshal([]byte(strings.ReplaceAll(string(schema), "#/components/schemas/", "#/$defs/")), &root); err != nil {
		return err
	}
	root["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	root["$defs"] = o.schemas
	b, _ := json.Marshal(root)
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("schema: %w", err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		return fmt.Errorf("resolve schema: %w", err)
	}
	var instance any
	if err := json.Unmarshal(body, &instance); err != nil {
		return fmt.Errorf("body is not JSON: %w\n%s", err, body)
	}
	if err := rs.Validate(instance); err != nil {
		return fmt.Errorf("response does not match the documented schema: %w\n%.400s", err, body)
	}
	return nil
}

// TestOpenAPIMatchesHandlers: every operation in the document is served,
// every served route is documented, and the responses to requests of every
// operation (errors included) validate against the documented schemas.
func TestOpenAPIMatchesHandlers(t *testing.T) {
	db := corpusStore(t)
	srv := startAPI(t, testEngine(t, db), server.HandlerConfig{})
	spec := loadOpenAPI(t, do(t, "GET", srv.URL+"/v1/openapi.json", "").Body)
	// The validation has teeth: a missing, mistyped or undocumented field fails.
	for _, c := range []struct{ schema, body string }{
		{`{"$ref": "#/components/schemas/Error"}`, `{"code": "x"}`},
		{`{"$ref": "#/components/schemas/Error"}`, `{"code": 1, "message": "m"}`},
		{`{"$ref": "#/components/schemas/Document"}`, `{"id": "d", "path": "p", "title": "", "format": "txt", "status": "done", "chunks": 1, "size": 1, "mod_time": "", "updated_at": "", "warnings": [], "extra": 1}`},
		{`{"$ref": "#/components/schemas/QueryResponse"}`, `{"question": "q", "mode": "mix", "timings_ns": {}, "context_tokens": 1}`},
	} {
		if spec.check([]byte(c.schema), []byte(c.body)) == nil {
			t.Fatalf("%s accepts %s", c.schema, c.body)
		}
	}

	served := server.Operations()
	if !slices.Equal(served, spec.operations()) {
		t.Fatalf("served routes and the OpenAPI document disagree:\n served %v\n document %v", served, spec.operations())
	}

	entity := decode[struct{ Entities []server.EntityJSON }](t, do(t, "GET", srv.URL+"/v1/entities?name=Go", "").Body).Entities[0].ID
	chunk := decode[struct {
		Passages []struct {
			ChunkID string `json:"chunk_id"`
		}
	}](t, do(t, "POST", srv.URL+"/v1/query", `{"question": "Go"}`).Body).Passages[0].ChunkID
	doc := decode[server.DocPage](t, do(t, "GET", srv.URL+"/v1/documents?limit=1", "").Body).Documents[0].ID
	calls := []struct{ op, url, body string }{
		{"GET /healthz", "/healthz", ""},
		{"HEAD /healthz", "/healthz", ""},
		{"GET /v1/openapi.json", "/v1/openapi.json", ""},
		{"POST /v1/query", "/v1/query", `{"question": "Who designed Go?"}`},
		{"POST /v1/query", "/v1/query", `{"question": "Which languages did Ken Thompson create?", "mode": "hybrid", "top_k": 2}`},
		{"POST /v1/query", "/v1/query", `{"question": "Who designed Go?", "mode": "naive"}`},
		{"POST /v1/query", "/v1/query", `{"question": "Who designed Go?", "mode": "path", "top_k": 5}`},
		{"POST /v1/query", "/v1/query", `{"question": "Who designed Go?", "mode": "path", "context_only": true}`},
		{"POST /v1/query", "/v1/query", `{"question": "Who designed Go?", "context_only": true}`},
		{"POST /v1/query", "/v1/query", `{"question": "Who designed Go?", "path_weight": 1}`},
		{"POST /v1/query", "/v1/query", `{"question": ""}`},
		{"POST /v1/query", "/v1/query", `{"question": "` + strings.Repeat("x", 70<<10) + `"}`},
		{"POST /v1/query", "/v1/query", ""},
		{"GET /v1/documents", "/v1/documents?limit=2&offset=1", ""},
		{"GET /v1/documents", "/v1/documents?status=bad", ""},
		{"GET /v1/entities", "/v1/entities?name=Alan%20Turing", ""},
		{"GET /v1/entities", "/v1/entities", ""},
		{"GET /v1/entities/{id}", "/v1/entities/" + entity, ""},
		{"GET /v1/entities/{id}", "/v1/entities/missing", ""},
		{"GET /v1/graph", "/v1/graph?hops=2&entity=" + entity, ""},
		{"GET /v1/graph", "/v1/graph?hops=9&entity=" + entity, ""},
		{"GET /v1/chunks/{id}", "/v1/chunks/" + url.PathEscape(chunk), ""},
		{"GET /v1/chunks/{id}", "/v1/chunks/missing", ""},
		{"GET /v1/documents/{id}", "/v1/documents/" + doc, ""},
		{"GET /v1/documents/{id}", "/v1/documents/missing", ""},
		{"GET /v1/subgraph", "/v1/subgraph?chunk=" + url.QueryEscape(chunk) + "&entity=" + entity, ""},
		{"GET /v1/subgraph", "/v1/subgraph", ""},
		{"GET /v1/stats", "/v1/stats", ""},
	}
	seen := map[string]bool{}
	for _, c := range calls {
		method, _, _ := strings.Cut(c.op, " ")
		r := do(t, method, srv.URL+c.url, c.body)
		seen[c.op] = true
		if method == http.MethodHead {
			if len(r.Body) != 0 || !spec.documents(c.op, r.Status) {
				t.Errorf("%s: %d with %d bytes of body", c.op, r.Status, len(r.Body))
			}
			continue
		}
		spec.validate(t, c.op, r.Status, r.Header.Get("Content-Type"), r.Body)
	}
	for _, op := range spec.operations() {
		if !seen[op] {
			t.Errorf("%s: no test request", op)
		}
	}
	// Wrong methods and a token-guarded server answer as documented too.
	r := do(t, "GET", srv.URL+"/v1/query", "")
	spec.validate(t, "POST /v1/query", r.Status, r.Header.Get("Content-Type"), r.Body)
	guarded := startAPI(t, testEngine(t, db), server.HandlerConfig{Token: "a-token-of-enough-length"})
	r = do(t, "GET", guarded.URL+"/v1/stats", "")
	spec.validate(t, "GET /v1/stats", r.Status, r.Header.Get("Content-Type"), r.Body)

	// Streamed events match their schemas.
	r = do(t, "POST", srv.URL+"/v1/query", `{"question": "Who designed Go?", "stream": true}`)
	spec.validate(t, "POST /v1/query", r.Status, "text/event-stream", []byte(`"stream"`))
	events := parseSSE(t, r.Body)
	if len(events) != 1 || events[0].name != "result" {
		t.Fatalf("stream without an LLM: %v", events)
	}
	spec.validate(t, "POST /v1/query", 200, "application/json", events[0].data)
}

// TestServeSIGTERM: the command itself stops cleanly on SIGTERM.
func TestServeSIGTERM(t *testing.T) {
	db := corpusStore(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := commandOf("serve", "--store", db, "--config", "", "--addr", addr)
	var stderr syncWriter
	var buf bytes.Buffer
	stderr.w = &buf
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if r, err := http.Get("http://" + addr + "/healthz"); err == nil {
			r.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("serve did not come up:\n%s", buf.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("serve exited with %v after SIGTERM", err)
	}
	stderr.mu.Lock()
	defer stderr.mu.Unlock()
	if !strings.Contains(buf.String(), "shutting down") || !strings.Contains(buf.String(), "stopped") {
		t.Errorf("log:\n%s", buf.String())
	}
}

// Logic mode over the API: with a model the server answers from the logic
// form (or mix when it cannot) and says which; without one it is a 400.
func TestServeLogicMode(t *testing.T) {
	db := corpusStore(t)
	offline := startAPI(t, testEngine(t, db), server.HandlerConfig{})
	r := do(t, "POST", offline.URL+"/v1/query", `{"question": "Who designed Go?", "mode": "logic"}`, "Content-Type", "application/json")
	if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), "--llm") {
		t.Fatalf("logic without a model: %d %s", r.Status, r.Body)
	}

	srv := integrateServer(t, goPlan, "YES", "Go [1].", "", 0, false)
	api := startAPI(t, testEngine(t, db, "--llm", "openai:test-model", "--llm-cache", "off"), server.HandlerConfig{})
	r = do(t, "POST", api.URL+"/v1/query", `{"question": "`+goQuestion+`", "mode": "logic"}`, "Content-Type", "application/json")
	if r.Status != http.StatusOK {
		t.Fatalf("logic: %d %s", r.Status, r.Body)
	}
	got := decode[map[string]any](t, r.Body)
	if got["mode"] != "logic" || got["answered_by"] != "logic" || got["answer"] != "Go [1]." || got["logic"] == nil || got["precheck"] == nil {
		t.Errorf("logic reply: mode %v, answered_by %v, answer %q, logic %v, precheck %v", got["mode"], got["answered_by"], got["answer"], got["logic"] != nil, got["precheck"] != nil)
	}
	if srv.Count() != 3 {
		t.Errorf("%d model requests, want 3 (plan, pre-check, answer)", srv.Count())
	}
}

// trickle opens a connection to addr that announces a query body and sends
// it one byte every interval, never the last byte, until the test ends: a
// client that would hold whatever it is given for as long as it may.
func trickle(t *testing.T, addr, header string, interval time.Duration) {
	t.Helper()
	body := `{"question": "Who designed Go?"}`
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fmt.Fprintf(c, "POST /v1/query HTTP/1.1\r\nHost: localhost\r\n%sContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", header, len(body)); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for i := 0; i < len(body)-1; i++ {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			if _, err := c.Write([]byte{body[i]}); err != nil {
				return
			}
		}
		<-stop
	}()
	// Registered after the server's cleanup, so it runs first: a handler
	// still reading this body ends when the connection does.
	t.Cleanup(func() { close(stop); <-done; c.Close() })
}

// TestServeSlowBodiesDoNotStarve: clients that announce a body and send it
// a byte at a time hold no concurrency slot. With 2 slots and 8 such
// clients in the handler, /v1/stats counts only itself in flight and a
// query answers well within 5 s (it takes milliseconds; the bound is for a
// loaded machine).
func TestServeSlowBodiesDoNotStarve(t *testing.T) {
	h := server.NewHandler(testEngine(t, corpusStore(t)), server.HandlerConfig{Timeout: 30 * time.Second, MaxConcurrent: 2})
	var arrived atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			arrived.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	const slow = 8
	for range slow {
		trickle(t, srv.Listener.Addr().String(), "", 200*time.Millisecond)
	}
	for deadline := time.Now().Add(30 * time.Second); arrived.Load() < slow; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d slow requests reached the handler", arrived.Load(), slow)
		}
	}

	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get(srv.URL + "/v1/stats")
	if err != nil {
		t.Fatalf("stats while %d clients trickle their bodies: %v", slow, err)
	}
	stats := decode[struct {
		InFlight int `json:"in_flight"`
	}](t, readAll(t, resp))
	if stats.InFlight != 1 {
		t.Errorf("while %d clients trickle their bodies, %d slots are in use; want 1 (the stats request)", slow, stats.InFlight)
	}
	resp, err = client.Post(srv.URL+"/v1/query", "application/json", strings.NewReader(`{"question": "Who designed Go?", "top_k": 1}`))
	if err != nil {
		t.Fatalf("query while %d clients trickle their bodies: %v", slow, err)
	}
	if b := readAll(t, resp); resp.StatusCode != 200 || len(passagesOf(t, b)) < 10 {
		t.Errorf("query while clients trickle: %d %s", resp.StatusCode, b)
	}
	if n := arrived.Load(); n != slow+1 {
		t.Errorf("%d POSTs reached the handler, want %d", n, slow+1)
	}
}

func readAll(t *testing.T, resp *http.Response) []byte {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestServeCutsSlowBodies: a body that does not arrive within the read
// timeout ends its request with a 408, logged as such, and the server goes on.
func TestServeCutsSlowBodies(t *testing.T) {
	f := testFlags(t, corpusStore(t))
	f.conn = server.ConnTimeouts{ReadHeader: time.Second, Read: time.Second, Idle: time.Second}
	opts := &serveOptions{serverFlags: *f, Addr: "127.0.0.1:0", MaxConcurrent: 1, AccessLog: true}
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan string, 1)
	done := make(chan error, 1)
	var logs bytes.Buffer
	logw := &syncWriter{w: &logs}
	go func() { done <- runServe(ctx, opts, streams{Out: io.Discard, Err: logw}, func(a string) { addr <- a }) }()
	base := <-addr
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()

	c, err := net.Dial("tcp", base)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST /v1/query HTTP/1.1\r\nHost: localhost\r\nContent-Length: 40\r\n\r\n{\"question\"")
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("slow body: no response: %v", err)
	}
	b := readAll(t, resp)
	if e := decode[server.APIError](t, b); resp.StatusCode != http.StatusRequestTimeout || e.Code != server.CodeTimeout {
		t.Errorf("slow body: %d %s", resp.StatusCode, b)
	}
	if r := do(t, "POST", "http://"+base+"/v1/query", `{"question": "Who designed Go?", "top_k": 1}`); r.Status != 200 {
		t.Errorf("after a slow body: %d %s", r.Status, r.Body)
	}
	logw.mu.Lock()
	defer logw.mu.Unlock()
	if !strings.Contains(logs.String(), "POST /v1/query 408") {
		t.Errorf("log:\n%s", logs.String())
	}
}

// TestServeAccessLogEscapes: what a client puts in a request line reaches
// the log escaped: one line per request, no control characters, so a
// request cannot forge another line or drive the operator's terminal.
func TestServeAccessLogEscapes(t *testing.T) {
	e := testEngine(t, corpusStore(t))
	const forged = "/v1/chunks/x%0aquery%20serve:%20...%20GET%20/v1/admin%20200%201ms%0a%1b%5b2J%00%e2%80%ae%ff"
	for _, token := range []string{"", "a-token-of-enough-length"} {
		var logs bytes.Buffer
		logw := &syncWriter{w: &logs}
		srv := startAPI(t, e, server.HandlerConfig{Token: token, AccessLog: true, Logf: logw.logf})
		c, err := net.Dial("tcp", srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: localhost\r\nUser-Agent: agent\xe2\x80\xae\xff\r\nConnection: close\r\n\r\n", forged)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		readAll(t, resp)
		c.Close()
		if want := map[bool]int{true: 404, false: 401}[token == ""]; resp.StatusCode != want {
			t.Errorf("token %v: %d, want %d", token != "", resp.StatusCode, want)
		}
		logw.mu.Lock()
		log := logs.String()
		logw.mu.Unlock()
		if strings.Count(log, "\n") != 1 || !strings.HasSuffix(log, "\n") {
			t.Errorf("token %v: want one log line, got %q", token != "", log)
		}
		for i, r := range strings.TrimSuffix(log, "\n") {
			if r < 0x20 || r == 0x7f || r == 0x202e || r == utf8.RuneError {
				t.Errorf("token %v: log has %U at byte %d: %q", token != "", r, i, log)
			}
		}
		if !strings.HasPrefix(log, "GET /v1/chunks/x") || !strings.Contains(log, fmt.Sprint(" ", resp.StatusCode, " ")) {
			t.Errorf("token %v: log line %q", token != "", log)
		}
	}
}

// TestServeDocumentsHugeOffset: an offset near the integer limit is an
// empty last page, not a page whose next offset wrapped around.
func TestServeDocumentsHugeOffset(t *testing.T) {
	srv := startAPI(t, testEngine(t, corpusStore(t)), server.HandlerConfig{})
	for _, off := range []string{"9223372036854775807", "9223372036854775806", "9223372036854775000"} {
		for _, limit := range []string{"", "&limit=500"} {
			r := do(t, "GET", srv.URL+"/v1/documents?offset="+off+limit, "")
			p := decode[server.DocPage](t, r.Body)
			if r.Status != 200 || len(p.Documents) != 0 || p.NextOffset != nil || p.Total != 10 {
				t.Errorf("offset %s%s: %d %s", off, limit, r.Status, r.Body)
			}
		}
	}
	r := do(t, "GET", srv.URL+"/v1/documents?offset=9223372036854775808", "")
	if e := decode[server.APIError](t, r.Body); r.Status != 400 || e.Code != server.CodeInvalidParam || !strings.Contains(e.Message, "offset") {
		t.Errorf("offset past int64: %d %s", r.Status, r.Body)
	}
	// The last full page has no next offset, the one before has.
	for off, next := range map[int]bool{0: true, 5: true, 6: false, 10: false} {
		p := decode[server.DocPage](t, do(t, "GET", fmt.Sprintf("%s/v1/documents?offset=%d&limit=4", srv.URL, off), "").Body)
		if (p.NextOffset != nil) != next || (next && *p.NextOffset != off+4) {
			t.Errorf("offset %d limit 4 of 10: next %v", off, p.NextOffset)
		}
	}
}

// TestServeSecurityHeaders: every response, error or not, says nosniff.
func TestServeSecurityHeaders(t *testing.T) {
	db := corpusStore(t)
	open := startAPI(t, testEngine(t, db), server.HandlerConfig{})
	guarded := startAPI(t, testEngine(t, db), server.HandlerConfig{Token: "a-token-of-enough-length"})
	for _, c := range []struct {
		url, method, body string
		header            []string
	}{
		{open.URL + "/v1/query", "POST", `{"question": "Go"}`, nil},
		{open.URL + "/v1/query", "POST", `{"question": "Go", "stream": true}`, nil},
		{open.URL + "/v1/query", "POST", `{"question": ""}`, nil},
		{open.URL + "/v1/query", "POST", strings.Repeat("x", 100<<10), nil},
		{open.URL + "/v1/query", "GET", "", nil},
		{open.URL + "/v1/openapi.json", "GET", "", nil},
		{open.URL + "/healthz", "HEAD", "", nil},
		{open.URL + "/nowhere", "GET", "", nil},
		{open.URL + "/v1/stats", "GET", "", []string{"Host", "attacker.example"}},
		{guarded.URL + "/v1/stats", "GET", "", nil},
	} {
		r := do(t, c.method, c.url, c.body, c.header...)
		if got := r.Header.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("%s %s: %d, X-Content-Type-Options %q", c.method, c.url, r.Status, got)
		}
	}
}

// TestServerConfigDefaults: serve's flags, none given, are the server
// package's defaults, so that a program using the library gets what
// query serve does.
func TestServerConfigDefaults(t *testing.T) {
	got, err := testFlags(t, "sqlite://unused.db").config()
	if err != nil {
		t.Fatal(err)
	}
	if want := server.DefaultConfig(); !reflect.DeepEqual(got, want) {
		t.Errorf("serve's defaults\n %+v\nserver.DefaultConfig\n %+v", got, want)
	}
}
