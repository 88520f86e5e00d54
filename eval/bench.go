package eval

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tmc/langchaingo/llms"

	"github.com/docgraph/docgraph/embedstore"
	"github.com/docgraph/docgraph/pipeline"
	"github.com/docgraph/docgraph/retrieve"
	"github.com/docgraph/docgraph/retrieve/paths"
	"github.com/docgraph/docgraph/splitter"
	"github.com/docgraph/docgraph/store"
)

// What `query eval` runs: a benchmark's store (ingested once, reused
// when kept), its questions through each retrieval mode, the baselines
// beside them and, with a model, the answers.

// ShortAnswer makes the model's answer comparable with the gold answers.
const ShortAnswer = "only the answer itself: a name, date, number or yes/no, with no sentence around it"

// WorkDir is the folder eval stores go in: dir when given (kept and
// reused), else a temporary folder that done removes.
func WorkDir(dir, prefix string) (path string, done func(), err error) {
	if dir != "" {
		return dir, func() {}, nil
	}
	tmp, err := os.MkdirTemp("", prefix)
	if err != nil {
		return "", nil, err
	}
	return tmp, func() { os.RemoveAll(tmp) }, nil
}

// DatasetStore opens the dataset's SQLite store at path, ingesting the
// corpus (concurrency passages at once) unless the store already holds
// exactly its documents. Progress lines go to log.
func DatasetStore(ctx context.Context, ds *Dataset, path string, e embedstore.Embedder, concurrency int, log io.Writer) (store.Store, *Index, error) {
	settings := pipeline.Settings{Store: "sqlite://" + path, Concurrency: concurrency}
	st, err := pipeline.OpenStore(ctx, settings, e, pipeline.NewMerger(e))
	if err != nil {
		return nil, nil, err
	}
	_, idx := Documents(ds)
	if stats, err := st.Stats(ctx); err == nil && stats.ByStatus[store.StatusDone] == idx.Documents() {
		fmt.Fprintf(log, "%s: reusing %s (%d documents)\n", ds.Name, path, idx.Documents())
		return st, idx, nil
	}
	p, err := pipeline.Offline(settings, e, st)
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	start := time.Now()
	next := 0
	idx, err = Ingest(ctx, ds, p, st, concurrency, func(done, total int) {
		if pct := done * 10 / total; pct >= next {
			next = pct + 1
			fmt.Fprintf(log, "%s: ingested %d/%d passages\n", ds.Name, done, total)
		}
	})
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	fmt.Fprintf(log, "%s: ingested %d passages into %d documents in %s\n", ds.Name, len(ds.Passages), idx.Documents(), time.Since(start).Round(time.Second))
	return st, idx, nil
}

// Methods are what a benchmark run measures on each dataset and with
// what: the retrieval modes, the baselines and the answer-side methods.
type Methods struct {
	// Embedder and Model (nil: no answers) are the run's models.
	Embedder embedstore.Embedder
	Model    llms.Model
	// Retrieval configures every mode; Budget bounds each answer's context.
	Retrieval retrieve.Config
	Budget    retrieve.Budget
	// Modes are the retrieval modes measured, ModeLogic included.
	Modes []string
	// BM25 adds plain full-text search on the same store and, when
	// python3 and the shared tool are there, the tool's numbers.
	BM25 bool
	// Integrate, when "logits", adds mix+logits beside mix, with
	// IntegrateOptions.
	Integrate        string
	IntegrateOptions retrieve.IntegrateOptions
	// Log hears a line per report and the warnings.
	Log io.Writer
}

// Run measures every method on ds over st (idx may be nil when no
// question has gold passages).
func (m Methods) Run(ctx context.Context, ds *Dataset, idx *Index, st store.Store) ([]*Report, error) {
	var reports []*Report
	add := func(r *Report) {
		reports = append(reports, r)
		fmt.Fprintf(m.Log, "%s %s: R@2 %.1f R@5 %.1f p50 %s\n", r.Dataset, r.Method, r.Recall[2], r.Recall[5], r.P50.Round(100*time.Microsecond))
	}
	if m.BM25 {
		k := slices.Max(Ks)
		rep, err := Evaluate(ctx, ds, idx, "bm25", func(ctx context.Context, q string) ([]string, error) {
			hits, err := st.SearchChunksText(ctx, q, k)
			return chunkDocIDs(hits), err
		}, nil)
		if err != nil {
			return nil, err
		}
		rep.Note = "SQLite FTS5 BM25 over the question's words, this store"
		add(rep)
		if script := FindBM25Tool(ds.Dir); script != "" {
			if _, err := exec.LookPath("python3"); err == nil {
				if rep, err := RunBM25Tool(ctx, script, ds); err == nil {
					add(rep)
				} else {
					fmt.Fprintln(m.Log, "warning:", err)
				}
			}
		}
	}
	tok, err := splitter.NewTokenizer("")
	if err != nil {
		return nil, err
	}
	for _, mode := range m.Modes {
		r := retrieve.New(st, m.Embedder, retrieve.WithConfig(m.Retrieval), retrieve.WithModel(m.Model))
		if mode == retrieve.ModeLogic {
			rep, err := m.answerMethod(ctx, ds, idx, r, mode, tok)
			if err != nil {
				return nil, err
			}
			add(rep)
			continue
		}
		// Warm the caches (vectors, the passage graph around the first
		// question, the path graph) before timing.
		if _, err := r.Retrieve(ctx, ds.Questions[0].Question, mode); err != nil {
			return nil, err
		}
		// Evaluate answers right after retrieving: the answer reuses the
		// retrieval it was timed on.
		var last *retrieve.Result
		retrieveFn := func(ctx context.Context, q string) ([]string, error) {
			res, err := r.Retrieve(ctx, q, mode)
			if err != nil {
				return nil, err
			}
			last = res
			return docIDsOf(res), nil
		}
		var answerFn AnswerFunc
		if m.Model != nil {
			answerFn = func(ctx context.Context, q string) (string, error) {
				res := last
				if res == nil || res.Question != strings.TrimSpace(q) {
					var err error
					if res, err = r.Retrieve(ctx, q, mode); err != nil {
						return "", err
					}
				}
				c, err := retrieve.Assemble(res, tok, m.Budget, ShortAnswer)
				if err != nil {
					return "", err
				}
				a, err := retrieve.Answer(ctx, m.Model, c, nil)
				if errors.Is(err, retrieve.ErrNoAnswer) {
					return "", nil // an empty or cut-off answer scores as wrong
				}
				if err != nil {
					return "", err
				}
				return a.Text, nil
			}
		}
		rep, err := Evaluate(ctx, ds, idx, mode, retrieveFn, answerFn)
		if err != nil {
			return nil, err
		}
		add(rep)
		if m.Integrate != "" && mode == retrieve.ModeMix {
			rep, err := m.answerMethod(ctx, ds, idx, r, mode+"+"+m.Integrate, tok)
			if err != nil {
				return nil, err
			}
			add(rep)
		}
	}
	return reports, nil
}

// answerMethod measures one answer-side method on a dataset: "logic", or
// "mix+logits".
func (m Methods) answerMethod(ctx context.Context, ds *Dataset, idx *Index, r *retrieve.Retriever, method string, tok *splitter.Tokenizer) (*Report, error) {
	// Warm the caches before timing, as for the other modes.
	if _, err := r.Retrieve(ctx, ds.Questions[0].Question, retrieve.ModeMix); err != nil {
		return nil, err
	}
	setup := retrieve.AnswerSetup{Tokens: tok, Budget: m.Budget, ResponseType: ShortAnswer}
	var (
		retrieveFn RetrieveFunc
		answerFn   AnswerFunc
		stats      *MethodStats
	)
	if method == retrieve.ModeLogic {
		retrieveFn, answerFn, stats = LogicMethod(r, m.Model, setup)
	} else {
		retrieveFn, answerFn, stats = IntegratedMethod(r, m.Model, setup, m.IntegrateOptions)
	}
	rep, err := Evaluate(ctx, ds, idx, method, retrieveFn, answerFn)
	if err != nil {
		return nil, err
	}
	rep.Note = stats.Note()
	return rep, nil
}

// RunDatasets measures m on each benchmark directory in dirs (Load),
// every dataset ingested into its own store in dir (reused when it is
// already there) with concurrency passages at once; questions > 0 keeps
// only the first that many of each.
func (m Methods) RunDatasets(ctx context.Context, dirs []string, questions int, dir string, concurrency int) ([]*Report, error) {
	var reports []*Report
	for _, dsDir := range dirs {
		ds, err := Load(dsDir)
		if err != nil {
			return nil, err
		}
		if questions > 0 && questions < len(ds.Questions) {
			ds.Questions = ds.Questions[:questions]
		}
		st, idx, err := DatasetStore(ctx, ds, filepath.Join(dir, ds.Name+".db"), m.Embedder, concurrency, m.Log)
		if err != nil {
			return nil, err
		}
		reps, err := m.Run(ctx, ds, idx, st)
		st.Close()
		if err != nil {
			return nil, err
		}
		reports = append(reports, reps...)
	}
	return reports, nil
}

// MetaQAAnswers answers the MetaQA questions in dir (the first limit of
// each hop count in hops) with m's modes over the KB imported into a
// store in storeDir (or a temporary folder). The baselines are left out:
// they measure passage recall, which MetaQA has no gold for.
func (m Methods) MetaQAAnswers(ctx context.Context, dir string, hops []int, limit int, storeDir string) ([]*Report, error) {
	qs, err := LoadMetaQA(dir, hops, limit)
	if err != nil {
		return nil, err
	}
	st, closeStore, err := MetaQAStore(ctx, dir, storeDir, m.Embedder, m.Log)
	if err != nil {
		return nil, err
	}
	defer closeStore()
	m.BM25 = false
	var out []*Report
	for _, ds := range MetaQADatasets(qs, hops) {
		reps, err := m.Run(ctx, ds, nil, st)
		if err != nil {
			return nil, err
		}
		out = append(out, reps...)
	}
	return out, nil
}

// MetaQAStore opens the store holding the MetaQA KB of dir (in storeDir,
// or a temporary folder that closing removes), importing dir/kb.txt
// unless it is already there. Progress lines go to log.
func MetaQAStore(ctx context.Context, dir, storeDir string, emb embedstore.Embedder, log io.Writer) (st store.Store, closeStore func(), err error) {
	kb := filepath.Join(dir, "kb.txt")
	work, cleanup, err := WorkDir(storeDir, "docgraph-metaqa-")
	if err != nil {
		return nil, nil, err
	}
	settings := pipeline.Settings{Store: "sqlite://" + filepath.Join(work, "metaqa.db")}
	st, err = pipeline.OpenStore(ctx, settings, emb, pipeline.NewMerger(emb))
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	closeStore = func() { st.Close(); cleanup() }
	start := time.Now()
	r := (&pipeline.Pipeline{Store: st, Embedder: emb}).ImportTriples(ctx, kb)
	if r.Outcome == pipeline.Failed {
		closeStore()
		return nil, nil, errors.New(r.Error)
	}
	fmt.Fprintf(log, "metaqa: kb %s %s (%s)\n", r.Outcome, kb, time.Since(start).Round(time.Millisecond))
	return st, closeStore, nil
}

func chunkDocIDs(hits []store.ChunkHit) []string {
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.DocID
	}
	return ids
}

// OpenModels opens a run's embedder and chat model (nil: none), keeping
// their caches in the store storeURL names ("": the default place); done
// releases them.
type OpenModels func(ctx context.Context, storeURL string) (emb embedstore.Embedder, model llms.Model, done func(), err error)

// Bench is a benchmark run as `query eval --dataset` makes it: Methods
// measured on each of Datasets and, when MetaQA names a directory, on
// its questions of each hop count in Hops.
type Bench struct {
	// Methods are what is measured; Run fills in their models.
	Methods Methods
	// Datasets are benchmark directories (Load).
	Datasets []string
	// Questions keeps the first that many questions of each dataset (0:
	// all) and of each MetaQA hop count (0: DefaultMetaQAQuestions).
	Questions int
	// Concurrency is how many passages are ingested at once.
	Concurrency int
	// StoreDir keeps the ingested stores and reuses them ("": a temporary
	// folder).
	StoreDir string
	// MetaQA, when set, is a MetaQA directory whose questions of each hop
	// count in Hops are answered too.
	MetaQA string
	Hops   []int
}

// Run measures b with the models open opens, their caches beside the
// run's stores. Each mode retrieves at least the most passages a recall
// is reported at.
func (b Bench) Run(ctx context.Context, open OpenModels) ([]*Report, error) {
	dir, cleanup, err := WorkDir(b.StoreDir, "docgraph-eval-")
	if err != nil {
		return nil, err
	}
	defer cleanup()
	emb, model, done, err := open(ctx, "sqlite://"+filepath.Join(dir, "eval.db"))
	if err != nil {
		return nil, err
	}
	defer done()
	m := b.Methods
	m.Embedder, m.Model = emb, model
	m.Retrieval.TopK = max(m.Retrieval.TopK, slices.Max(Ks))
	reports, err := m.RunDatasets(ctx, b.Datasets, b.Questions, dir, b.Concurrency)
	if err != nil || b.MetaQA == "" {
		return reports, err
	}
	reps, err := m.MetaQAAnswers(ctx, b.MetaQA, b.Hops, metaQAQuestions(b.Questions), b.StoreDir)
	if err != nil {
		return nil, err
	}
	return append(reports, reps...), nil
}

// metaQAQuestions is how many questions of each hop count to take when
// n were asked for (0: DefaultMetaQAQuestions).
func metaQAQuestions(n int) int {
	if n <= 0 {
		return DefaultMetaQAQuestions
	}
	return n
}

// MeasureMetaQA is `query eval --metaqa`: run on the first questions of
// each hop count (0: DefaultMetaQAQuestions), with the models open opens
// (their caches beside a kept store, in run.StoreDir) and each spec's
// retriever built with the options options gives for them.
func MeasureMetaQA(ctx context.Context, run MetaQARun, questions int, open OpenModels,
	options func(embedstore.Embedder, llms.Model) ([]paths.Option, error)) (*MetaQAResult, error) {
	qs, err := LoadMetaQA(run.Dir, run.Hops, metaQAQuestions(questions))
	if err != nil {
		return nil, err
	}
	storeURL := ""
	if run.StoreDir != "" {
		storeURL = "sqlite://" + filepath.Join(run.StoreDir, "metaqa.db")
	}
	emb, model, done, err := open(ctx, storeURL)
	if err != nil {
		return nil, err
	}
	defer done()
	if run.Options, err = options(emb, model); err != nil {
		return nil, err
	}
	return RunMetaQA(ctx, run, qs, emb)
}
