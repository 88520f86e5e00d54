package retrieve

import (
	"slices"
	"testing"

	"github.com/docgraph/docgraph/graphbuild"
	"github.com/docgraph/docgraph/store"
)

func TestNameIDs(t *testing.T) {
	ids := nameIDs([]string{"刘燕卿授予", "武藏浦和站可分", "城巴12M线", "Lothair II"})
	for _, want := range []string{"刘燕卿授予", "刘燕卿", "武藏浦和站", "城巴12M线", "Lothair II"} {
		if !slices.Contains(ids, graphbuild.EntityID(want)) {
			t.Errorf("nameIDs lacks %s", want)
		}
	}
	for _, bad := range []string{"刘燕", "授予", "城巴1", "2M线", "Lothair", "II"} {
		if slices.Contains(ids, graphbuild.EntityID(bad)) {
			t.Errorf("nameIDs looks up %s: a two-character part, or a part cutting a number or word", bad)
		}
	}
}

func TestLongestNamed(t *testing.T) {
	ents := []store.Entity{{ID: "a", Name: "拉迪氏苦味银汉鱼"}, {ID: "b", Name: "银汉鱼"}, {ID: "c", Name: "虹膜"}, {ID: "d", Name: "Lothair"}, {ID: "e", Name: "Lothair II"}}
	var got []string
	for _, e := range longestNamed(ents) {
		got = append(got, e.ID)
	}
	if !slices.Equal(got, []string{"a", "c", "d", "e"}) {
		t.Errorf("longestNamed kept %v; want the CJK name inside a longer one dropped, Latin names left alone", got)
	}
}
