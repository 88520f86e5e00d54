package splitter

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/pkoukk/tiktoken-go"
)

// reference is tiktoken-go's cl100k_base, whose tokens docgraph's own
// must reproduce exactly: stored chunks were cut and counted with it.
func reference(tb testing.TB) *tiktoken.Tiktoken {
	tb.Helper()
	enc, err := tiktoken.GetEncoding("cl100k_base")
	if err != nil {
		tb.Fatal(err)
	}
	return enc
}

// referenceEnds is tokenEnds as it was computed over tiktoken-go:
// decoding token by token.
func referenceEnds(enc *tiktoken.Tiktoken, s string) []int {
	if !utf8.ValidString(s) {
		return nil
	}
	var ends []int
	pos := 0
	for _, id := range enc.EncodeOrdinary(s) {
		pos += len(enc.Decode([]int{id}))
		ends = append(ends, pos)
	}
	if pos != len(s) {
		return nil
	}
	return ends
}

// sameTokens fails unless text gives the reference's tokens, count and
// token ends.
func sameTokens(t *testing.T, tok *Tokenizer, enc *tiktoken.Tiktoken, text string) {
	t.Helper()
	want := enc.EncodeOrdinary(text)
	if got := tok.encode(text); !slices.Equal(got, want) {
		t.Fatalf("tokens of %q:\n got %v\nwant %v", text, got, want)
	}
	if got := tok.Count(text); got != len(want) {
		t.Fatalf("Count(%q) = %d, want %d", text, got, len(want))
	}
	if got, want := tok.tokenEnds(text), referenceEnds(enc, text); !slices.Equal(got, want) {
		t.Fatalf("token ends of %q:\n got %v\nwant %v", text, got, want)
	}
	if ids := enc.EncodeOrdinary(text); tok.decode(ids) != enc.Decode(ids) {
		t.Fatalf("decode of %q differs", text)
	}
}

func TestCl100kMatchesTiktoken(t *testing.T) {
	tok, err := NewTokenizer("")
	if err != nil {
		t.Fatal(err)
	}
	if tok.cl == nil {
		t.Fatal("cl100k_base is not docgraph's own tokenizer")
	}
	enc := reference(t)
	for _, text := range []string{
		"", "a", " ", "  ", "\n", "\r\n", " \n ", "\n\n  word", "  123", "word  ", "word \t\n",
		"hello world", "Hello, World! It's a test.", "I'M HERE, YOU'RE THERE, WE'VE, THEY'LL, HE'D, IT'S, DON'T",
		"'s", "''s", "'second", "'Re", "'r", "'ll'll", "'", "l'", "rock'n'roll", "’s", "it’s",
		"12345678", "1 22 333 4444", "１２３４", "²³½ Ⅻ", "3.14159", "$1,000,000.00", "x1y22z333",
		"\u00a0word", "\u00a0\u00a0word", "\u3000全角", "word\u2028line", "\u0085x", "\v\fword", "\t\tword",
		" (word)", "((x))", " !!", "  !!\n\n", "...\r\n\r\n", "a\r\rb", " \r", "end.  ", "end.\n",
		"naïve café résumé", "e\u0301te\u0301", "नमस्ते दुनिया", "مرحبا بالعالم", "Привет, мир!", "こんにちは世界。",
		"稻花香2号是五常市选育的水稻品种", "한국어 텍스트", "👍🏽 emoji 🧑‍🤝‍🧑 family", "\u200bzero\u200dwidth",
		"<|endoftext|> special", "def f(x):\n    return x**2\n\n\n", "SELECT * FROM t WHERE a='b';",
		"\xff\xfe invalid", "ok\xc3 bad", "\xe2\x82", strings.Repeat("a", 300), strings.Repeat(" ", 70) + "x",
		strings.Repeat("ab ", 50), "antidisestablishmentarianism pneumonoultramicroscopicsilicovolcanoconiosis",
	} {
		sameTokens(t, tok, enc, text)
	}
}

// TestCl100kMatchesTiktokenRandom compares random strings drawn from
// characters of every class the pattern tells apart.
func TestCl100kMatchesTiktokenRandom(t *testing.T) {
	tok, err := NewTokenizer("")
	if err != nil {
		t.Fatal(err)
	}
	enc := reference(t)
	alphabet := []string{
		"a", "Z", "é", "ß", "ж", "ك", "中", "ア", "한", "ǅ", "ʰ", // letters, title case, modifier
		"0", "7", "٣", "²", "Ⅻ", "½", // numbers
		" ", " ", " ", "\t", "\n", "\r", "\v", "\f", "\u00a0", "\u3000", "\u2028", "\u0085", "\u200b", // white space and not
		"'", "'", "’", ".", ",", "!", "(", ")", "-", "_", "$", "<", "|", // punctuation
		"s", "t", "re", "ve", "m", "ll", "d", "S", "RE", "Ll", // contraction tails
		"\u0301", "\u093f", "👍", "\u200d", "\ufe0f", "\xff", "\xc3", // marks, emoji, invalid bytes
	}
	r := rand.New(rand.NewPCG(21, 1))
	n := 20000
	if testing.Short() {
		n = 2000
	}
	for range n {
		var b strings.Builder
		for k := r.IntN(24); k > 0; k-- {
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		sameTokens(t, tok, enc, b.String())
	}
}

// TestCl100kMatchesTiktokenOnCorpora compares whole documents: the
// repository's corpus, and the shared books when present.
func TestCl100kMatchesTiktokenOnCorpora(t *testing.T) {
	tok, err := NewTokenizer("")
	if err != nil {
		t.Fatal(err)
	}
	enc := reference(t)
	paths, _ := filepath.Glob("../testdata/corpus/*/*")
	if !testing.Short() {
		paths = append(paths, sharedDocs(t)...)
	}
	if len(paths) == 0 {
		t.Fatal("no corpus found")
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		want := enc.EncodeOrdinary(text)
		if got := tok.encode(text); !slices.Equal(got, want) {
			i := 0
			for i < min(len(got), len(want)) && got[i] == want[i] {
				i++
			}
			t.Fatalf("%s: tokens differ from token %d (%d vs %d tokens)", p, i, len(got), len(want))
		}
		if got := tok.Count(text); got != len(want) {
			t.Fatalf("%s: Count = %d, want %d", p, got, len(want))
		}
	}
}

func FuzzCl100k(f *testing.F) {
	for _, s := range []string{"Hello, World! It's 2024.", " \n\n  x", "'S'll", "\xff", "稻花香2号"} {
		f.Add(s)
	}
	tok, err := NewTokenizer("")
	if err != nil {
		f.Fatal(err)
	}
	enc := reference(f)
	f.Fuzz(func(t *testing.T, text string) {
		sameTokens(t, tok, enc, text)
	})
}
