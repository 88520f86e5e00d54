package eval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/docgraph/docgraph/embedstore"
	"github.com/docgraph/docgraph/retrieve/paths"
	"github.com/docgraph/docgraph/store"
)

// MetaQARun is a path-retrieval evaluation on MetaQA (`query eval
// --metaqa`): every spec on the questions of each hop count, over the KB
// imported into a store, and optionally PPR against igraph's.
type MetaQARun struct {
	// Dir holds kb.txt and {1,2,3}-hop/qa_dev.txt; StoreDir keeps the
	// imported store (default: a temporary folder).
	Dir, StoreDir string
	// Hops are the hop counts evaluated.
	Hops []int
	// Specs are the path retrievers measured, each with Options.
	Specs   []paths.Spec
	Options []paths.Option
	// TopK is the paths each retriever keeps, as reported.
	TopK int
	// Igraph compares docgraph's PPR with igraph's PRPACK, at Damping
	// and, for the push variant, PushEps.
	Igraph           bool
	Damping, PushEps float64
	// Log hears the progress lines.
	Log io.Writer
}

// MetaQAResult is what a MetaQARun measured.
type MetaQAResult struct {
	// Reports are by spec, then hop count.
	Reports []*MetaQAReport
	// PPR compares PPR with igraph's by hop count (with Igraph).
	PPR []*PPRReport
	// Baseline are the shared igraph baseline script's lines, by hop count.
	Baseline []string
}

// RunMetaQA imports the KB (reused from StoreDir when it already holds
// it), evaluates every spec on qs and, with Igraph, compares PPR.
func RunMetaQA(ctx context.Context, run MetaQARun, qs map[int][]MetaQAQuestion, emb embedstore.Embedder) (*MetaQAResult, error) {
	st, closeStore, err := MetaQAStore(ctx, run.Dir, run.StoreDir, emb, run.Log)
	if err != nil {
		return nil, err
	}
	defer closeStore()
	scanner := st.(store.KGScanner)
	start := time.Now()
	kg, err := paths.LoadKG(ctx, scanner)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(run.Log, "metaqa: graph of %d entities and %d relations loaded in %s\n", kg.NumEntities(), kg.NumRelations(), time.Since(start).Round(time.Millisecond))
	out := &MetaQAResult{}
	for _, spec := range run.Specs {
		r, err := paths.New(kg, spec, run.Options...)
		if err != nil {
			return nil, err
		}
		for _, h := range run.Hops {
			rep, err := EvaluateMetaQA(ctx, r, qs[h])
			if err != nil {
				return nil, err
			}
			rep.TopK = run.TopK
			fmt.Fprintf(run.Log, "metaqa %s %d-hop: hit %.1f recall %.1f hits@1 %.1f p50 %s\n", rep.Spec, h, rep.Hit, rep.Recall, rep.Hits1, rep.P50.Round(100*time.Microsecond))
			out.Reports = append(out.Reports, rep)
		}
	}
	if run.Igraph {
		if out.PPR, out.Baseline, err = run.comparePPR(ctx, qs); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// comparePPR runs igraph (the shared baseline script, then the same PPR
// returning its top nodes) and docgraph's exact and push PPR on the same
// graph and questions, one after the other in this process's session.
func (run MetaQARun) comparePPR(ctx context.Context, qs map[int][]MetaQAQuestion) ([]*PPRReport, []string, error) {
	python := FindIgraphPython()
	if python == "" {
		return nil, nil, errors.New("--baseline igraph needs python3 with python-igraph (apt-get install python3-igraph)")
	}
	kb := filepath.Join(run.Dir, "kb.txt")
	f, err := os.Open(kb)
	if err != nil {
		return nil, nil, err
	}
	kg, err := paths.ReadTriples(f, paths.WithExactNames())
	f.Close()
	if err != nil {
		return nil, nil, err
	}
	d := run.Damping
	script := FindIgraphBaseline(run.Dir)
	var reports []*PPRReport
	var lines []string
	for _, h := range run.Hops {
		qa := filepath.Join(run.Dir, fmt.Sprintf("%d-hop", h), "qa_dev.txt")
		n := len(qs[h])
		if script != "" && d == 0.8 {
			line, err := RunIgraphBaseline(ctx, python, script, kb, qa, n, 100)
			if err != nil {
				return nil, nil, err
			}
			lines = append(lines, fmt.Sprintf("%d-hop: %s", h, line))
		}
		tops, err := RunIgraphTop(ctx, python, kb, qa, n, 100, d)
		if err != nil {
			return nil, nil, err
		}
		rep, err := ComparePPR(kg, qs[h], tops, 100, d, 1e-10, run.PushEps)
		if err != nil {
			return nil, nil, err
		}
		fmt.Fprintf(run.Log, "ppr %d-hop: igraph %.1f ms, exact %.1f ms, push %.2f ms; top-100 overlap exact %.3f push %.3f\n",
			h, rep.IgraphMS, rep.ExactMS, rep.PushMS, rep.Overlap, rep.PushOverlap)
		reports = append(reports, rep)
	}
	return reports, lines, nil
}

// DefaultMetaQAQuestions is how many questions of each hop count a MetaQA
// evaluation takes unless told.
const DefaultMetaQAQuestions = 200

// MarshalJSON writes the result as `query eval --metaqa --json` prints
// it: the reports under "metaqa", the PPR comparison under "ppr" and the
// baseline script's lines under "igraph_baseline".
func (r *MetaQAResult) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]any{"metaqa": r.Reports, "ppr": r.PPR, "igraph_baseline": r.Baseline})
}

// WriteText prints the result for people: the table of the specs on the
// first questions questions of each hop count, keeping topK paths, then
// the PPR comparison when there is one.
func (r *MetaQAResult) WriteText(w io.Writer, questions, topK int) error {
	fmt.Fprintf(w, "MetaQA dev, first %d questions per hop count, top-%d paths\n", questions, topK)
	if err := WriteMetaQATable(w, r.Reports); err != nil {
		return err
	}
	if len(r.PPR) > 0 {
		fmt.Fprintf(w, "\nPersonalized PageRank vs igraph PRPACK (damping %.2f, top-100, push eps %g):\n", r.PPR[0].Damping, r.PPR[0].PushEps)
		WritePPRTable(w, r.PPR)
		for _, b := range r.Baseline {
			fmt.Fprintln(w, "baseline script:", b)
		}
	}
	return nil
}
