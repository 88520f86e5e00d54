package main

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docgraph/docgraph/cmd/internal/cli"
	"github.com/docgraph/docgraph/internal/clitest"
	"github.com/docgraph/docgraph/llm/llmtest"
	"github.com/docgraph/docgraph/retrieve"
)

// TestQueryChild is not a test: it is the query command when run as a
// child of the process tests.
func TestQueryChild(t *testing.T) { clitest.Child(t, "query", main) }

// TestQueryUserErrors: every mistake at the command line or in the
// configuration gets a message naming it (with the usage hint when it was
// typed) and a non-zero exit status, and creates nothing.
func TestQueryUserErrors(t *testing.T) {
	db := "sqlite://" + filepath.Join(t.TempDir(), "g.db")
	ingestCorpus(t, db)
	dir := t.TempDir()
	t.Chdir(dir)
	missing := filepath.Join(dir, "no", "such", "dir", "g.db")
	const hint = "Run 'query --help' for usage."
	tests := []clitest.UserError{
		{Name: "no question", Args: []string{"--store", db}, Want: []string{`query: no question given: query [flags] "question"`, hint}},
		{Name: "unquoted question", Args: []string{"--store", db, "who", "designed", "Go"}, Want: []string{"query: 3 arguments given, want one question", hint}},
		{Name: "empty question", Args: []string{"--store", db, "   "}, Want: []string{"query: empty question", hint}},
		{Name: "unknown flag", Args: []string{"--bogus", "x"}, Want: []string{"query: unknown flag: --bogus", hint}},
		{Name: "bad value", Args: []string{"--top-k", "abc", "x"}, Want: []string{`query: --top-k "abc": want a whole number`, hint}},
		{Name: "top-k 0", Args: []string{"--store", db, "--top-k", "0", "x"}, Want: []string{"query: --top-k 0: must be between 1 and 10000", hint}},
		{Name: "top-k -1", Args: []string{"--store", db, "--top-k", "-1", "x"}, Want: []string{"--top-k -1: must be between 1 and 10000"}},
		{Name: "top-k huge", Args: []string{"--store", db, "--top-k", "1000000000", "x"}, Want: []string{"--top-k 1000000000: must be between 1 and 10000"}},
		{Name: "damping 1", Args: []string{"--store", db, "--damping", "1", "x"}, Want: []string{"--damping 1: must be between 0.01 and 0.99"}},
		{Name: "max context 0", Args: []string{"--store", db, "--max-context-tokens", "0", "x"}, Want: []string{"--max-context-tokens 0: must be between 256"}},
		{Name: "llm retries -1", Args: []string{"--store", db, "--llm-retries", "-1", "x"}, Want: []string{"--llm-retries -1: must be between 0 and 100"}},
		{Name: "timeout -1s", Args: []string{"--store", db, "--timeout", "-1s", "x"}, Want: []string{"--timeout -1s: must be between 0s and 24h"}},
		{Name: "unknown mode", Args: []string{"--store", db, "--mode", "nonsense", "x"},
			Want: []string{`--mode "nonsense": unknown mode (available: mix, naive, local, global, hybrid, logic, path)`, hint}},
		{Name: "unknown embedder", Args: []string{"--store", db, "--embedder", "word2vec", "x"}, Want: []string{"--embedder word2vec"}, NoHint: true},
		{Name: "embedder mismatch", Args: []string{"--store", db, "--embedder", "hash:64", "x"},
			Want: []string{"holds vectors of embedder hash-v2 (dimension 384), not hash-v2 (dimension 64): run with --embedder hash:384"}, NoHint: true},
		{Name: "unknown model", Args: []string{"--store", db, "--llm", "gpt-4o", "x"}, Want: []string{"--llm gpt-4o: llm spec"}, NoHint: true},
		{Name: "no store", Args: []string{"--store", "sqlite://" + missing, "x"},
			Want: []string{"query: no store at " + missing + ": nothing has been ingested there (make one with: ingest --store sqlite://" + missing + " PATH...)"}, NoHint: true},
		{Name: "no default store", Args: []string{"x"}, Want: []string{"query: no store at " + filepath.Join(dir, ".docgraph", "graph.db") + ": nothing has been ingested there (make one with: ingest PATH...)"}, NoHint: true},
		{Name: "unknown config key", Args: []string{"--store", db, "x"}, Config: "top-kk: 3\n",
			Want: []string{`config docgraph.yaml: unknown key "top-kk" (did you mean "top-k"?)`}, NoHint: true},
		{Name: "range from the environment", Args: []string{"--store", db, "x"}, Env: map[string]string{"DOCGRAPH_TOP_K": "0"},
			Want: []string{"--top-k 0 (from DOCGRAPH_TOP_K): must be between 1 and 10000"}, NoHint: true},
		{Name: "path mode: two specs", Args: []string{"--store", db, "--mode", "path", "--paths", "lego:0", "--paths", "lego:1", "x"},
			Want: []string{"--paths: give one spec to a query", hint}},
		{Name: "eval: unknown flag", Args: []string{"eval", "--bogus"}, Want: []string{"query eval: unknown flag: --bogus", "Run 'query eval --help' for usage."}},
		{Name: "eval: argument", Args: []string{"eval", "x"}, Want: []string{"query eval: eval takes no arguments", "Run 'query eval --help' for usage."}},
		{Name: "eval: no dataset", Args: []string{"eval"}, Want: []string{"query eval: no benchmark given", "Run 'query eval --help' for usage."}},
		{Name: "eval: unknown mode", Args: []string{"eval", "--dataset", dir, "--mode", "path"}, Want: []string{`query eval: --mode "path": unknown mode for eval --dataset`}},
		{Name: "eval: questions -1", Args: []string{"eval", "--dataset", dir, "--questions", "-1"}, Want: []string{"query eval: --questions -1: must be between 0"}},
	}
	clitest.CheckUserErrors(t, dir, tests, []string{filepath.Join(dir, "no"), filepath.Join(dir, ".docgraph")},
		func(t *testing.T, args ...string) (string, string, int) {
			out, errs, err := run(t, args...)
			return out, errs, cli.ExitCode(err)
		})
}

// TestEveryFlagIsAConfigKey: docgraph.yaml accepts every flag of query
// and query eval.
func TestEveryFlagIsAConfigKey(t *testing.T) {
	clitest.CheckConfigKeys(t, newRootCmd(streams{}))
}

// answerServer is a fake model server that answers keyword requests well
// and the answer request with reply.
func answerServer(t *testing.T, reply llmtest.Reply) *llmtest.Server {
	t.Helper()
	srv := llmtest.NewServer(func(r llmtest.Request) llmtest.Reply {
		if strings.Contains(r.Last(), "high_level_keywords") {
			return llmtest.Reply{Content: `{"high_level_keywords": ["code breaking"], "low_level_keywords": ["Enigma"]}`}
		}
		return reply
	})
	t.Cleanup(srv.Close)
	t.Setenv("OPENAI_BASE_URL", srv.OpenAIBaseURL())
	t.Setenv("OPENAI_API_KEY", "sk-test-not-a-real-key-0123")
	return srv
}

// TestQueryBrokenAnswers: a model answer that is garbage, empty, cut off,
// or never comes makes query fail with a message saying so, in text and
// JSON mode, never print it as if it were the answer and exit 0.
func TestQueryBrokenAnswers(t *testing.T) {
	db := "sqlite://" + filepath.Join(t.TempDir(), "g.db")
	ingestCorpus(t, db)
	const answer = "Alan Turing led the work on Enigma at Bletchley Park [1]."
	closed := func() string { // a port nothing listens on
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		return "http://" + ln.Addr().String() + "/v1"
	}()
	tests := []struct {
		name  string
		reply llmtest.Reply
		base  string // OPENAI_BASE_URL instead of the fake server
		flags []string
		want  []string
		// wantJSON replaces want in --json mode, where the answer is not
		// streamed.
		wantJSON []string
	}{
		{name: "garbage", reply: llmtest.Reply{Raw: "<html><body>502 Bad Gateway</body></html>"},
			want:     []string{"nothing readable as an OpenAI chat completion stream"},
			wantJSON: []string{"unusable response: the answer from http://127.0.0.1:", "/v1/chat/completions could not be read: invalid character '<'"}},
		{name: "empty", reply: llmtest.Reply{Content: " "}, want: []string{"no usable answer: the model returned an empty answer"}},
		{name: "cut off", reply: llmtest.Reply{Content: answer, Cut: 3},
			want:     []string{"the answer stream ended after 24 bytes, before the model finished", "cut off"},
			wantJSON: []string{"unusable response", "could not be read: unexpected EOF"}},
		{name: "dropped", reply: llmtest.Reply{Content: answer, Cut: 3, Abort: true},
			want:     []string{"answer stream broke after it began"},
			wantJSON: []string{"unusable response", "could not be read: unexpected EOF"}},
		{name: "hung server", reply: llmtest.Reply{Delay: time.Hour}, flags: []string{"--llm-timeout", "300ms", "--llm-retries", "0"},
			want: []string{"timeout: no complete answer from http://127.0.0.1:", "/v1/chat/completions within 300ms"}},
		{name: "hung server, overall deadline", reply: llmtest.Reply{Delay: time.Hour}, flags: []string{"--llm-timeout", "0", "--deadline", "3s"},
			want: []string{"query: deadline of 3s reached while waiting for the answer from openai:test-model (after 1 attempt; raise --deadline"}},
		{name: "closed port", base: closed, flags: []string{"--llm-retries", "1"},
			want: []string{"network error: cannot reach " + closed + "/chat/completions: connection refused"}},
	}
	for _, tt := range tests {
		for _, asJSON := range []bool{false, true} {
			name := tt.name
			if asJSON {
				name += "/json"
			}
			t.Run(name, func(t *testing.T) {
				answerServer(t, tt.reply)
				if tt.base != "" {
					t.Setenv("OPENAI_BASE_URL", tt.base)
				}
				args := append([]string{"--store", db, "--config", "", "--llm", "openai:test-model", "--llm-cache", "off"}, tt.flags...)
				if asJSON {
					args = append(args, "--json")
				}
				out, errs, err := run(t, append(args, "Who broke Enigma messages at Bletchley Park?")...)
				if code := cli.ExitCode(err); code != 1 {
					t.Fatalf("exit status %d, want 1\nstdout:\n%s\nstderr:\n%s", code, out, errs)
				}
				want := tt.want
				if asJSON && tt.wantJSON != nil {
					want = tt.wantJSON
				}
				for _, w := range want {
					if !strings.Contains(errs, w) {
						t.Errorf("stderr lacks %q:\n%s", w, errs)
					}
				}
				if strings.Contains(errs, "sk-test-not-a-real-key") {
					t.Errorf("the key leaked:\n%s", errs)
				}
				if asJSON && out != "" {
					t.Errorf("--json printed a document for a failed answer:\n%s", out)
				}
				if strings.Contains(out, "Sources:") {
					t.Errorf("a broken answer was presented with its sources:\n%s", out)
				}
			})
		}
	}
}

// TestQueryExitStatus runs the real command: a mistake exits 1 with the
// message and usage hint; Ctrl-C while the model is thinking exits 130.
func TestQueryExitStatus(t *testing.T) {
	db := "sqlite://" + filepath.Join(t.TempDir(), "g.db")
	ingestCorpus(t, db)
	r := clitest.Run(t, clitest.Command(t, "TestQueryChild", "--bogus", "x"))
	if r.Code != 1 || r.Stderr != "query: unknown flag: --bogus\nRun 'query --help' for usage.\n" {
		t.Errorf("unknown flag: exit %d, stderr %q", r.Code, r.Stderr)
	}
	r = clitest.Run(t, clitest.Command(t, "TestQueryChild", "--store", "sqlite:///no/such/dir/g.db", "x"))
	if r.Code != 1 || !strings.Contains(r.Stderr, "query: no store at /no/such/dir/g.db") {
		t.Errorf("missing store: exit %d, stderr %q", r.Code, r.Stderr)
	}
	if _, err := os.Stat("/no/such/dir"); err == nil {
		t.Error("query created the missing store's folder")
	}

	srv := answerServer(t, llmtest.Reply{Delay: time.Hour})
	cmd := clitest.Command(t, "TestQueryChild", "--store", db, "--config", "", "--llm", "openai:m", "--llm-cache", "off", "Who broke Enigma?")
	child := clitest.Start(t, cmd)
	deadline := time.Now().Add(time.Minute)
	for srv.Count() < 2 { // keywords answered, the answer request waiting
		if time.Now().After(deadline) {
			t.Fatal("the query never asked for its answer")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	r = child.Wait(t)
	if r.Code != 130 || !strings.Contains(r.Stderr, "query: interrupted (interrupt)") {
		t.Errorf("Ctrl-C: exit %d, want 130; stderr %q", r.Code, r.Stderr)
	}
}

// TestQueryJSONSameKeysEveryMode: --json has one set of keys in every
// mode, lists as [] rather than absent or null.
func TestQueryJSONSameKeysEveryMode(t *testing.T) {
	db := "sqlite://" + filepath.Join(t.TempDir(), "g.db")
	ingestCorpus(t, db)
	var first []string
	for _, mode := range modes() {
		args := []string{"--store", db, "--config", "", "--json", "--mode", mode, "--seed", "Alan Turing", "Where did Alan Turing work?"}
		if mode == retrieve.ModeLogic { // the one mode that needs a model
			integrateServer(t, goPlan, "YES", "Bletchley Park [1].", "", 0, false)
			args = append([]string{"--llm", "openai:test-model", "--llm-cache", "off"}, args...)
		}
		out, errs, err := run(t, args...)
		if err != nil {
			t.Fatalf("%s: %v\n%s", mode, err, errs)
		}
		var doc map[string]json.RawMessage
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		var keys []string
		for k, v := range doc {
			keys = append(keys, k)
			if strings.ToLower(k) != k {
				t.Errorf("%s: key %q is not snake_case", mode, k)
			}
			if string(v) == "null" && slices.Contains([]string{"sources", "passages", "entities", "relations", "facts", "paths"}, k) {
				t.Errorf("%s: %s is null, want []", mode, k)
			}
		}
		slices.Sort(keys)
		if first == nil {
			first = keys
		} else if !slices.Equal(keys, first) {
			t.Errorf("%s: keys %v, mix had %v", mode, keys, first)
		}
		if string(doc["mode"]) != `"`+mode+`"` {
			t.Errorf("mode = %s, want %s", doc["mode"], mode)
		}
	}
}
