package storetest

import (
	"fmt"
	"testing"

	"github.com/docgraph/docgraph/ner"
)

// Documents in scripts written without spaces between words: full-text
// search must find them by their words, as it finds English ones.
func rice() docFx {
	return docFx{id: "doc-rice", path: "zh/rice.md", title: "稻花香2号", chunks: []chunkFx{
		{
			text: "稻花香2号是黑龙江省五常市选育的水稻品种，亲本为松粳9号。",
			ents: []ner.Entity{
				ent("稻花香2号", "work", "五常市选育的水稻品种。"),
				ent("松粳9号", "other", "稻花香2号的亲本。"),
				ent("五常市", "location", "黑龙江省的城市。"),
			},
			rels: []ner.Relation{rel("稻花香2号", "松粳9号", "亲本", "稻花香2号的亲本为松粳9号。", 1)},
		},
		{
			text: "Go语言由Robert Griesemer、Rob Pike和Ken Thompson于2007年在谷歌设计。",
			ents: []ner.Entity{ent("Ken Thompson", "person", "Go语言的设计者之一。"), ent("谷歌", "organization", "")},
		},
	}}
}

func tokyo() docFx {
	return docFx{id: "doc-tokyo", path: "ja/tokyo.md", title: "東京タワー", chunks: []chunkFx{
		{
			text: "東京タワーは東京都港区にある電波塔で、高さは333メートルです。",
			ents: []ner.Entity{ent("東京タワー", "location", "港区にある電波塔。")},
		},
		{
			text: "서울은 대한민국의 수도이며 한강이 도시를 가로지른다.",
			ents: []ner.Entity{ent("서울", "location", "대한민국의 수도.")},
		},
	}}
}

func (s suite) testTextSearchCJK(t *testing.T) {
	st, _ := s.fresh(t)
	ctx := ctxFor(t)
	r, k, p := rice().write(), tokyo().write(), ports().write()
	mustWrite(t, st, r, k, p)

	for _, c := range []struct {
		query string
		want  string
	}{
		{"稻花香2号的亲本是什么？", r.Chunks[0].ID},    // Chinese: the words are bigrams
		{"哪个品种由五常市选育", r.Chunks[0].ID},      // no query bigram crosses a word the text has
		{"Go语言的设计者", r.Chunks[1].ID},        // mixed script
		{"Thompson", r.Chunks[1].ID},        // a Latin word inside Chinese text
		{"東京タワーの高さ", k.Chunks[0].ID},        // kana and kanji
		{"서울의 강", k.Chunks[1].ID},           // hangul with particles attached
		{"container ports", p.Chunks[0].ID}, // English as before
		{"ＣＯＮＴＡＩＮＥＲ ports", p.Chunks[0].ID}, // full-width Latin
	} {
		hits, err := st.SearchChunksText(ctx, c.query, 3)
		if err != nil {
			t.Fatalf("SearchChunksText(%q): %v", c.query, err)
		}
		if len(hits) == 0 || hits[0].ID != c.want {
			t.Errorf("SearchChunksText(%q) = %v, want %s first", c.query, hitIDs(hits), c.want)
			continue
		}
		for i, h := range hits {
			if h.Score <= 0 || (i > 0 && h.Score > hits[i-1].Score) {
				t.Errorf("SearchChunksText(%q) scores %v: want positive and descending", c.query, hitScores(hits))
			}
		}
	}
	// A bigram the text does not have finds nothing: 松花 is not in 松粳.
	if hits, err := st.SearchChunksText(ctx, "松花", 5); err != nil || len(hits) != 0 {
		t.Errorf("SearchChunksText(松花) = %v, %v; want nothing", hitIDs(hits), err)
	}

	for _, c := range []struct{ query, want string }{
		{"稻花香", "稻花香2号"},
		{"松粳9号是谁的亲本", "松粳9号"},
		{"电波塔", "東京タワー"}, // simplified 电 does not match 電: no hit is fine, a wrong one is not
		{"대한민국의 수도", "서울"},
	} {
		hits, err := st.SearchEntitiesText(ctx, c.query, 5)
		if err != nil {
			t.Fatalf("SearchEntitiesText(%q): %v", c.query, err)
		}
		if c.query == "电波塔" {
			if len(hits) > 0 && hits[0].Name != c.want {
				t.Errorf("SearchEntitiesText(%q) finds %s first", c.query, hits[0].Name)
			}
			continue
		}
		if len(hits) == 0 || hits[0].Name != c.want {
			names := []string{}
			for _, h := range hits {
				names = append(names, fmt.Sprintf("%s=%.3f", h.Name, h.Score))
			}
			t.Errorf("SearchEntitiesText(%q) = %v, want %s first", c.query, names, c.want)
		}
	}

	// Deletes take CJK terms out of the index too.
	if err := st.DeleteDocument(ctx, r.Document.ID); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"稻花香", "Go语言", "Thompson"} {
		if hits, err := st.SearchChunksText(ctx, q, 5); err != nil || len(hits) != 0 {
			t.Errorf("after delete SearchChunksText(%q) = %v, %v", q, hitIDs(hits), err)
		}
	}
	if hits, err := st.SearchEntitiesText(ctx, "稻花香", 5); err != nil || len(hits) != 0 {
		t.Errorf("after delete SearchEntitiesText(稻花香) = %d hits, %v", len(hits), err)
	}
	if hits, err := st.SearchChunksText(ctx, "東京タワー", 5); err != nil || len(hits) != 1 {
		t.Errorf("after deleting another document SearchChunksText(東京タワー) = %v, %v; want its one chunk", hitIDs(hits), err)
	}
}
