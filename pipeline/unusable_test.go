package pipeline_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/docgraph/docgraph/llm/llmtest"
	"github.com/docgraph/docgraph/pipeline"
	"github.com/docgraph/docgraph/store"
)

const proseAnswer = "Sure! Here are the entities you asked for. The text mentions several people and places."

// proseFor answers every request about a chunk containing marker with
// prose, and the rest as fakeModel does (records, or "<|COMPLETE|>" alone
// for a chunk naming fewer than two names).
func proseFor(marker string, calls *atomic.Int64) llmtest.Responder {
	valid := fakeModel(calls)
	return func(r llmtest.Request) llmtest.Reply {
		for _, m := range r.Messages {
			if strings.Contains(m.Content[strings.LastIndex(m.Content, "Text:")+1:], marker) {
				calls.Add(1)
				return llmtest.Reply{Content: proseAnswer}
			}
		}
		return valid(r)
	}
}

// paragraphs is a document of n paragraphs, each its own chunk at
// chunkTokens 40; those whose index is in marked carry marker.
func paragraphs(n int, marker string, marked ...int) string {
	var b strings.Builder
	b.WriteString("# Notes\n\n")
	for i := range n {
		word := "plain"
		for _, m := range marked {
			if m == i {
				word = marker
			}
		}
		fmt.Fprintf(&b, "Paragraph %d: Grace Hopper met Alan Turing at Bletchley Park and spoke about compilers, %s text, for a while.\n\n", i, word)
	}
	return b.String()
}

func unusablePipeline(t *testing.T, dir string, srv *llmtest.Server) (*pipeline.Pipeline, store.Store) {
	t.Helper()
	p, _, st := llmPipelineWith(t, dir, srv, func(s *pipeline.Settings) { s.ChunkTokens, s.Cache = 40, "off" })
	return p, st
}

// TestUnusableAnswersFailTheirDocument: a document whose chunks mostly got
// prose fails with the reason and stays retryable; one with a single prose
// chunk among four is added with a warning; the rest are untouched. Fewer
// unusable answers than the start limit (5) never stop the run.
func TestUnusableAnswersFailTheirDocument(t *testing.T) {
	var calls atomic.Int64
	srv := llmtest.NewServer(proseFor("PROSE", &calls))
	defer srv.Close()
	dir := t.TempDir()
	docs := filepath.Join(dir, "docs")
	write(t, filepath.Join(docs, "ada.md"), adaText)
	write(t, filepath.Join(docs, "babbage.md"), babbageText)
	write(t, filepath.Join(docs, "prose.md"), paragraphs(3, "PROSE", 0, 1))
	write(t, filepath.Join(docs, "mixed.md"), paragraphs(4, "PROSE", 2))
	ctx := context.Background()
	p, st := unusablePipeline(t, dir, srv)

	sum, err := p.Ingest(ctx, []string{docs}, pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Added != 3 || sum.Failed != 1 || !strings.HasSuffix(sum.Failures[0].Path, "prose.md") {
		t.Fatalf("want prose.md failed and the others added: %+v", sum)
	}
	f := sum.Failures[0]
	if !strings.Contains(f.Error, "2 of 3 chunks got unusable answers") || !strings.Contains(f.Error, "openai:test-model") ||
		!strings.Contains(f.Error, "Sure! Here are") || f.Unusable != 2 {
		t.Errorf("failure %+v: want the count, the model and the answer's start", f)
	}
	if sum.UnusableAnswers != 3 {
		t.Errorf("unusable answers %d, want 3 (two in prose.md, one in mixed.md)", sum.UnusableAnswers)
	}
	if len(sum.Warned) != 1 || !strings.HasSuffix(sum.Warned[0].Path, "mixed.md") || sum.Warned[0].Unusable != 1 {
		t.Fatalf("want one warning on mixed.md: %+v", sum.Warned)
	}
	d, err := st.DocumentByPath(ctx, filepath.Join(docs, "prose.md"))
	if err != nil || d.Status != store.StatusFailed || !strings.Contains(d.Error, "unusable answers") || d.Chunks != 0 {
		t.Fatalf("prose.md must be stored as failed with its reason, no graph: %+v %v", d, err)
	}
	mixed, err := st.DocumentByPath(ctx, filepath.Join(docs, "mixed.md"))
	if err != nil || mixed.Status != store.StatusDone || len(mixed.Warnings) != 1 || !strings.Contains(mixed.Warnings[0], "chunk 2: unusable answer from openai:test-model") {
		t.Fatalf("mixed.md must be done with its warning stored: %+v %v", mixed, err)
	}

	// Retryable: the next run asks again about prose.md and nothing else.
	before := calls.Load()
	sum, err = p.Ingest(ctx, []string{docs}, pipeline.Options{})
	if err != nil || sum.Failed != 1 || sum.Unchanged != 3 || calls.Load() == before {
		t.Fatalf("re-run: %+v %v (calls %d -> %d); want prose.md tried again", sum, err, before, calls.Load())
	}
}

// TestUsableAnswersWarnNothing: valid answers, including ones listing
// nothing but the completion delimiter, are no unusable answers.
func TestUsableAnswersWarnNothing(t *testing.T) {
	var calls atomic.Int64
	srv := llmtest.NewServer(fakeModel(&calls))
	defer srv.Close()
	dir := t.TempDir()
	docs := filepath.Join(dir, "docs")
	write(t, filepath.Join(docs, "ada.md"), adaText)
	write(t, filepath.Join(docs, "empty.txt"), "nothing named here at all.") // fakeModel: "Sure! <|COMPLETE|>"
	write(t, filepath.Join(docs, "long.md"), paragraphs(6, "plain"))
	p, _ := unusablePipeline(t, dir, srv)
	sum, err := p.Ingest(context.Background(), []string{docs}, pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Added != 3 || sum.Failed != 0 || sum.UnusableAnswers != 0 || sum.Warnings != 0 {
		t.Fatalf("valid answers: %+v; want 3 added, no unusable answers, no warnings", sum)
	}
}

// TestUnusableStartStopsTheRun: a model answering prose to everything stops
// the run after the first 5 answers with one error, having sent a bounded
// number of requests, not one per chunk.
func TestUnusableStartStopsTheRun(t *testing.T) {
	var calls atomic.Int64
	srv := llmtest.NewServer(proseFor("", &calls))
	defer srv.Close()
	dir := t.TempDir()
	docs := filepath.Join(dir, "docs")
	const files, chunksEach = 10, 6
	for i := range files {
		write(t, filepath.Join(docs, fmt.Sprintf("doc%02d.md", i)), paragraphs(chunksEach, fmt.Sprint("doc", i)))
	}
	p, _ := unusablePipeline(t, dir, srv)
	sum, err := p.Ingest(context.Background(), []string{docs}, pipeline.Options{})
	if err == nil || !strings.Contains(err.Error(), "not in the extraction format") || !strings.Contains(err.Error(), "openai:test-model") ||
		!strings.Contains(err.Error(), "Sure! Here are") {
		t.Fatalf("error %v; want the run stopped naming the model and quoting an answer", err)
	}
	// 5 answers, plus at most the calls already in flight (llm concurrency 4).
	if n := srv.Count(); n > 5+4 {
		t.Errorf("the server saw %d requests for %d chunks; want at most 9", n, files*chunksEach)
	}
	if sum == nil || sum.Added != 0 {
		t.Errorf("summary %+v: nothing may be added", sum)
	}
}
