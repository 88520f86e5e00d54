package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docgraph/docgraph/embedstore"
	"github.com/docgraph/docgraph/llm/llmtest"
	"github.com/docgraph/docgraph/pipeline"
)

const pathKB = `Kismet|directed_by|William Dieterle
Kismet|starred_actors|Marlene Dietrich
Morocco|directed_by|Josef von Sternberg
Morocco|starred_actors|Marlene Dietrich
Juarez|directed_by|William Dieterle
Juarez|starred_actors|Bette Davis
`

// kgStore imports pathKB into a fresh store and returns its URL and the KB path.
func kgStore(t *testing.T) (string, string) {
	t.Helper()
	dir := t.TempDir()
	t.Chdir(dir)
	kb := filepath.Join(dir, "kb.txt")
	os.WriteFile(kb, []byte(pathKB), 0o644)
	db := "sqlite://" + filepath.Join(dir, "g.db")
	emb := embedstore.NewHash()
	st, err := pipeline.OpenStore(context.Background(), pipeline.Settings{Store: db}, emb, pipeline.NewMerger(emb))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if r := (&pipeline.Pipeline{Store: st, Embedder: emb}).ImportTriples(context.Background(), kb); r.Outcome != pipeline.Added {
		t.Fatalf("import: %+v", r)
	}
	return db, kb
}

func TestQueryPathMode(t *testing.T) {
	db, _ := kgStore(t)
	q := "who directed the movies [Marlene Dietrich] acted in"
	out, logs, err := run(t, "--store", db, "--mode", "path", q)
	if err != nil {
		t.Fatalf("%v\n%s", err, logs)
	}
	for _, want := range []string{
		"seeds: Marlene Dietrich",
		"se=ppr,pf=beam:bm25:dynamic:triple,pr=bm25: 7 entities in the subgraph",
		"Marlene Dietrich <-[starred_actors]- Kismet -[directed_by]-> William Dieterle\n    from: kb.txt chunk 0",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	out, _, err = run(t, "--store", db, "--mode", "path", "--json", "--paths", "pf=beam:emb", "--top-k", "2", q)
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Mode     string
		Paths    []struct{ Text string }
		Passages []struct {
			DocPath string `json:"doc_path"`
			Text    string
		}
		PathSearch struct{ Spec string } `json:"path_search"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	if res.Mode != "path" || res.PathSearch.Spec != "se=ppr,pf=beam:emb,pr=emb" || len(res.Paths) != 2 ||
		len(res.Passages) != 1 || !strings.HasSuffix(res.Passages[0].DocPath, "kb.txt") || res.Passages[0].Text == "" {
		t.Errorf("json result: %+v", res)
	}

	out, _, err = run(t, "--store", db, "--mode", "path", "--context-only", "--seed", "bette davis", "who starred with her")
	if err != nil || !strings.Contains(out, "Reasoning paths:\nBette Davis <-[starred_actors]- Juarez") {
		t.Errorf("--context-only with --seed: %v\n%s", err, out)
	}

	for args, want := range map[string]string{
		"--paths pf=dfs":              "unknown path filter",
		"--filter fi":                 "needs an LLM",
		"--restart 0.3 --damping 0.5": "same knob",
		"--seed Nobody":               "no such entity",
	} {
		_, _, err := run(t, append(append([]string{"--store", db, "--mode", "path"}, strings.Fields(args)...), q)...)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", args, err, want)
		}
	}
}

func TestQueryPathModeWithFIAndAnswer(t *testing.T) {
	db, _ := kgStore(t)
	// A server that streams, as the answer is streamed to the terminal.
	srv := llmtest.NewServer(func(r llmtest.Request) llmtest.Reply {
		if strings.Contains(r.Last(), "Numbered reasoning paths") {
			return llmtest.Reply{Content: "1"}
		}
		return llmtest.Reply{Content: "William Dieterle, Josef von Sternberg"}
	})
	defer srv.Close()
	t.Setenv("OPENAI_BASE_URL", srv.OpenAIBaseURL())
	t.Setenv("OPENAI_API_KEY", "sk-test-not-real")
	out, logs, err := run(t, "--store", db, "--mode", "path", "--llm", "openai:test", "--filter", "fi",
		"who directed the movies [Marlene Dietrich] acted in")
	if err != nil {
		t.Fatalf("%v\n%s", err, logs)
	}
	hi, add, ans := strings.Index(out, "High priority paths:\n[1]"), strings.Index(out, "Additional paths:"), strings.Index(out, "Answer:\nWilliam Dieterle, Josef von Sternberg")
	if hi < 0 || add < hi || ans < add {
		t.Errorf("output:\n%s", out)
	}
	reqs := srv.Requests()
	last := reqs[len(reqs)-1].Last()
	if !strings.Contains(last, "High priority paths:") || !strings.Contains(last, "Additional paths:") {
		t.Errorf("answer prompt:\n%s", last)
	}
}

func TestEvalMetaQA(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "kb.txt"), []byte(pathKB), 0o644)
	for h, text := range map[int]string{
		1: "what films did [Marlene Dietrich] act in\tKismet|Morocco\n",
		2: "who directed the movies [Bette Davis] acted in\tWilliam Dieterle\n",
	} {
		os.MkdirAll(filepath.Join(dir, fmt.Sprintf("%d-hop", h)), 0o755)
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("%d-hop", h), "qa_dev.txt"), []byte(text), 0o644)
	}
	t.Chdir(dir)
	out, logs, err := run(t, "eval", "--metaqa", dir, "--hops", "1,2", "--paths", "se=ppr,pf=spf", "--paths", "lego:9", "--json")
	if err != nil {
		t.Fatalf("%v\n%s", err, logs)
	}
	var got struct {
		MetaQA []struct {
			Spec   string
			Hops   int
			Recall float64
		}
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || len(got.MetaQA) != 4 {
		t.Fatalf("eval output: %v\n%s", err, out)
	}
	for _, r := range got.MetaQA {
		if r.Spec == "se=ppr,pf=spf,pr=bm25" && r.Recall != 100 {
			t.Errorf("%s %d-hop recall %v", r.Spec, r.Hops, r.Recall)
		}
	}
	if _, _, err := run(t, "eval", "--metaqa", dir, "--baseline", "bm25"); err == nil || !strings.Contains(err.Error(), "available: igraph") {
		t.Errorf("bm25 baseline with --metaqa: %v", err)
	}
}
