package embedstore

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"testing"
)

func TestHashVectorsAreUnitLengthAndDeterministic(t *testing.T) {
	h := NewHash(WithDimension(64))
	for _, text := range []string{"Lothair II married Teutberga", "", "。！？", "a a a a", "洛泰尔二世"} {
		v1, v2 := h.Vector(text), h.Vector(text)
		if len(v1) != 64 {
			t.Fatalf("dimension %d, want 64", len(v1))
		}
		var n float64
		for i := range v1 {
			if v1[i] != v2[i] {
				t.Fatalf("%q: not deterministic", text)
			}
			n += float64(v1[i]) * float64(v1[i])
		}
		if text != "" && text != "。！？" && math.Abs(n-1) > 1e-5 {
			t.Errorf("%q: norm² %f, want 1", text, n)
		}
	}
}

func TestHashSimilarityFollowsLexicalOverlap(t *testing.T) {
	h := NewHash()
	q := h.Vector("Who directed the film Won In The Clouds?")
	tests := []struct {
		near, far string
	}{
		{"Won in the Clouds is a 1928 film directed by Bruce Mitchell.", "Teutberga was a queen of Lotharingia."},
		{"The directors of the clouds film", "A recipe for bread and butter"},
		{"film directing", "queen marriage"}, // trigrams: directed ~ directing
	}
	for _, tc := range tests {
		near, far := Cosine(q, h.Vector(tc.near)), Cosine(q, h.Vector(tc.far))
		if near <= far {
			t.Errorf("cos(q, %q)=%.3f <= cos(q, %q)=%.3f", tc.near, near, tc.far, far)
		}
	}
}

func TestHashStopWordsWeighLess(t *testing.T) {
	h := NewHash()
	q := h.Vector("the history of the Roman empire")
	content := Cosine(q, h.Vector("Roman empire history"))
	function := Cosine(q, h.Vector("the of the"))
	if content <= function {
		t.Fatalf("content words %.3f should outweigh function words %.3f", content, function)
	}
}

func TestCosine(t *testing.T) {
	tests := []struct {
		name string
		a, b []float32
		want float64
	}{
		{"same direction", []float32{1, 2}, []float32{2, 4}, 1},
		{"orthogonal", []float32{1, 0}, []float32{0, 3}, 0},
		{"opposite", []float32{1, 1}, []float32{-1, -1}, -1},
		{"zero vector", []float32{0, 0}, []float32{1, 1}, 0},
		{"shorter first", []float32{1, 0}, []float32{1, 0, 0}, 0},
		{"longer first", []float32{1, 0, 0}, []float32{1, 0}, 0},
		{"one empty", nil, []float32{1}, 0},
	}
	for _, tc := range tests {
		if got := Cosine(tc.a, tc.b); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s: Cosine(%v, %v) = %v, want %v", tc.name, tc.a, tc.b, got, tc.want)
		}
	}
}

func TestEmbedDocumentsBatchesAndHonoursContext(t *testing.T) {
	h := NewHash(WithDimension(8))
	vecs, err := h.EmbedDocuments(context.Background(), []string{"a b", "c d", "e"})
	if err != nil || len(vecs) != 3 {
		t.Fatalf("got %d vectors, err %v", len(vecs), err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := h.EmbedDocuments(ctx, []string{"x"}); err == nil {
		t.Fatal("cancelled context: want error")
	}
	var _ Embedder = h
}

func BenchmarkHashVector(b *testing.B) {
	h := NewHash()
	text := "Teutberga (died 11 November 875) was a queen of Lotharingia by marriage to Lothair II. She was a daughter of Bosonid Boso the Elder and sister of Hucbert, the lay-abbot of St. Maurice's Abbey. "
	for len(text) < 4096 {
		text += text
	}
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		h.Vector(text)
	}
}

// TestHashCJK: without spaces, shared character bigrams are what makes a
// Chinese question near its passage; before character n-grams a question
// and an unrelated passage that shared common characters scored alike.
func TestHashCJK(t *testing.T) {
	h := NewHash()
	q := h.Vector("稻花香2号的亲本是哪个品种？")
	for _, tc := range []struct{ near, far string }{
		{"稻花香2号是五常市选育的水稻品种，亲本为松粳9号。", "赵鹏是中国足球运动员，司职后卫，是国家队的一员。"},
		{"稻花香", "香花稻"}, // order matters: bigrams, not a bag of characters
		{"東京タワーの高さ", "京都の高い塔"},
	} {
		qv := q
		if tc.near == "東京タワーの高さ" {
			qv = h.Vector("東京タワーは高さ333メートル")
		}
		near, far := Cosine(qv, h.Vector(tc.near)), Cosine(qv, h.Vector(tc.far))
		if near <= far {
			t.Errorf("cos(q, %q)=%.3f <= cos(q, %q)=%.3f", tc.near, near, tc.far, far)
		}
	}
	// Full-width digits and letters fold: ２号 is 2号.
	if c := Cosine(h.Vector("稻花香２号"), h.Vector("稻花香2号")); c < 0.999 {
		t.Errorf("full-width form: cosine %.3f, want 1", c)
	}
	// Latin text embeds as before: CJK handling does not touch it.
	if c := Cosine(h.Vector("Lothair II married Teutberga"), h.Vector("Lothair II married Teutberga 。")); c < 0.999 {
		t.Errorf("punctuation changed a Latin vector: %.3f", c)
	}
}

// Version 1 must give the vectors it gave before version 2 existed, bit for
// bit, or the stores it made could not be searched; the digests were taken
// with the version 1 code.
func TestHashVersion1VectorsUnchanged(t *testing.T) {
	v1 := NewHash(WithDimension(64), WithVersion(1))
	v2 := NewHash(WithDimension(64))
	if v1.Name() != "hash-v1" || v2.Name() != "hash-v2" {
		t.Fatalf("names %s, %s", v1.Name(), v2.Name())
	}
	for text, want := range map[string]string{
		"松粳9号是黑龙江省的水稻品种。Ada Lovelace (1815) wrote about the Analytical Engine.": "3ce52a5f80fc9eeac3477797d35cad4e22a724187146f8acd201ef4e67becf8f",
		"한국어 텍스트와 日本語のテキスト":                                                     "58f7fa2aa4a8fd4f16aa294119e65640aea21b04f87cecde842f34475c66a5f9",
	} {
		v := v1.Vector(text)
		b := make([]byte, 4*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
		}
		if got := fmt.Sprintf("%x", sha256.Sum256(b)); got != want {
			t.Errorf("hash-v1 vector of %q changed: digest %s, want %s", text, got, want)
		}
		if slices.Equal(v, v2.Vector(text)) {
			t.Errorf("hash-v2 embeds %q like hash-v1, without its CJK n-grams", text)
		}
	}
	english := "Ada Lovelace wrote about the Analytical Engine."
	if !slices.Equal(v1.Vector(english), v2.Vector(english)) {
		t.Error("the versions differ on text without CJK")
	}
}

// BenchmarkHashVectorShort embeds texts the size of the merged entities'
// and relations' (a name and a line of description), which the store
// embeds by the hundred thousand.
func BenchmarkHashVectorShort(b *testing.B) {
	h := NewHash()
	texts := []string{
		"Lothair II\nLothair II was a king of Lotharingia.",
		"married, queen\nTeutberga was a queen of Lotharingia by marriage to Lothair II.",
		"St. Maurice's Abbey\nthe lay-abbot of St. Maurice's Abbey",
	}
	for b.Loop() {
		for _, t := range texts {
			h.Vector(t)
		}
	}
}
