package retrieve

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tmc/langchaingo/llms"

	"github.com/docgraph/docgraph/embedstore"
	"github.com/docgraph/docgraph/ner"
	"github.com/docgraph/docgraph/retrieve/paths"
	"github.com/docgraph/docgraph/store"
)

// Retrieval modes.
const (
	ModeNaive  = "naive"  // full-text and vector chunk search, fused
	ModeLocal  = "local"  // LightRAG low level: keywords -> entities -> relations, chunks
	ModeGlobal = "global" // LightRAG high level: keywords -> relations -> entities, chunks
	ModeHybrid = "hybrid" // local and global merged
	ModeMix    = "mix"    // the multi-path pipeline with Personalized PageRank (default)
)

// Modes lists the retrieval modes, the default first.
func Modes() []string {
	return []string{ModeMix, ModeNaive, ModeLocal, ModeGlobal, ModeHybrid, ModeLogic}
}

// Weights are the reciprocal-rank fusion weights of mix's passage signals.
type Weights struct {
	FullText float64 // BM25 over chunk text
	Vector   float64 // cosine against chunk embeddings (vector index)
	Mentions float64 // chunks the found entities are MENTIONED_IN
	TwoHop   float64 // chunks of entities related to the found ones
	PPR      float64 // Personalized PageRank from the question's entities
	Rerank   float64 // cosine against the stored embeddings of the candidates
	Paths    float64 // chunks the question's reasoning paths came from (0: not run)
}

// Config holds every limit of retrieval; the zero value of a field means
// its default (DefaultConfig).
type Config struct {
	TopK          int     // passages returned (15)
	Candidates    int     // hits each chunk path contributes before fusion (50)
	MaxEntities   int     // entities kept from discovery (30)
	MaxRelations  int     // relationships kept from expansion (20)
	FactTopK      int     // relation vector search results (15)
	FactThreshold float64 // facts below this cosine are dropped (0.25) ...
	MinFacts      int     // ... but the best MinFacts are always kept (3)
	Damping       float64 // PPR: probability of following an edge (0.5)
	// PushEpsilon is the residual threshold of the forward-push PPR
	// approximation (1e-6), per unit of degree. There is no exact mode:
	// PageRank reads the graph around the question's entities, never whole.
	PushEpsilon float64
	Graph       GraphOptions
	Weights     Weights
	// RRFK is the reciprocal-rank constant of mix's fusion (5):
	// smaller makes the top ranks of each signal count more.
	RRFK float64
	// Cypher turns on text-to-Cypher on stores that run read-only Cypher;
	// CypherLimit bounds its rows (25).
	Cypher      bool
	CypherLimit int
	// PathSpec chooses the path retrieval modules behind mix's path
	// signal (DefaultPathSpec when empty); Weights.Paths turns it on.
	PathSpec string
	// Logic bounds logic-form retrieval (mode logic).
	Logic LogicConfig
}

// DefaultConfig is the configuration tuned offline (hash embedder, offline
// extractor) on the 2Wiki and MuSiQue sets: PageRank from the question's
// entities carries most of the ranking and BM25 the rest; the vector,
// mention and 2-hop paths and the cosine rerank weigh little, as more
// weight on them lowered Recall@5 on both sets.
func DefaultConfig() Config {
	return Config{
		TopK: 15, Candidates: 50, MaxEntities: 30, MaxRelations: 20,
		FactTopK: 15, FactThreshold: 0.25, MinFacts: 3,
		Damping: 0.5, PushEpsilon: 1e-6,
		Graph:       DefaultGraphOptions(),
		Weights:     Weights{FullText: 1, Vector: 0.05, Mentions: 0.05, TwoHop: 0.05, PPR: 2, Rerank: 0.3},
		RRFK:        5,
		CypherLimit: 25,
	}
}

// Option configures a Retriever.
type Option func(*Retriever)

// WithModel gives the retriever a language model, used for LightRAG's
// keywords and for text-to-Cypher; without one both run offline or not at all.
func WithModel(m llms.Model) Option { return func(r *Retriever) { r.model = m } }

// WithMentioner sets what finds entity names in questions (default: ner.NewOffline()).
func WithMentioner(m Mentioner) Option { return func(r *Retriever) { r.ner = m } }

// WithConfig replaces the whole configuration; zero fields take defaults.
func WithConfig(c Config) Option { return func(r *Retriever) { r.cfg = c } }

// WithTopK sets how many passages a retrieval returns.
func WithTopK(n int) Option { return func(r *Retriever) { r.cfg.TopK = n } }

// WithCypher turns text-to-Cypher on, with at most limit rows (0: default).
func WithCypher(limit int) Option {
	return func(r *Retriever) { r.cfg.Cypher, r.cfg.CypherLimit = true, limit }
}

// Retriever answers questions from a store in any mode. It keeps what it
// read of the store's passage graph between queries (dropped when the
// store changes) and is safe for concurrent use.
type Retriever struct {
	store store.Reader
	emb   embedstore.Embedder
	model llms.Model
	ner   Mentioner
	cfg   Config
	// neighbors caches the passage graph around the nodes PageRank met.
	neighbors *neighborCache
	paths     *pathCache
	// background: reload the path graph in the background after a store
	// change, answering from the previous copy meanwhile.
	background bool
	// snapshots: hold the whole passage graph per version (WithPassageSnapshot).
	snapshots bool
	// pathsErr is a bad PathSpec, reported by the first mix query.
	pathsErr error
}

// New returns a retriever over st, embedding questions with emb.
func New(st store.Reader, emb embedstore.Embedder, opts ...Option) *Retriever {
	r := &Retriever{store: st, emb: emb, cfg: DefaultConfig()}
	for _, o := range opts {
		o(r)
	}
	r.cfg = r.cfg.withDefaults()
	if r.ner == nil {
		r.ner = ner.NewOffline()
	}
	r.neighbors = r.newNeighborCache(r.cfg.Graph.MaxEntityChunks)
	if r.cfg.Weights.Paths > 0 {
		r.paths, r.pathsErr = newPathCache(r.cfg.PathSpec, r.background, paths.WithEmbedder(r.emb))
	}
	return r
}

// Config returns the configuration in force.
func (r *Retriever) Config() Config { return r.cfg }

func (c Config) withDefaults() Config {
	d := DefaultConfig()
	setInt := func(v *int, def int) {
		if *v <= 0 {
			*v = def
		}
	}
	setInt(&c.TopK, d.TopK)
	setInt(&c.Candidates, d.Candidates)
	setInt(&c.MaxEntities, d.MaxEntities)
	setInt(&c.MaxRelations, d.MaxRelations)
	setInt(&c.FactTopK, d.FactTopK)
	setInt(&c.MinFacts, d.MinFacts)
	setInt(&c.CypherLimit, d.CypherLimit)
	if c.FactThreshold == 0 {
		c.FactThreshold = d.FactThreshold
	}
	if c.Damping <= 0 || c.Damping >= 1 {
		c.Damping = d.Damping
	}
	if c.PushEpsilon <= 0 {
		c.PushEpsilon = d.PushEpsilon
	}
	if c.RRFK <= 0 {
		c.RRFK = d.RRFK
	}
	if c.Graph == (GraphOptions{}) {
		c.Graph = d.Graph
	}
	if c.Graph.TitleWeight <= 0 {
		c.Graph.TitleWeight = d.Graph.TitleWeight
	}
	if c.Graph.MentionWeight <= 0 {
		c.Graph.MentionWeight = d.Graph.MentionWeight
	}
	if c.Weights == (Weights{}) {
		c.Weights = d.Weights
	}
	c.Logic = c.Logic.withDefaults()
	return c
}

// Retrieve runs one question in a mode ("" is mix).
func (r *Retriever) Retrieve(ctx context.Context, question, mode string) (*Result, error) {
	question = strings.TrimSpace(question)
	if question == "" {
		return nil, fmt.Errorf("retrieve: empty question")
	}
	if mode == "" {
		mode = ModeMix
	}
	if !slices.Contains(Modes(), mode) {
		return nil, fmt.Errorf("retrieve: unknown mode %q (available: %s)", mode, strings.Join(Modes(), ", "))
	}
	start := time.Now()
	res := &Result{Question: question, Mode: mode, Timings: map[string]time.Duration{}, Hint: AnswerHint(question)}
	var err error
	switch mode {
	case ModeNaive:
		var nr *Result
		nr, err = (&Naive{Store: r.store, Embedder: r.emb, Candidates: r.cfg.Candidates}).Retrieve(ctx, question, r.cfg.TopK)
		if err == nil {
			res.Passages, res.Timings, res.Warnings = nr.Passages, nr.Timings, nr.Warnings
		}
	case ModeLocal, ModeGlobal, ModeHybrid:
		err = r.dual(ctx, res)
	case ModeMix:
		err = r.mix(ctx, res)
	case ModeLogic:
		err = r.logic(ctx, res)
	}
	if err != nil {
		return nil, err
	}
	res.Timings["total"] = time.Since(start)
	return res, nil
}

// stages records stage timings from concurrent goroutines.
type stages struct {
	mu  sync.Mutex
	res *Result
}

// time runs fn and records its duration under name.
func (s *stages) time(name string, fn func() error) error {
	t := time.Now()
	err := fn()
	s.mu.Lock()
	s.res.Timings[name] += time.Since(t)
	s.mu.Unlock()
	return err
}

// AnswerHint says what shape of answer a question wants, for the answer
// prompt: yes/no questions, counts and dates.
func AnswerHint(question string) string {
	words := strings.Fields(strings.ToLower(question))
	if len(words) == 0 {
		return ""
	}
	first := strings.Trim(words[0], "?,.!:;\"'")
	switch first {
	case "is", "are", "was", "were", "do", "does", "did", "can", "could", "has", "have", "had",
		"will", "would", "should", "shall", "may", "might", "must", "am":
		return "This is a yes/no question: start the answer with yes or no."
	}
	q := strings.ToLower(question)
	switch {
	case strings.HasPrefix(q, "how many") || strings.HasPrefix(q, "how much"):
		return "The question asks for a quantity: give the number first."
	case first == "when" || strings.HasPrefix(q, "what year") || strings.HasPrefix(q, "in what year") || strings.HasPrefix(q, "which year"):
		return "The question asks for a time: give the date or year first."
	}
	return ""
}
