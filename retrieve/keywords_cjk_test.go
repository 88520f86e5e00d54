package retrieve_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/docgraph/docgraph/ner"
	"github.com/docgraph/docgraph/retrieve"
)

// TestOfflineKeywordsCJK: a question in a language without spaces is cut
// into its terms, not kept whole.
func TestOfflineKeywordsCJK(t *testing.T) {
	for _, c := range []struct {
		question  string
		low, high []string
	}{
		{"稻花香2号的亲本是哪个品种？", []string{"稻花香2号", "亲本"}, []string{"稻花香2号", "亲本"}},
		{"卢照邻对桂湖的描写可以在什么书中看见？", []string{"卢照邻", "桂湖", "描写"}, []string{"卢照邻", "桂湖"}},
		{"派西·卫斯理是哪个作家笔下的人物？", []string{"派西·卫斯理"}, []string{"派西", "卫斯理"}},
		{"東京タワーの高さは何メートルですか", []string{"東京タワー"}, []string{"東京タワー"}},
		{"城巴12M线是什么时候开办的？", []string{"城巴12M线"}, nil},
		{"零食物语2007年先后获得哪些殊荣？", []string{"零食物语", "2007年"}, nil},
		{"武藏浦和站可分为几个部分？", []string{"武藏浦", "武藏浦和站可分"}, nil}, // 和 also sits inside names
		{"서울의 인구는 몇 명입니까?", []string{"서울", "인구"}, []string{"서울", "인구"}},
		{"Go语言是谁设计的？", []string{"Go", "语言", "设计"}, []string{"Go", "语言"}},
	} {
		kw := retrieve.OfflineKeywords(ner.NewOffline(), c.question)
		for _, w := range c.low {
			if !slices.Contains(kw.Low, w) {
				t.Errorf("%s: low-level keywords %q lack %q", c.question, kw.Low, w)
			}
		}
		for _, w := range c.high {
			if !slices.Contains(kw.High, w) {
				t.Errorf("%s: high-level keywords %q lack %q", c.question, kw.High, w)
			}
		}
		for _, w := range append(kw.Low, kw.High...) {
			if strings.ContainsAny(w, "？?") || strings.Contains(w, "是哪") || strings.Contains(w, "什么") || w == strings.TrimRight(c.question, "？?") {
				t.Errorf("%s: keyword %q keeps question words or the whole question", c.question, w)
			}
			// What the question asks for is no keyword: 品种 in 哪个品种.
			if w == "品种" || w == "メートル" {
				t.Errorf("%s: keyword %q is what is asked for", c.question, w)
			}
		}
	}
}
