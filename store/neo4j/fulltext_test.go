package neo4j

import (
	"testing"

	n4j "github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/docgraph/docgraph/store/storetest"
)

// Test-only statements: full-text indexes as docgraph made them before it
// searched CJK text (english analyzer), and a direct index query.
const (
	testEnglishChunkText = "CREATE FULLTEXT INDEX docgraph_chunk_text FOR (c:Chunk) ON EACH [c.text] " +
		"OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}}"
	testEnglishEntityText = "CREATE FULLTEXT INDEX docgraph_entity_text FOR (e:Entity) ON EACH [e.name, e.description] " +
		"OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}}"
	testAwaitIndexes   = `CALL db.awaitIndexes(300)`
	testQueryChunkText = `CALL db.index.fulltext.queryNodes('docgraph_chunk_text', $q) YIELD node RETURN node.id AS id`
)

// TestFullTextAnalyzerRebuild opens a database whose full-text indexes an
// earlier docgraph made with the english analyzer: Open rebuilds them with
// the cjk analyzer, and text written before is then found by its bigrams.
func TestFullTextAnalyzerRebuild(t *testing.T) {
	ts := newTestServer(t)
	db := ts.database(t)
	ctx := testCtx(t)
	st, err := ts.open(t, db, storetest.Options())
	if err != nil {
		t.Fatal(err)
	}
	w := offlineWrite(t, storetest.Embedder(), "d-rice", "稻花香2号", "稻花香2号是五常市选育的水稻品种，亲本为松粳9号。")
	if err := st.WriteDocument(ctx, w); err != nil {
		t.Fatal(err)
	}
	st.Close()
	for _, stmt := range []string{stmtDropChunkTextIndex, stmtDropEntityTextIndex, testEnglishChunkText, testEnglishEntityText, testAwaitIndexes} {
		if _, err := ts.run(ctx, db, stmt, nil); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	// english reads Chinese one character at a time: 本亲, which the text
	// does not have, matches by its characters.
	if recs, err := ts.run(ctx, db, testQueryChunkText, map[string]any{"q": "本亲"}); err != nil || len(recs) != 1 {
		t.Fatalf("the english index should find 本亲 by its characters: %d hits, %v", len(recs), err)
	}

	st, err = ts.open(t, db, storetest.Options())
	if err != nil {
		t.Fatalf("open over english full-text indexes: %v", err)
	}
	defer st.Close()
	sess := autoCommit{st.session(ctx, n4j.AccessModeRead)}
	existing, err := st.listSearchIndexes(ctx, sess)
	sess.sess.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range existing {
		if (x.name == idxChunkText || x.name == idxEntityText) && x.analyzer != textAnalyzer {
			t.Errorf("index %s has analyzer %q after open, want %q", x.name, x.analyzer, textAnalyzer)
		}
	}
	if recs, err := ts.run(ctx, db, testQueryChunkText, map[string]any{"q": "本亲"}); err != nil || len(recs) != 0 {
		t.Errorf("the rebuilt index still matches 本亲 by its characters: %d hits, %v", len(recs), err)
	}
	hits, err := st.SearchChunksText(ctx, "稻花香的亲本是什么", 5)
	if err != nil || len(hits) != 1 || hits[0].DocID != "d-rice" {
		t.Errorf("SearchChunksText after the rebuild = %v, %v; want the chunk written before it", hits, err)
	}
	ents, err := st.SearchEntitiesText(ctx, "松粳9号", 5)
	if err != nil || len(ents) == 0 {
		t.Errorf("SearchEntitiesText after the rebuild = %v, %v", ents, err)
	}
}
