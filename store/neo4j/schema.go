package neo4j

import (
	"context"
	"fmt"
	"strings"

	n4j "github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/docgraph/docgraph/store"
)

func (s *Store) serverInfo(ctx context.Context) (serverInfo, error) {
	var info serverInfo
	err := s.read(ctx, "server version", func(tx n4j.ManagedTransaction) error {
		recs, err := collect(ctx, tx, stmtServerInfo, nil)
		if err != nil {
			return err
		}
		for _, r := range recs {
			if recordString(r, "name") == "Neo4j Kernel" || info.Version == "" {
				info.Version = recordString(r, "version")
				info.Edition = recordString(r, "edition")
			}
		}
		return nil
	})
	return info, err
}

// checkEmbedder compares the embedder recorded in the (:DocgraphMeta) node
// with the one the store is opened with: a store opened without one adopts
// the recorded one, another one is refused. It writes nothing.
func (s *Store) checkEmbedder(ctx context.Context) (recorded bool, err error) {
	held, found, err := s.meta(ctx, stmtReadMeta, map[string]any{"key": metaEmbedderKey})
	if err != nil {
		return false, err
	}
	return found, s.compareEmbedder(held, found)
}

// recordEmbedder stores the embedder in an empty store's meta node. MERGE
// keeps the first one recorded, so of two opens racing with different
// embedders one is refused here.
func (s *Store) recordEmbedder(ctx context.Context) error {
	held, found, err := s.meta(ctx, stmtWriteMeta, map[string]any{
		"key": metaEmbedderKey, "name": s.emb.Name, "dimension": int64(s.emb.Dimension)})
	if err != nil {
		return err
	}
	return s.compareEmbedder(held, found)
}

func (s *Store) meta(ctx context.Context, stmt statement, params map[string]any) (store.EmbedderInfo, bool, error) {
	var held store.EmbedderInfo
	var found bool
	err := s.write(ctx, "embedder", func(tx runner) error {
		recs, err := collect(ctx, tx, stmt, params)
		if err != nil {
			return err
		}
		found = len(recs) > 0
		if found {
			held = store.EmbedderInfo{Name: recordString(recs[0], "name"), Dimension: int(recordInt(recs[0], "dimension"))}
		}
		return nil
	})
	return held, found, err
}

func (s *Store) compareEmbedder(held store.EmbedderInfo, found bool) error {
	switch {
	case !found:
	case s.emb == (store.EmbedderInfo{}):
		s.emb = held
	case s.emb != held:
		return s.fail("open", fmt.Errorf("the database %w", &store.EmbedderMismatchError{Held: held, Want: s.emb, Instead: "use another database (--neo4j-database)"}))
	}
	return nil
}

// searchIndex is one vector or full-text index docgraph queries.
type searchIndex struct {
	kind       string // VECTOR or FULLTEXT
	entity     string // NODE or RELATIONSHIP
	token      string // label or relationship type
	properties []string
	create     statement // vector index DDL takes $dimension
	name       string    // the name queries use: ours, or an equivalent index's
	analyzer   string    // full-text indexes: the analyzer create gives them
	drop       statement // full-text indexes: drops ours for a rebuild
}

// searchIndexes lists the indexes this server and embedder get.
func (s *Store) searchIndexes() []*searchIndex {
	idx := []*searchIndex{
		{kind: "FULLTEXT", entity: "NODE", token: "Chunk", properties: []string{"text"}, create: stmtChunkTextIndex, name: idxChunkText,
			analyzer: textAnalyzer, drop: stmtDropChunkTextIndex},
		{kind: "FULLTEXT", entity: "NODE", token: "Entity", properties: []string{"name", "description"}, create: stmtEntityTextIndex, name: idxEntityText,
			analyzer: textAnalyzer, drop: stmtDropEntityTextIndex},
	}
	if s.emb.Dimension == 0 {
		return idx
	}
	var chunk, entity, relates statement = stmtChunkVectorIndex, stmtEntityVectorIndex, stmtRelatesVectorIndex
	if s.hnswConfig {
		chunk, entity, relates = stmtChunkVectorIndexHNSW, stmtEntityVectorIndexHNSW, stmtRelatesVectorIndexHNSW
	}
	idx = append(idx,
		&searchIndex{kind: "VECTOR", entity: "NODE", token: "Chunk", properties: []string{"embedding"}, create: chunk, name: idxChunkVector},
		&searchIndex{kind: "VECTOR", entity: "NODE", token: "Entity", properties: []string{"embedding"}, create: entity, name: idxEntityVector},
	)
	if s.relVector {
		idx = append(idx, &searchIndex{kind: "VECTOR", entity: "RELATIONSHIP", token: "RELATES", properties: []string{"embedding"}, create: relates, name: idxRelatesVector})
	}
	return idx
}

// ensureConstraints creates the uniqueness constraints and range indexes.
func (s *Store) ensureConstraints(ctx context.Context) error {
	sess := s.session(ctx, n4j.AccessModeWrite)
	defer sess.Close(context.WithoutCancel(ctx))
	for _, stmt := range schemaStatements {
		if err := exec(ctx, autoCommit{sess}, stmt, nil); err != nil {
			return s.fail("create schema", err)
		}
	}
	return nil
}

// ensureSearchIndexes creates the vector and full-text indexes (IF NOT
// EXISTS) and waits for them to come online. An existing vector index on a
// docgraph property with another dimension is an error that says how to get
// out of it; an equivalent index under another name is used under that
// name, because IF NOT EXISTS creates nothing when the schema is indexed.
func (s *Store) ensureSearchIndexes(ctx context.Context) error {
	sess := s.session(ctx, n4j.AccessModeWrite)
	defer sess.Close(context.WithoutCancel(ctx))
	auto := autoCommit{sess}
	want := s.searchIndexes()
	existing, err := s.listSearchIndexes(ctx, auto)
	if err != nil {
		return err
	}
	if err := dimensionConflict(existing, want, s.emb); err != nil {
		return s.fail("open", err)
	}
	rebuild, err := analyzerConflict(existing, want)
	if err != nil {
		return s.fail("open", err)
	}
	for _, w := range rebuild {
		// A full-text index is derived from the nodes' properties, so
		// dropping it loses nothing: the create below repopulates it.
		if err := exec(ctx, auto, w.drop, nil); err != nil {
			return s.fail("drop index "+w.name+" to rebuild it", err)
		}
	}
	for _, w := range want {
		var params map[string]any
		if w.kind == "VECTOR" {
			if err := validDimension(s.emb.Dimension); err != nil {
				return s.fail("create index "+w.name, err)
			}
			params = s.vectorIndexParams()
		}
		if err := exec(ctx, auto, w.create, params); err != nil {
			return s.fail("create index "+w.name, err)
		}
	}
	if existing, err = s.listSearchIndexes(ctx, auto); err != nil {
		return err
	}
	resolveNames(existing, want)
	s.indexes = map[string]string{}
	for _, w := range want {
		s.indexes[w.kind+" "+w.token] = w.name
		// Queries on an index still populating fail, so wait for each.
		err := exec(ctx, auto, stmtAwaitIndex, map[string]any{"name": w.name, "seconds": int64(indexWait.Seconds())})
		if err != nil {
			return s.fail("wait for index "+w.name, err)
		}
	}
	return nil
}

// vectorIndexParams are the parameters of the vector index DDL.
func (s *Store) vectorIndexParams() map[string]any {
	p := map[string]any{"dimension": int64(s.emb.Dimension)}
	if s.hnswConfig {
		p["m"], p["ef_construction"], p["quantization"] = int64(hnswM), int64(hnswEfConstruction), hnswQuantization
	}
	return p
}

// indexName is the name of the index of a kind on a label or type, or ""
// when there is none (queries then scan).
func (s *Store) indexName(kind, token string) string { return s.indexes[kind+" "+token] }

// autoCommit runs statements outside explicit transactions, as schema
// commands must be.
type autoCommit struct{ sess n4j.SessionWithContext }

func (a autoCommit) Run(ctx context.Context, cypher string, params map[string]any) (n4j.ResultWithContext, error) {
	return a.sess.Run(ctx, cypher, params)
}

// existingIndex is one row of SHOW INDEXES.
type existingIndex struct {
	name, kind, entity string
	tokens             []string
	properties         []string
	dimension          int
	similarity         string
	analyzer           string // full-text indexes
}

func (s *Store) listSearchIndexes(ctx context.Context, r runner) ([]existingIndex, error) {
	recs, err := collect(ctx, r, stmtSearchIndexes, nil)
	if err != nil {
		return nil, s.fail("list indexes", err)
	}
	out := make([]existingIndex, 0, len(recs))
	for _, rec := range recs {
		out = append(out, parseIndex(rec))
	}
	return out, nil
}

func parseIndex(rec *n4j.Record) existingIndex {
	x := existingIndex{
		name:       recordString(rec, "name"),
		kind:       recordString(rec, "type"),
		entity:     recordString(rec, "entityType"),
		tokens:     stringList(rec, "labelsOrTypes"),
		properties: stringList(rec, "properties"),
	}
	if cfg, ok := recordMap(rec, "options")["indexConfig"].(map[string]any); ok {
		x.dimension = int(integer(cfg, "vector.dimensions"))
		x.similarity = strings.ToLower(str(cfg, "vector.similarity_function"))
		x.analyzer = strings.ToLower(str(cfg, "fulltext.analyzer"))
	}
	return x
}

func stringList(rec *n4j.Record, key string) []string {
	v, _ := rec.Get(key)
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, x := range list {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// covers reports whether an existing index indexes what w needs.
func (x existingIndex) covers(w *searchIndex) bool {
	if x.kind != w.kind || x.entity != w.entity || len(x.tokens) != 1 || x.tokens[0] != w.token {
		return false
	}
	if len(x.properties) != len(w.properties) {
		return false
	}
	for i := range x.properties {
		if x.properties[i] != w.properties[i] {
			return false
		}
	}
	return true
}

// dimensionConflict finds a vector index on a property docgraph indexes
// (or with a docgraph index name) whose dimension or similarity differs from
// what the embedder needs: IF NOT EXISTS would silently keep it, and every
// later vector query would fail or rank wrongly.
func dimensionConflict(existing []existingIndex, want []*searchIndex, emb store.EmbedderInfo) error {
	for _, x := range existing {
		for _, w := range want {
			if w.kind != "VECTOR" || (!x.covers(w) && x.name != w.name) {
				continue
			}
			// An index without a dimension (allowed on recent servers)
			// takes vectors of any length.
			if x.kind == w.kind && (x.dimension == emb.Dimension || x.dimension == 0) && (x.similarity == "" || x.similarity == "cosine") {
				continue
			}
			pattern := "(:" + w.token + ")"
			if w.entity == "RELATIONSHIP" {
				pattern = "()-[:" + w.token + "]-()"
			}
			what := fmt.Sprintf("%d dimensions", x.dimension)
			if x.dimension == emb.Dimension {
				what = x.similarity + " similarity, not cosine"
			}
			return fmt.Errorf("index %s on %s.embedding has %s but embedder %s makes %d-dimensional vectors compared by cosine: drop it (DROP INDEX %s) and re-ingest, or use another database (--neo4j-database): %w",
				x.name, pattern, what, emb.Name, emb.Dimension, quoteName(x.name), store.ErrEmbedderMismatch)
		}
	}
	return nil
}

// analyzerConflict checks the full-text indexes on what docgraph indexes
// against the analyzer it needs. Its own (by name) with another analyzer,
// as an earlier docgraph made them, are returned to be dropped and
// rebuilt; someone else's on the same label and properties is an error
// saying what to do, since IF NOT EXISTS would keep it and search would
// tokenize queries unlike the text.
func analyzerConflict(existing []existingIndex, want []*searchIndex) ([]*searchIndex, error) {
	var rebuild []*searchIndex
	for _, w := range want {
		if w.kind != "FULLTEXT" {
			continue
		}
		for _, x := range existing {
			if x.kind != "FULLTEXT" || x.analyzer == w.analyzer || (x.name != w.name && !x.covers(w)) {
				continue
			}
			if x.name == w.name {
				rebuild = append(rebuild, w)
				break
			}
			return nil, fmt.Errorf("full-text index %s on (:%s).%s uses analyzer %q, docgraph needs %q (words, and CJK text as bigrams): drop it (DROP INDEX %s) and open the store again, which builds docgraph's own from the stored text",
				x.name, w.token, strings.Join(w.properties, ", ."), x.analyzer, w.analyzer, quoteName(x.name))
		}
	}
	return rebuild, nil
}

// resolveNames points each wanted index at the index that serves it: the
// one with our name, else an equivalent one.
func resolveNames(existing []existingIndex, want []*searchIndex) {
	for _, w := range want {
		var alt string
		own := false
		for _, x := range existing {
			if !x.covers(w) {
				continue
			}
			if x.name == w.name {
				own = true
				break
			}
			if alt == "" {
				alt = x.name
			}
		}
		if !own && alt != "" {
			w.name = alt
		}
	}
}

// quoteName backtick-quotes an index name for the advice in an error message.
func quoteName(name string) string {
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}
