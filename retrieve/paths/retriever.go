package paths

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/tmc/langchaingo/embeddings"
	"github.com/tmc/langchaingo/llms"

	"github.com/docgraph/docgraph/retrieve/graphalg"
	"github.com/docgraph/docgraph/store"
)

// Entity is an entity on a path.
type Entity struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// Hop is one relation walked along a path, to the entity it reaches.
type Hop struct {
	RelationID string `json:"relation_id"`
	Relation   string `json:"relation"`          // the relation type; "" for extracted (untyped) relations
	Reverse    bool   `json:"reverse,omitempty"` // walked against the relation's direction
	To         Entity `json:"to"`
	// Chunks are the chunks the relation was extracted from (or, for a
	// KG import, the source lines), when the retriever has provenance.
	Chunks []string `json:"chunks,omitempty"`
}

// Path is one reasoning path from a seed entity.
type Path struct {
	Start Entity  `json:"start"`
	Hops  []Hop   `json:"hops"`
	Score float64 `json:"score"`
	// Text is the path written Entity -[relation]-> Entity <-[relation]- Entity.
	Text string `json:"text"`
}

// End is the entity the path reaches.
func (p Path) End() Entity {
	if len(p.Hops) == 0 {
		return p.Start
	}
	return p.Hops[len(p.Hops)-1].To
}

// Chunks lists the chunk ids the path's relations came from, in hop order, each once.
func (p Path) Chunks() []string {
	var out []string
	seen := map[string]bool{}
	for _, h := range p.Hops {
		for _, c := range h.Chunks {
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
			}
		}
	}
	return out
}

// Result is what one path retrieval found.
type Result struct {
	Question string   `json:"question"`
	Spec     string   `json:"spec"`
	Seeds    []Entity `json:"seeds"`
	// Subgraph is how many entities subgraph extraction kept.
	Subgraph int `json:"subgraph"`
	// Candidates is how many paths path filtering produced.
	Candidates int `json:"candidates"`
	// Paths are the refined paths, best first (at most top-k).
	Paths []Path `json:"paths"`
	// Priority and Additional are GraphRAG-FI's split of Paths, when the
	// retriever filters.
	Priority   []Path                   `json:"priority,omitempty"`
	Additional []Path                   `json:"additional,omitempty"`
	Notes      []string                 `json:"notes,omitempty"`
	Timings    map[string]time.Duration `json:"timings_ns"`
}

// Chunks lists the chunk ids the result's paths came from, best path
// first, each once: the passages a fused retrieval can rank by path.
func (r *Result) Chunks() []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range r.Paths {
		for _, c := range p.Chunks() {
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
			}
		}
	}
	return out
}

// Retriever runs the three LEGO-GraphRAG modules a Spec names over a KG.
// It is safe for concurrent use once built.
type Retriever struct {
	kg   *KG
	spec Spec

	maxEnt    int
	damping   float64
	tol       float64
	maxIter   int
	pushEps   float64
	walks     int
	pruneKeep float64
	maxHop    int
	width     int
	maxBeam   int
	triple    bool
	dynamic   bool
	topK      int
	perTarget int
	perEnd    int
	maxPaths  int

	embedder embeddings.Embedder
	model    llms.Model
	llmPaths int
	prov     store.KGScanner
	fi       *FI

	scorers map[string]Scorer
}

// Option configures a Retriever.
type Option func(*Retriever)

// WithMaxEnt bounds the entities subgraph extraction keeps (default 1000).
func WithMaxEnt(n int) Option { return func(r *Retriever) { r.maxEnt = n } }

// WithDamping sets the probability that PPR's and RWR's walk follows an
// edge (default 0.8, as LEGO-GraphRAG and igraph's baseline); the walk
// restarts at the seeds with probability 1-damping.
func WithDamping(d float64) Option { return func(r *Retriever) { r.damping = d } }

// WithTolerance sets exact PPR's stopping rule: iterate until the L1 change
// is below tol (default 1e-9), at most maxIter rounds (default 200).
func WithTolerance(tol float64, maxIter int) Option {
	return func(r *Retriever) { r.tol, r.maxIter = tol, maxIter }
}

// WithPushEpsilon sets approximate PPR's residual threshold per unit of
// degree (default 5e-6): smaller is closer to exact and slower. Scores are
// push estimates plus the share of each node's own residual it keeps.
func WithPushEpsilon(eps float64) Option { return func(r *Retriever) { r.pushEps = eps } }

// WithWalks sets how many random walks RWR samples per seed (default 20000).
func WithWalks(n int) Option { return func(r *Retriever) { r.walks = n } }

// WithPruneKeep sets the share of the subgraph semantic pruning keeps
// (se=ppr:emb and the like; default 0.5).
func WithPruneKeep(f float64) Option { return func(r *Retriever) { r.pruneKeep = f } }

// WithMaxHop bounds path length (default 3).
func WithMaxHop(n int) Option { return func(r *Retriever) { r.maxHop = n } }

// WithBeamWidth sets beam search's width (default 8) and the bound on what
// dynamic pruning keeps (default 16 times the width).
func WithBeamWidth(width, maxBeam int) Option {
	return func(r *Retriever) { r.width, r.maxBeam = width, maxBeam }
}

// WithTripleScoring makes beam search score only the triple each step adds
// and rank a path by the mean of its triples' scores (the pf=beam:…:triple flag).
func WithTripleScoring(on bool) Option { return func(r *Retriever) { r.triple = on } }

// WithDynamicPruning makes beam search keep every candidate scoring at
// least the step's mean instead of a fixed width (the pf=beam:…:dynamic flag).
func WithDynamicPruning(on bool) Option { return func(r *Retriever) { r.dynamic = on } }

// WithTopK sets how many paths refinement keeps (default 64).
func WithTopK(n int) Option { return func(r *Retriever) { r.topK = n } }

// WithPathLimits bounds path filtering: shortest paths kept per target
// entity (default 8) and candidate paths per seed (default 10000).
func WithPathLimits(perTarget, maxPaths int) Option {
	return func(r *Retriever) { r.perTarget, r.maxPaths = perTarget, maxPaths }
}

// WithPerEnd makes refinement keep at most n paths that end at the same
// entity (default 1; 0 keeps all): several paths to one entity crowd
// other entities out of the top k.
func WithPerEnd(n int) Option { return func(r *Retriever) { r.perEnd = n } }

// WithEmbedder enables the "emb" scorer (cosine with this embedder).
func WithEmbedder(e embeddings.Embedder) Option { return func(r *Retriever) { r.embedder = e } }

// WithLLM enables the "llm" scorer and GraphRAG-FI's fine filter; maxPaths
// bounds the paths one scoring call shows the model (default 32).
func WithLLM(m llms.Model, maxPaths int) Option {
	return func(r *Retriever) { r.model, r.llmPaths = m, maxPaths }
}

// WithProvenance attaches to every returned hop the chunks its relation
// came from, read from the store the KG was loaded from.
func WithProvenance(st store.KGScanner) Option { return func(r *Retriever) { r.prov = st } }

// WithFI turns on GraphRAG-FI filtering of the refined paths (it needs
// WithLLM): threshold and maxCoarse as for NewFI.
func WithFI(threshold float64, maxCoarse int) Option {
	return func(r *Retriever) { r.fi = NewFI(nil, threshold, maxCoarse) }
}

// New builds a retriever for spec over kg. It fails when the spec needs a
// scorer that was not configured (emb needs WithEmbedder, llm WithLLM and
// an embedder to fill in) or an option is out of range.
func New(kg *KG, spec Spec, opts ...Option) (*Retriever, error) {
	r := &Retriever{
		kg: kg, spec: spec,
		maxEnt: 1000, damping: 0.8, tol: 1e-9, maxIter: 200, pushEps: 5e-6, walks: 20000, pruneKeep: 0.5,
		maxHop: 3, width: 8, topK: 64, perTarget: 8, maxPaths: 10000, perEnd: 1,
	}
	for _, o := range opts {
		o(r)
	}
	switch {
	case kg == nil:
		return nil, fmt.Errorf("path retrieval: no graph")
	case !(r.damping >= 0 && r.damping < 1):
		return nil, fmt.Errorf("path retrieval: damping %v outside [0, 1)", r.damping)
	case r.maxEnt <= 0 || r.maxHop <= 0 || r.width <= 0 || r.topK <= 0 || r.pushEps <= 0 || r.walks <= 0:
		return nil, fmt.Errorf("path retrieval: max-ent, max-hop, beam width, top-k, push epsilon and walks must be positive")
	case r.pruneKeep <= 0 || r.pruneKeep > 1:
		return nil, fmt.Errorf("path retrieval: prune keep %v outside (0, 1]", r.pruneKeep)
	}
	if spec.PF.Has("triple") {
		r.triple = true
	}
	if spec.PF.Has("dynamic") {
		r.dynamic = true
	}
	r.scorers = map[string]Scorer{"bm25": NewBM25(), "random": Random{}}
	if r.embedder != nil {
		r.scorers["emb"] = NewEmbedding(r.embedder, "emb")
	}
	if r.model != nil {
		fill := r.scorers["emb"]
		if fill == nil {
			fill = r.scorers["bm25"]
		}
		r.scorers["llm"] = NewLLM(r.model, fill, r.llmPaths)
	}
	for _, name := range []string{spec.SE.Scorer, spec.PF.Scorer, spec.PR.Method} {
		if name == "" || name == "none" {
			continue
		}
		if _, ok := r.scorers[name]; !ok {
			need := "an embedder"
			if name == "llm" {
				need = "an LLM (--llm)"
			}
			return nil, fmt.Errorf("path spec %s: scorer %q needs %s", spec, name, need)
		}
	}
	if r.fi != nil {
		if r.model == nil {
			return nil, fmt.Errorf("path retrieval: GraphRAG-FI filtering needs an LLM (--llm)")
		}
		*r.fi = *NewFI(r.model, r.fi.threshold, r.fi.maxCoarse)
	}
	return r, nil
}

// Spec is the spec the retriever runs.
func (r *Retriever) Spec() Spec { return r.spec }

// KG is the graph the retriever walks.
func (r *Retriever) KG() *KG { return r.kg }

// Scorer returns a configured scorer by name ("bm25", "emb", "llm", "random").
func (r *Retriever) Scorer(name string) (Scorer, bool) {
	s, ok := r.scorers[name]
	return s, ok
}

// Retrieve finds reasoning paths for question from the seed entities (ids;
// when none are given, the entities KG.Link finds in the question).
func (r *Retriever) Retrieve(ctx context.Context, question string, seedIDs []string) (*Result, error) {
	res := &Result{Question: question, Spec: r.spec.String(), Timings: map[string]time.Duration{}}
	start := time.Now()
	linked := r.kg.Link(question)
	var seeds []int
	if len(seedIDs) == 0 {
		seeds = linked
	} else {
		for _, id := range seedIDs {
			if n, ok := r.kg.Node(id); ok && !slices.Contains(seeds, n) {
				seeds = append(seeds, n)
			}
		}
	}
	for _, s := range seeds {
		id, name := r.kg.Entity(s)
		res.Seeds = append(res.Seeds, Entity{ID: id, Name: name})
	}
	res.Timings["link"] = time.Since(start)
	if len(seeds) == 0 {
		res.Notes = append(res.Notes, "no entity of the graph is named in the question")
		return res, nil
	}

	t := time.Now()
	sub, err := r.Extract(ctx, question, seeds)
	if err != nil {
		return nil, err
	}
	res.Subgraph = len(sub.Nodes)
	res.Timings["extract"] = time.Since(t)

	named := map[int]bool{}
	for _, n := range append(linked[:len(linked):len(linked)], seeds...) {
		named[n] = true
	}
	q := &query{question: question, seeds: seeds, named: named}

	t = time.Now()
	cands, err := r.filter(ctx, q, sub)
	if err != nil {
		return nil, err
	}
	res.Candidates = len(cands)
	res.Timings["filter"] = time.Since(t)

	t = time.Now()
	top, err := r.refine(ctx, q, cands)
	if err != nil {
		return nil, err
	}
	res.Paths = make([]Path, len(top))
	for i, p := range top {
		res.Paths[i] = r.render(p)
	}
	res.Timings["refine"] = time.Since(t)

	if r.prov != nil && len(res.Paths) > 0 {
		t = time.Now()
		if err := r.attachChunks(ctx, res.Paths); err != nil {
			return nil, err
		}
		res.Timings["provenance"] = time.Since(t)
	}
	if r.fi != nil && len(res.Paths) > 0 {
		t = time.Now()
		high, extra, note, err := r.fi.Filter(ctx, question, res.Paths)
		if err != nil {
			return nil, err
		}
		res.Priority, res.Additional = high, extra
		if note != "" {
			res.Notes = append(res.Notes, note)
		}
		res.Timings["fi"] = time.Since(t)
	}
	res.Timings["total"] = time.Since(start)
	return res, nil
}

// Subgraph is what subgraph extraction kept: nodes ranked best first,
// their scores, and membership.
type Subgraph struct {
	Nodes  []int
	Scores []float64
	// In marks the kept nodes; nil means the whole graph (se=none).
	In []bool
}

// Extract runs the subgraph extraction module.
func (r *Retriever) Extract(ctx context.Context, question string, seeds []int) (*Subgraph, error) {
	g := r.kg.Graph()
	var scores map[int]float64
	switch r.spec.SE.Method {
	case "ppr":
		seedW := make(map[int]float64, len(seeds))
		for _, s := range seeds {
			seedW[s] = 1
		}
		if r.spec.SE.Has("exact") {
			dense := graphalg.PPR(g, seedW, r.damping, r.tol, r.maxIter)
			return r.keep(ctx, question, seeds, topDense(dense, r.maxEnt))
		}
		push := r.kg.pushers.Get().(*graphalg.Pusher)
		found := push.PPR(seedW, r.damping, r.pushEps)
		r.kg.pushers.Put(push)
		ranked := make([]scored, len(found))
		for i, f := range found {
			ranked[i] = scored{int(f.Node), f.Score + (1-r.damping)*f.Residual}
		}
		return r.keep(ctx, question, seeds, topOf(ranked, r.maxEnt))
	case "rwr":
		scores = r.kg.walk().RWR(seeds, r.damping, r.walks, 1)
	case "ego", "none":
		nodes, dist := graphalg.Ego(g, seeds, r.maxHop, 0)
		limit := len(nodes)
		if r.spec.SE.Method == "ego" {
			limit = min(limit, r.maxEnt)
		}
		ranked := make([]scored, limit)
		for i := range ranked {
			ranked[i] = scored{nodes[i], 1 / float64(1+dist[i])}
		}
		sub, err := r.keep(ctx, question, seeds, ranked)
		if err == nil && r.spec.SE.Method == "none" {
			sub.In = nil
		}
		return sub, err
	default:
		return nil, fmt.Errorf("path retrieval: unknown subgraph extraction %q", r.spec.SE.Method)
	}
	return r.keep(ctx, question, seeds, topSparse(scores, r.maxEnt))
}

type scored struct {
	node  int
	score float64
}

// topDense returns the k best nodes of a dense score vector, ties by node.
func topDense(x []float64, k int) []scored {
	all := make([]scored, 0, len(x))
	for u, s := range x {
		if s > 0 {
			all = append(all, scored{u, s})
		}
	}
	return topOf(all, k)
}

func topSparse(m map[int]float64, k int) []scored {
	all := make([]scored, 0, len(m))
	for u, s := range m {
		if s > 0 {
			all = append(all, scored{u, s})
		}
	}
	return topOf(all, k)
}

func topOf(all []scored, k int) []scored {
	less := func(a, b scored) bool {
		if a.score != b.score {
			return a.score > b.score
		}
		return a.node < b.node
	}
	if len(all) > 4*k {
		// Select the top k before sorting: a full sort of 43k scores is
		// most of an approximate PPR query.
		all = partialTop(all, k, less)
	}
	sort.Slice(all, func(i, j int) bool { return less(all[i], all[j]) })
	if len(all) > k {
		all = all[:k]
	}
	return all
}

// partialTop moves the k best to the front (quickselect) and returns them.
func partialTop(a []scored, k int, less func(a, b scored) bool) []scored {
	lo, hi := 0, len(a)-1
	for lo < hi {
		p := a[(lo+hi)/2]
		i, j := lo, hi
		for i <= j {
			for less(a[i], p) {
				i++
			}
			for less(p, a[j]) {
				j--
			}
			if i <= j {
				a[i], a[j] = a[j], a[i]
				i++
				j--
			}
		}
		switch {
		case k-1 <= j:
			hi = j
		case k-1 >= i:
			lo = i
		default:
			return a[:k]
		}
	}
	return a[:k]
}

// keep turns ranked nodes into a subgraph, seeds always in, after the
// optional semantic pruning (se=METHOD:SCORER): nodes are scored by name
// against the question and the best pruneKeep share is kept.
func (r *Retriever) keep(ctx context.Context, question string, seeds []int, ranked []scored) (*Subgraph, error) {
	if name := r.spec.SE.Scorer; name != "" && len(ranked) > 0 {
		texts := make([]string, len(ranked))
		for i, s := range ranked {
			_, texts[i] = r.kg.Entity(s.node)
		}
		sc, err := r.scorers[name].Score(ctx, question, texts)
		if err != nil {
			return nil, fmt.Errorf("subgraph pruning (%s): %w", name, err)
		}
		order := rankOf(sc)
		n := int(float64(len(ranked))*r.pruneKeep + 0.5)
		keep := map[int]bool{}
		for _, i := range order[:max(1, n)] {
			keep[i] = true
		}
		kept := ranked[:0:0]
		for i, s := range ranked {
			if keep[i] || slices.Contains(seeds, s.node) {
				kept = append(kept, s)
			}
		}
		ranked = kept
	}
	sub := &Subgraph{In: make([]bool, r.kg.NumEntities())}
	for _, s := range seeds {
		sub.In[s] = true
	}
	for _, s := range ranked {
		sub.Nodes = append(sub.Nodes, s.node)
		sub.Scores = append(sub.Scores, s.score)
		sub.In[s.node] = true
	}
	for _, s := range seeds {
		if !slices.Contains(sub.Nodes, s) {
			sub.Nodes = append(sub.Nodes, s)
			sub.Scores = append(sub.Scores, 0)
		}
	}
	return sub, nil
}

// candidate is a path with the score path filtering gave it (beam search) or 0.
type candidate struct {
	graphalg.Path
	score float64
}

// query is one question as the modules after extraction see it.
type query struct {
	question string
	seeds    []int
	named    map[int]bool // the seeds and every entity the question names
}

// filter runs the path filtering module from every seed within the subgraph.
func (r *Retriever) filter(ctx context.Context, q *query, sub *Subgraph) ([]candidate, error) {
	m := r.kg.MultiGraph()
	var out []candidate
	for _, s := range q.seeds {
		switch r.spec.PF.Method {
		case "spf":
			targets := make([]int, 0, len(sub.Nodes))
			for _, n := range sub.Nodes {
				if n != s {
					targets = append(targets, n)
				}
			}
			for _, p := range graphalg.ShortestPaths(m, s, targets, sub.In, r.maxHop, r.perTarget, r.maxPaths) {
				out = append(out, candidate{Path: p})
			}
		case "cpf":
			for _, p := range graphalg.CompletePaths(m, s, sub.In, r.maxHop, r.maxPaths) {
				out = append(out, candidate{Path: p})
			}
		case "beam":
			found, err := graphalg.BeamSearch(m, s, graphalg.BeamOptions{
				Width: r.width, MaxHop: r.maxHop, Allowed: sub.In, Dynamic: r.dynamic, MaxBeam: r.maxBeam,
			}, r.beamScorer(ctx, q))
			if err != nil {
				return nil, fmt.Errorf("beam search from %s: %w", r.kg.names[s], err)
			}
			for _, p := range found {
				out = append(out, candidate{Path: p.Path, score: p.Score})
			}
		default:
			return nil, fmt.Errorf("path retrieval: unknown path filter %q", r.spec.PF.Method)
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// beamScorer scores beam candidates with the path filter's scorer: the
// whole path's text, or with triple-level scoring only the triple the step
// added, the path ranking by the mean of its triples' scores.
func (r *Retriever) beamScorer(ctx context.Context, q *query) graphalg.PathScorer {
	sc := r.scorers[r.spec.PF.Scorer]
	if r.triple {
		sc = flatForTriples(sc)
	}
	sums := map[string]float64{}
	return func(cands []graphalg.Path) ([]float64, error) {
		texts := make([]string, len(cands))
		for i, p := range cands {
			if r.triple {
				texts[i] = r.kg.tripleText(int(p.Steps[len(p.Steps)-1].Edge), q.named)
			} else {
				texts[i] = r.pathText(p, q.named)
			}
		}
		scores, err := sc.Score(ctx, q.question, texts)
		if err != nil || !r.triple {
			return scores, err
		}
		for i, p := range cands {
			sum := sums[pathKey(p, len(p.Steps)-1)] + scores[i]
			sums[pathKey(p, len(p.Steps))] = sum
			scores[i] = sum / float64(len(p.Steps))
		}
		return scores, nil
	}
}

// pathKey identifies the first n steps of a path.
func pathKey(p graphalg.Path, n int) string {
	b := make([]byte, 0, 4+5*n)
	b = binary.LittleEndian.AppendUint32(b, uint32(p.Start))
	for _, s := range p.Steps[:n] {
		e := uint32(s.Edge) << 1
		if s.Reverse {
			e |= 1
		}
		b = binary.LittleEndian.AppendUint32(b, e)
	}
	return string(b)
}

// pathText is what scorers read of a path: its triples' texts in order.
func (r *Retriever) pathText(p graphalg.Path, named map[int]bool) string {
	parts := make([]string, len(p.Steps))
	for i, s := range p.Steps {
		parts[i] = r.kg.tripleText(int(s.Edge), named)
	}
	return strings.Join(parts, ". ")
}

// refine runs the path refinement module: every candidate scored by the
// refinement scorer, the best top-k kept (pr=none keeps the filter's order,
// beam search's by its own scores).
func (r *Retriever) refine(ctx context.Context, q *query, cands []candidate) ([]candidate, error) {
	if len(cands) == 0 {
		return nil, nil
	}
	method := r.spec.PR.Method
	if method == "none" {
		if r.spec.PF.Method == "beam" {
			sort.SliceStable(cands, func(i, j int) bool { return cands[i].score > cands[j].score })
		}
	} else {
		var scores []float64
		var err error
		if r.spec.PR.Has("triple") {
			scores, err = r.tripleScores(ctx, q, r.scorers[method], cands)
		} else {
			texts := make([]string, len(cands))
			for i, c := range cands {
				texts[i] = r.pathText(c.Path, q.named)
			}
			scores, err = r.scorers[method].Score(ctx, q.question, texts)
		}
		if err != nil {
			return nil, fmt.Errorf("path refinement (%s): %w", method, err)
		}
		for i := range cands {
			cands[i].score = scores[i]
		}
		// Equal scores keep the filter's order: shorter and better-ranked first.
		sort.SliceStable(cands, func(i, j int) bool { return cands[i].score > cands[j].score })
	}
	if r.perEnd > 0 {
		ends := map[int]int{}
		kept := cands[:0]
		for _, c := range cands {
			if e := c.End(); ends[e] < r.perEnd {
				ends[e]++
				kept = append(kept, c)
			}
		}
		cands = kept
	}
	if len(cands) > r.topK {
		cands = cands[:r.topK]
	}
	return cands, nil
}

// tripleScores scores every distinct triple of the candidates once (the
// collection a scorer normalises over is the triples) and ranks a path by
// the mean of its triples' scores: triple-level scoring for refinement.
func (r *Retriever) tripleScores(ctx context.Context, q *query, sc Scorer, cands []candidate) ([]float64, error) {
	index := map[int32]int{}
	var texts []string
	for _, c := range cands {
		for _, s := range c.Steps {
			if _, ok := index[s.Edge]; !ok {
				index[s.Edge] = len(texts)
				texts = append(texts, r.kg.tripleText(int(s.Edge), q.named))
			}
		}
	}
	ts, err := flatForTriples(sc).Score(ctx, q.question, texts)
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(cands))
	for i, c := range cands {
		for _, s := range c.Steps {
			out[i] += ts[index[s.Edge]]
		}
		out[i] /= float64(len(c.Steps))
	}
	return out, nil
}

// flatForTriples is the scorer to use on single triples: BM25 without
// length normalisation, any other scorer as it is.
func flatForTriples(sc Scorer) Scorer {
	if b, ok := sc.(*BM25); ok && !b.Flat {
		flat := *b
		flat.Flat = true
		return &flat
	}
	return sc
}

// render turns a graph path into its public form.
func (r *Retriever) render(c candidate) Path {
	id, name := r.kg.Entity(int(c.Start))
	p := Path{Start: Entity{ID: id, Name: name}, Score: c.score, Hops: make([]Hop, len(c.Steps))}
	var b strings.Builder
	b.WriteString(name)
	for i, s := range c.Steps {
		relID, typ := r.kg.relation(int(s.Edge))
		toID, toName := r.kg.Entity(int(s.To))
		p.Hops[i] = Hop{RelationID: relID, Relation: typ, Reverse: s.Reverse, To: Entity{ID: toID, Name: toName}}
		label := typ
		if label == "" {
			label = "related to"
		}
		if s.Reverse {
			fmt.Fprintf(&b, " <-[%s]- %s", label, toName)
		} else {
			fmt.Fprintf(&b, " -[%s]-> %s", label, toName)
		}
	}
	p.Text = b.String()
	return p
}

// attachChunks fills each hop's source chunks from the store.
func (r *Retriever) attachChunks(ctx context.Context, paths []Path) error {
	var ids []string
	for _, p := range paths {
		for _, h := range p.Hops {
			ids = append(ids, h.RelationID)
		}
	}
	chunks, err := r.prov.RelationChunks(ctx, ids)
	if err != nil {
		return fmt.Errorf("path provenance: %w", err)
	}
	for i := range paths {
		for j := range paths[i].Hops {
			paths[i].Hops[j].Chunks = chunks[paths[i].Hops[j].RelationID]
		}
	}
	return nil
}
