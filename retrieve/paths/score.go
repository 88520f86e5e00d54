package paths

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"unicode"

	"github.com/tmc/langchaingo/embeddings"
)

// Scorer rates how relevant each text (a path or a triple spelled as
// sentences) is to a question; higher is better. Scores are only
// comparable within one call, which lets a scorer normalise over the
// candidates it is given (BM25's document frequencies, the LLM's ranking).
type Scorer interface {
	Name() string
	Score(ctx context.Context, question string, texts []string) ([]float64, error)
}

// BM25 scores texts by Okapi BM25 against the question, treating the texts
// of one call as the collection: a relation word that every candidate path
// shares counts for little, one that sets a few apart counts for much.
// Words are lower-cased, stop words dropped and suffixes lightly stripped,
// so "directors" meets "directed_by" and "acted" meets "starred_actors"; a
// question word that is a compound of a text word matches it
// ("screenwriter" meets "written_by"); a word counts once per text, so a
// path does not score for repeating a relation.
type BM25 struct {
	K1, B float64 // 1.2 and 0.75 when zero
	// Flat turns length normalisation off (b = 0). For texts as short as
	// one triple a word more or less says nothing about relevance, yet it
	// would order relations that match the question equally, and a beam
	// that prunes by score would then drop some of them at random.
	Flat bool
}

// NewBM25 returns a BM25 scorer with the usual parameters.
func NewBM25() *BM25 { return &BM25{K1: 1.2, B: 0.75} }

// Name is "bm25".
func (*BM25) Name() string { return "bm25" }

// Score implements Scorer.
func (s *BM25) Score(ctx context.Context, question string, texts []string) ([]float64, error) {
	k1, b := s.K1, s.B
	if k1 == 0 {
		k1 = 1.2
	}
	if b == 0 {
		b = 0.75
	}
	if s.Flat {
		b = 0
	}
	query := uniqueTerms(terms(question))
	out := make([]float64, len(texts))
	if len(query) == 0 || len(texts) == 0 {
		return out, nil
	}
	inQuery := make(map[string]int, len(query))
	for i, q := range query {
		inQuery[q] = i
	}
	// A compound in the question matches its head word in a text:
	// "screenwriter" (screenwrit) matches "written by" (writ).
	for i, q := range query {
		for k := 1; len(q)-k >= minHead; k++ {
			if _, ok := inQuery[q[k:]]; !ok {
				inQuery[q[k:]] = i
			}
		}
	}
	// Only query terms matter, so count just those per text.
	tf := make([][]int32, len(texts))
	lengths := make([]int, len(texts))
	df := make([]int, len(query))
	var total int
	for i, t := range texts {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		counts := make([]int32, len(query))
		for _, w := range terms(t) {
			lengths[i]++
			if j, ok := inQuery[w]; ok && counts[j] == 0 {
				df[j]++
				counts[j] = 1
			}
		}
		tf[i] = counts
		total += lengths[i]
	}
	avg := float64(total) / float64(len(texts))
	if avg == 0 {
		return out, nil
	}
	n := float64(len(texts))
	idf := make([]float64, len(query))
	for j := range query {
		idf[j] = math.Log(1 + (n-float64(df[j])+0.5)/(float64(df[j])+0.5))
	}
	for i := range texts {
		norm := k1 * (1 - b + b*float64(lengths[i])/avg)
		for j, c := range tf[i] {
			if c > 0 {
				f := float64(c)
				out[i] += idf[j] * f * (k1 + 1) / (f + norm)
			}
		}
	}
	return out, nil
}

// minHead is the shortest head word a compound matches by (in bytes).
const minHead = 4

// Embedding scores texts by the cosine between their vectors and the
// question's, from any langchaingo embedder (docgraph's offline hashing
// embedder or a model). Vectors are cached, since a beam search and the
// refinement after it score the same paths again; the cache is dropped
// whole when it reaches its bound.
type Embedding struct {
	emb   embeddings.Embedder
	name  string
	bound int

	mu    sync.Mutex
	cache map[string][]float32
	query map[string][]float32
}

// NewEmbedding returns an embedding scorer; name identifies it in results.
func NewEmbedding(emb embeddings.Embedder, name string) *Embedding {
	return &Embedding{emb: emb, name: name, bound: 200_000, cache: map[string][]float32{}, query: map[string][]float32{}}
}

// Name is "emb" or the name given.
func (e *Embedding) Name() string {
	if e.name == "" {
		return "emb"
	}
	return e.name
}

// Score implements Scorer.
func (e *Embedding) Score(ctx context.Context, question string, texts []string) ([]float64, error) {
	e.mu.Lock()
	qv, ok := e.query[question]
	var missing []string
	seen := map[string]bool{}
	for _, t := range texts {
		if _, ok := e.cache[t]; !ok && !seen[t] {
			seen[t] = true
			missing = append(missing, t)
		}
	}
	e.mu.Unlock()
	if !ok {
		v, err := e.emb.EmbedQuery(ctx, question)
		if err != nil {
			return nil, fmt.Errorf("embedding scorer: embed question: %w", err)
		}
		qv = normalized(v)
	}
	var vecs [][]float32
	if len(missing) > 0 {
		var err error
		vecs, err = e.emb.EmbedDocuments(ctx, missing)
		if err != nil {
			return nil, fmt.Errorf("embedding scorer: embed %d paths: %w", len(missing), err)
		}
		if len(vecs) != len(missing) {
			return nil, fmt.Errorf("embedding scorer: %d vectors for %d paths", len(vecs), len(missing))
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.cache)+len(missing) > e.bound {
		clear(e.cache)
		clear(e.query)
	}
	e.query[question] = qv
	for i, t := range missing {
		e.cache[t] = normalized(vecs[i])
	}
	out := make([]float64, len(texts))
	for i, t := range texts {
		v := e.cache[t]
		if len(v) != len(qv) {
			return nil, fmt.Errorf("embedding scorer: path vector of dimension %d, question vector of %d", len(v), len(qv))
		}
		var dot float64
		for j := range v {
			dot += float64(v[j]) * float64(qv[j])
		}
		out[i] = dot
	}
	return out, nil
}

func normalized(v []float32) []float32 {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	out := make([]float32, len(v))
	if ss == 0 {
		return out
	}
	inv := 1 / math.Sqrt(ss)
	for i, x := range v {
		out[i] = float32(float64(x) * inv)
	}
	return out
}

// Random scores texts uniformly at random: LEGO-GraphRAG's reference
// refinement. The draw depends only on the question and the texts, so runs
// repeat.
type Random struct{}

// Name is "random".
func (Random) Name() string { return "random" }

// Score implements Scorer.
func (Random) Score(_ context.Context, question string, texts []string) ([]float64, error) {
	h := fnv.New64a()
	h.Write([]byte(question))
	rng := rand.New(rand.NewPCG(h.Sum64(), uint64(len(texts))))
	out := make([]float64, len(texts))
	for i := range out {
		out[i] = rng.Float64()
	}
	return out, nil
}

// terms splits text into lower-case, lightly stemmed content words.
func terms(text string) []string {
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	out := words[:0]
	for _, w := range words {
		if stopWords[w] {
			continue
		}
		out = append(out, stem(w))
	}
	return out
}

func uniqueTerms(ts []string) []string {
	seen := map[string]bool{}
	out := ts[:0:0]
	for _, t := range ts {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// stem strips one common English suffix (and a doubled final consonant it
// leaves, and a final e), enough to join the forms questions and relation
// names use: directed, director, directors -> direct; starred, starring,
// stars -> star; written, writer, write -> writ; genre, genres -> genr.
func stem(w string) string {
	if s, ok := irregular[w]; ok {
		return s
	}
	if len(w) <= 3 {
		return w
	}
	for _, suf := range []string{"ers", "ors", "ing", "ed", "er", "or", "en", "es", "s"} {
		if strings.HasSuffix(w, suf) && len(w)-len(suf) >= 3 {
			w = w[:len(w)-len(suf)]
			if n := len(w); suf != "s" && suf != "es" && n >= 4 && w[n-1] == w[n-2] && !strings.ContainsRune("aeioulsz", rune(w[n-1])) {
				w = w[:n-1]
			}
			break
		}
	}
	if n := len(w); n > 3 && w[n-1] == 'e' {
		w = w[:n-1]
	}
	return w
}

// irregular maps verb forms the suffix rules cannot reach to their stems.
var irregular = map[string]string{
	"wrote": "writ", "write": "writ", "writes": "writ", "written": "writ",
	"spoke": "speak", "spoken": "speak", "made": "mak", "make": "mak",
	"sang": "sing", "sung": "sing", "took": "tak", "taken": "tak",
	"gave": "giv", "given": "giv", "began": "begin", "begun": "begin",
	"led": "lead", "won": "win", "bought": "buy", "born": "bear",
}

// stopWords are function words and question words that carry no relation.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an the and or but if of in on at to for from by with without about into
		over under as is are was were be been being am do does did done has have had having it its
		this that these those there here who whom whose which what when where why how whatever
		i me my we our you your he him his she her they them their not no yes so than then too very
		can could will would shall should may might must also just only any some all each both
		other such same own more most much many few one ones s t`) {
		m[w] = true
	}
	return m
}()
