package cjk

import (
	"reflect"
	"strings"
	"testing"
)

func TestIs(t *testing.T) {
	for _, c := range []struct {
		r    rune
		want bool
	}{
		{'中', true}, {'の', true}, {'カ', true}, {'ー', true}, {'한', true}, {'々', true},
		{'ｶ', true}, {'𠀋', true}, // half-width katakana, an extension-B ideograph
		{'a', false}, {'é', false}, {'Ж', false}, {'。', false}, {'，', false}, {'《', false}, {'１', false}, {' ', false},
	} {
		if got := Is(c.r); got != c.want {
			t.Errorf("Is(%q) = %v, want %v", c.r, got, c.want)
		}
	}
}

func TestTerms(t *testing.T) {
	for _, c := range []struct {
		text string
		want []string
	}{
		{"卢照邻对桂湖的描写？", []string{"卢照", "照邻", "邻对", "对桂", "桂湖", "湖的", "的描", "描写"}},
		{"Python的创始人 Guido", []string{"python", "的创", "创始", "始人", "guido"}},
		{"２０１４年进驻ＣＰＵ", []string{"2014", "年进", "进驻", "cpu"}},
		{"東京タワーは", []string{"東京", "京タ", "タワ", "ワー", "ーは"}},
		{"서울에서 살다", []string{"서울", "울에", "에서", "살다"}},
		{"茶", []string{"茶"}},
		{"《茶》和「水」", []string{"茶", "和", "水"}},
		{"葛\U000E0100城", []string{"葛城"}}, // a variation selector is no character
		{"Rhine's mouth, Zürich", []string{"rhine", "s", "mouth", "zürich"}},
		{"", nil},
	} {
		var got []string
		Terms(c.text, func(s string) { got = append(got, s) })
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("Terms(%q) = %q, want %q", c.text, got, c.want)
		}
	}
	if got := TermList("中国中国人"); !reflect.DeepEqual(got, []string{"中国", "国中", "国人"}) {
		t.Errorf("TermList repeats: %q", got)
	}
}

func TestIndexText(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"The Rhine flows north.", "The Rhine flows north."},
		{"莱茵河 flows", " 莱茵 茵河  flows"},
		{"2014年，ＣＰＵ。", "2014 年 ,CPU。"},
		{"Zürich", "Zürich"},
	} {
		if got := IndexText(c.in); got != c.want {
			t.Errorf("IndexText(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	// Every query term of a text is a word of its index text.
	text := "《战国无双3》是由光荣和ω-force开发的游戏，東京タワー와 서울"
	words := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(IndexText(text)), func(r rune) bool { return strings.ContainsRune(" 《》，、-", r) }) {
		words[w] = true
	}
	Terms(text, func(term string) {
		if !words[term] {
			t.Errorf("term %q of %q is not a word of its index text %q", term, text, IndexText(text))
		}
	})
}

func TestContains(t *testing.T) {
	if !Contains("a 中 b") || Contains("Zürich über Straße") || Contains("") {
		t.Error("Contains is wrong")
	}
}
