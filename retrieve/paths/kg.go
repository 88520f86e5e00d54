package paths

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"unicode"

	"github.com/docgraph/docgraph/graphbuild"
	"github.com/docgraph/docgraph/pipeline"
	"github.com/docgraph/docgraph/retrieve/graphalg"
	"github.com/docgraph/docgraph/store"
)

// KG is the knowledge graph held in memory for path retrieval: entities as
// nodes, typed relations as edges that keep their direction but can be
// walked both ways, in CSR form. It is built once (from a store or a triple
// file) and then read-only, safe for any number of concurrent queries.
type KG struct {
	multi *graphalg.MultiGraph
	und   *graphalg.Graph

	walkerOnce sync.Once
	walker     *graphalg.Walker
	pushers    sync.Pool // of *graphalg.Pusher, one per concurrent query

	ids   []string         // node -> entity id
	names []string         // node -> display name
	index map[string]int32 // entity id -> node
	key   func(string) string

	relIDs  []string // edge -> relation id
	relType []int32  // edge -> index into types
	types   []string
	words   []string // type index -> the relation spelled as words
	// keywords are an untyped (extracted) relation's keywords, edge-indexed,
	// "" for typed relations, whose type says what they are.
	keywords []string
}

// NumEntities is the number of nodes.
func (k *KG) NumEntities() int { return len(k.ids) }

// NumRelations is the number of edges.
func (k *KG) NumRelations() int { return len(k.relIDs) }

// Entity returns a node's entity id and name.
func (k *KG) Entity(node int) (id, name string) { return k.ids[node], k.names[node] }

// Node returns the node of an entity id.
func (k *KG) Node(id string) (int, bool) {
	n, ok := k.index[id]
	return int(n), ok
}

// Lookup returns the node an entity name refers to: by graphbuild.EntityID
// for graphs loaded from a store (so case and punctuation do not matter), by
// the exact name for graphs read WithExactNames.
func (k *KG) Lookup(name string) (int, bool) { return k.Node(k.key(name)) }

// Graph is the undirected weighted view (every relation both ways, weight
// 1) that PPR, RWR and ego networks walk.
func (k *KG) Graph() *graphalg.Graph { return k.und }

// MultiGraph is the typed view reasoning paths walk.
func (k *KG) MultiGraph() *graphalg.MultiGraph { return k.multi }

func (k *KG) walk() *graphalg.Walker {
	k.walkerOnce.Do(func() { k.walker = graphalg.NewWalker(k.und) })
	return k.walker
}

// kgBuilder accumulates nodes and edges in arrival order.
type kgBuilder struct {
	kg    *KG
	src   []int32
	dst   []int32
	types map[string]int32
}

func newKGBuilder(key func(string) string) *kgBuilder {
	return &kgBuilder{kg: &KG{index: map[string]int32{}, key: key}, types: map[string]int32{}}
}

func (b *kgBuilder) node(id, name string) int32 {
	if n, ok := b.kg.index[id]; ok {
		return n
	}
	n := int32(len(b.kg.ids))
	b.kg.index[id] = n
	b.kg.ids = append(b.kg.ids, id)
	b.kg.names = append(b.kg.names, name)
	return n
}

func (b *kgBuilder) edge(relID, typ, keywords string, u, v int32) {
	t, ok := b.types[typ]
	if !ok {
		t = int32(len(b.kg.types))
		b.types[typ] = t
		b.kg.types = append(b.kg.types, typ)
		words := pipeline.RelationWords(typ)
		if words == "" {
			words = "related to"
		}
		b.kg.words = append(b.kg.words, words)
	}
	if typ != "" {
		keywords = ""
	}
	b.kg.keywords = append(b.kg.keywords, keywords)
	b.kg.relIDs = append(b.kg.relIDs, relID)
	b.kg.relType = append(b.kg.relType, t)
	b.src = append(b.src, u)
	b.dst = append(b.dst, v)
}

func (b *kgBuilder) build() *KG {
	mb := graphalg.NewMultiBuilder(len(b.kg.ids))
	for i := range b.src {
		mb.AddEdge(int(b.src[i]), int(b.dst[i]))
	}
	b.kg.multi = mb.Build()
	b.kg.und = b.kg.multi.Undirected()
	und := b.kg.und
	b.kg.pushers.New = func() any { return graphalg.NewPusher(und) }
	return b.kg
}

// LoadKG reads a store's whole entity-relation graph into memory: entities
// become nodes in id order and relations edges in id order, so two loads of
// the same store give the same graph. Untyped (extracted) relations are
// walked as "related to".
func LoadKG(ctx context.Context, st store.KGScanner) (*KG, error) {
	b := newKGBuilder(graphbuild.EntityID)
	if err := st.ScanEntities(ctx, func(e store.Entity) error {
		b.node(e.ID, e.Name)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("load graph: %w", err)
	}
	if err := st.ScanRelations(ctx, func(r store.Relation) error {
		u, ok1 := b.kg.index[r.SourceID]
		v, ok2 := b.kg.index[r.TargetID]
		if !ok1 || !ok2 {
			// Written between the two scans: the next load sees it whole.
			return nil
		}
		b.edge(r.ID, r.Type, r.Keywords, u, v)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("load graph: %w", err)
	}
	return b.build(), nil
}

// ReadOption configures ReadTriples.
type ReadOption func(*readConfig)

type readConfig struct{ exact bool }

// WithExactNames keys entities by their exact names, as igraph's MetaQA
// baseline does, instead of by graphbuild.EntityID, which folds case and
// punctuation ("Danny DeVito" and the tag "danny devito" are one entity in
// a store and two here).
func WithExactNames() ReadOption { return func(c *readConfig) { c.exact = true } }

// ReadTriples builds a KG from subject|relation|object lines (the format
// `ingest --kg-triples` imports), without a store: nodes are numbered in
// order of first appearance, every line is an edge (repeated lines are
// parallel edges), and malformed lines are an error naming the line.
func ReadTriples(r io.Reader, opts ...ReadOption) (*KG, error) {
	var cfg readConfig
	for _, o := range opts {
		o(&cfg)
	}
	key := graphbuild.EntityID
	if cfg.exact {
		key = func(s string) string { return s }
	}
	b := newKGBuilder(key)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		t, ok := pipeline.ParseTriple(text)
		if !ok {
			return nil, fmt.Errorf("read triples: line %d: want subject|relation|object, got %q", line, text)
		}
		sk, objKey := key(t.Subject), key(t.Object)
		u, v := b.node(sk, t.Subject), b.node(objKey, t.Object)
		b.edge(graphbuild.RelationID(sk, objKey, t.Relation), t.Relation, "", u, v)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read triples: line %d: %w", line, err)
	}
	if len(b.src) == 0 {
		return nil, errors.New("read triples: no triples")
	}
	return b.build(), nil
}

// tripleText is what scorers read of one edge: a typed relation's words
// ("directed by"), with the names of its endpoints only when the question
// names them; an untyped (extracted) relation's two entity names. The
// other entities on a path are what the question does not name (answers,
// bridges), so matching the question's words against their names is noise:
// "movies" against "Scary Movie".
func (k *KG) tripleText(edge int, named map[int]bool) string {
	u, v := k.multi.Edge(edge)
	t := k.relType[edge]
	if k.types[t] == "" {
		if kw := k.keywords[edge]; kw != "" {
			return k.names[u] + " " + kw + " " + k.names[v]
		}
		return k.names[u] + " " + k.words[t] + " " + k.names[v]
	}
	text := k.words[t]
	if named[u] {
		text = k.names[u] + " " + text
	}
	if named[v] {
		text += " " + k.names[v]
	}
	return text
}

// relation returns an edge's relation id and type ("" for untyped).
func (k *KG) relation(edge int) (id, typ string) { return k.relIDs[edge], k.types[k.relType[edge]] }

// Link finds the entities a question names. Names in [brackets] (MetaQA's
// convention for the topic entity) win; otherwise the longest spans of up
// to eight words that name an entity, scanning left to right without
// overlaps, where a span must hold a word that starts with a capital or a
// digit and must not be only stop words.
func (k *KG) Link(question string) []int {
	var out []int
	seen := map[int]bool{}
	add := func(n int) {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	for rest := question; ; {
		i := strings.IndexByte(rest, '[')
		if i < 0 {
			break
		}
		j := strings.IndexByte(rest[i:], ']')
		if j < 0 {
			break
		}
		if n, ok := k.Lookup(strings.TrimSpace(rest[i+1 : i+j])); ok {
			add(n)
		}
		rest = rest[i+j+1:]
	}
	if len(out) > 0 {
		return out
	}
	words := strings.FieldsFunc(question, func(r rune) bool {
		return unicode.IsSpace(r) || r == '?' || r == ',' || r == ';' || r == '"' || r == '!' || r == '(' || r == ')'
	})
	const maxSpan = 8
	for i := 0; i < len(words); {
		matched := 0
		for n := min(maxSpan, len(words)-i); n >= 1; n-- {
			span := words[i : i+n]
			if !linkable(span) {
				continue
			}
			name := strings.TrimRight(strings.Join(span, " "), ".:")
			if node, ok := k.Lookup(name); ok {
				add(node)
				matched = n
				break
			}
		}
		i += max(matched, 1)
	}
	return out
}

func linkable(span []string) bool {
	capital, content := false, false
	for _, w := range span {
		r := []rune(w)
		if len(r) > 0 && (unicode.IsUpper(r[0]) || unicode.IsDigit(r[0])) {
			capital = true
		}
		if !stopWords[strings.ToLower(strings.Trim(w, ".:'"))] {
			content = true
		}
	}
	return capital && content
}
