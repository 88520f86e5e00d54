// Package eval measures retrieval and answers on passage-retrieval benchmarks
// (corpus.jsonl + questions.jsonl): Recall@k as HippoRAG defines it, latency, EM and F1.
package eval

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/docgraph/docgraph/loader"
	"github.com/docgraph/docgraph/store"
)

// Passage is one line of corpus.jsonl.
type Passage struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	Text  string `json:"text"`
}

// Question is one line of questions.jsonl; GoldIDs are the passages that
// hold its supporting facts.
type Question struct {
	ID       string   `json:"id"`
	Question string   `json:"question"`
	Answers  []string `json:"answers"`
	GoldIDs  []string `json:"gold_ids"`
	Type     string   `json:"type"`
}

// Dataset is a corpus and its questions.
type Dataset struct {
	Name      string // the directory's base name
	Dir       string
	Passages  []Passage
	Questions []Question
}

// Load reads DIR/corpus.jsonl and DIR/questions.jsonl.
func Load(dir string) (*Dataset, error) {
	ds := &Dataset{Name: filepath.Base(filepath.Clean(dir)), Dir: dir}
	if err := readJSONL(filepath.Join(dir, "corpus.jsonl"), &ds.Passages); err != nil {
		return nil, err
	}
	if err := readJSONL(filepath.Join(dir, "questions.jsonl"), &ds.Questions); err != nil {
		return nil, err
	}
	if len(ds.Passages) == 0 || len(ds.Questions) == 0 {
		return nil, fmt.Errorf("dataset %s: %d passages and %d questions; want both", dir, len(ds.Passages), len(ds.Questions))
	}
	seen := make(map[string]bool, len(ds.Passages))
	for i, p := range ds.Passages {
		if p.ID == "" {
			return nil, fmt.Errorf("dataset %s: corpus.jsonl line %d: passage without id", dir, i+1)
		}
		if seen[p.ID] {
			return nil, fmt.Errorf("dataset %s: corpus.jsonl line %d: duplicate passage id %q", dir, i+1, p.ID)
		}
		seen[p.ID] = true
	}
	for i, q := range ds.Questions {
		if len(q.GoldIDs) == 0 {
			return nil, fmt.Errorf("dataset %s: questions.jsonl line %d: question %q has no gold_ids", dir, i+1, q.ID)
		}
		for _, g := range q.GoldIDs {
			if !seen[g] {
				return nil, fmt.Errorf("dataset %s: questions.jsonl line %d: gold id %q is not in the corpus", dir, i+1, g)
			}
		}
	}
	return ds, nil
}

func readJSONL[T any](path string, out *[]T) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for line := 1; sc.Scan(); line++ {
		b := sc.Bytes()
		if len(b) == 0 {
			continue
		}
		var v T
		if err := json.Unmarshal(b, &v); err != nil {
			return fmt.Errorf("dataset %s line %d: %w", path, line, err)
		}
		*out = append(*out, v)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("dataset %s: %w", path, err)
	}
	return nil
}

// Builder turns a loaded document into the write that stores it; the
// ingest pipeline (pipeline.Pipeline) is one.
type Builder interface {
	Build(ctx context.Context, doc *loader.Document) (*store.DocumentWrite, int, error)
}

// Index maps the store's documents back to passage ids. Passages with the
// same title and text become one document, which stands for all of them.
type Index struct {
	byDoc map[string][]string
}

// Passages returns the passage ids a document stands for.
func (x *Index) Passages(docID string) []string { return x.byDoc[docID] }

// Documents is how many documents the corpus became.
func (x *Index) Documents() int { return len(x.byDoc) }

// PassagePath is the path a passage's document is stored under.
func PassagePath(ds *Dataset, p Passage) string {
	return filepath.Join(ds.Dir, "corpus.jsonl") + "#" + p.ID
}

// Documents turns every passage into the document that stores it and
// indexes which passages each document stands for; it reads no store, so
// a store ingested earlier can be evaluated again.
func Documents(ds *Dataset) ([]*loader.Document, *Index) {
	x := &Index{byDoc: make(map[string][]string, len(ds.Passages))}
	docs := make([]*loader.Document, len(ds.Passages))
	for i, p := range ds.Passages {
		docs[i] = loader.NewDocument(PassagePath(ds, p), "txt", p.Title, p.Title+"\n"+p.Text)
		x.byDoc[docs[i].ID] = append(x.byDoc[docs[i].ID], p.ID)
	}
	return docs, x
}

// Ingest stores every passage as one document titled by the passage title,
// its text the title and the passage text, building up to concurrency
// documents at once; one writer groups the built documents into
// transactions (store.Batcher). progress, when not nil, hears the count
// done so far.
func Ingest(ctx context.Context, ds *Dataset, b Builder, w store.Writer, concurrency int, progress func(done, total int)) (*Index, error) {
	if concurrency <= 0 {
		concurrency = 4
	}
	docs, x := Documents(ds)
	// Not errgroup's context: it ends when Wait returns, while the writer
	// still holds documents.
	runCtx, fail := context.WithCancelCause(ctx)
	defer fail(nil)
	writer := store.NewBatcher(w, store.BatchOptions{})
	var mu sync.Mutex
	written := map[string]bool{}
	var done atomic.Int64
	tick := func() {
		if n := done.Add(1); progress != nil {
			progress(int(n), len(docs))
		}
	}
	var g errgroup.Group
	g.SetLimit(concurrency)
	for _, doc := range docs {
		g.Go(func() error {
			if runCtx.Err() != nil {
				return nil
			}
			mu.Lock()
			dup := written[doc.ID]
			written[doc.ID] = true
			mu.Unlock()
			if dup {
				tick()
				return nil
			}
			dw, _, err := b.Build(runCtx, doc)
			if err == nil {
				err = writer.Submit(runCtx, dw, func(err error) {
					if err != nil {
						fail(fmt.Errorf("ingest %s: %w", doc.Path, err))
						return
					}
					tick()
				})
			}
			if err != nil {
				fail(fmt.Errorf("ingest %s: %w", doc.Path, err))
			}
			return nil
		})
	}
	g.Wait()
	writer.Close()
	if err := context.Cause(runCtx); err != nil {
		return nil, err
	}
	return x, nil
}

// ErrNoData is returned by FindData when the shared benchmark data is absent.
var ErrNoData = errors.New("shared benchmark data not found")

// FindData walks up from dir to the repository root (the folder holding
// go.mod) and returns ../shared/data beside it.
func FindData(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := abs; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			data := filepath.Join(filepath.Dir(d), "shared", "data")
			if st, err := os.Stat(data); err == nil && st.IsDir() {
				return data, nil
			}
			return "", ErrNoData
		}
		if filepath.Dir(d) == d {
			return "", ErrNoData
		}
	}
}
