package splitter

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// overlapSlack is how many tokens the shared region of two consecutive
// chunks may exceed the configured overlap by. It is zero: the splitter
// confirms each overlap with a real count of exactly the region the two
// trimmed chunks share, so the bound is hard, not approximate.
const overlapSlack = 0

// checkChunks asserts the invariants every Split result must hold.
func checkChunks(t testing.TB, s *Splitter, docID, text string, chunks []Chunk) {
	t.Helper()
	if strings.TrimSpace(text) == "" && len(chunks) != 0 {
		t.Fatalf("whitespace-only text gave %d chunks", len(chunks))
	}
	covered := make([]bool, len(text))
	for k, c := range chunks {
		if c.Index != k {
			t.Fatalf("chunk %d has Index %d", k, c.Index)
		}
		if c.DocID != docID {
			t.Fatalf("chunk %d has DocID %q, want %q", k, c.DocID, docID)
		}
		if c.Start < 0 || c.End > len(text) || c.Start >= c.End {
			t.Fatalf("chunk %d has bad range [%d,%d) in text of %d bytes", k, c.Start, c.End, len(text))
		}
		if text[c.Start:c.End] != c.Text {
			t.Fatalf("chunk %d: Text is not text[%d:%d]", k, c.Start, c.End)
		}
		if snapBack(text, c.Start) != c.Start || snapBack(text, c.End) != c.End {
			t.Fatalf("chunk %d [%d,%d) cuts a UTF-8 character", k, c.Start, c.End)
		}
		// Once a chunk holds any cluster whole, none is cut; trimming white
		// space off a mark that follows it (a defective sequence) is allowed.
		for _, p := range []int{c.Start, c.End} {
			prev, _ := utf8.DecodeLastRuneInString(text[:p])
			next, _ := utf8.DecodeRuneInString(text[p:])
			if s.size >= maxCluster && !clusterBoundary(text, p) && !unicode.IsSpace(prev) && !unicode.IsSpace(next) {
				t.Fatalf("chunk %d [%d,%d) cuts a grapheme cluster at %d", k, c.Start, c.End, p)
			}
		}
		if strings.TrimSpace(c.Text) == "" {
			t.Fatalf("chunk %d is whitespace only: %q", k, c.Text)
		}
		if n := s.Tokenizer().Count(c.Text); n != c.Tokens {
			t.Fatalf("chunk %d: Tokens = %d, real count %d", k, c.Tokens, n)
		}
		if c.Tokens > s.size {
			t.Fatalf("chunk %d has %d tokens, limit %d", k, c.Tokens, s.size)
		}
		if k > 0 {
			p := chunks[k-1]
			if c.Start <= p.Start {
				t.Fatalf("chunk %d starts at %d, not after chunk %d at %d", k, c.Start, k-1, p.Start)
			}
			if c.End <= p.End {
				t.Fatalf("chunk %d ends at %d, not after chunk %d at %d", k, c.End, k-1, p.End)
			}
			if c.Start < p.End {
				if n := s.Tokenizer().Count(text[c.Start:p.End]); n > s.overlap+overlapSlack {
					t.Fatalf("chunks %d and %d share %d tokens, overlap %d (+%d slack): %q",
						k-1, k, n, s.overlap, overlapSlack, text[c.Start:p.End])
				}
			}
		}
		for b := c.Start; b < c.End; b++ {
			covered[b] = true
		}
	}
	for b := 0; b < len(text); {
		r, size := utf8.DecodeRuneInString(text[b:])
		isSpace := unicode.IsSpace(r) && !(r == utf8.RuneError && size == 1)
		if !isSpace {
			for i := b; i < b+size; i++ {
				if !covered[i] {
					t.Fatalf("byte %d (%q) is in no chunk", i, text[b:b+size])
				}
			}
		}
		b += size
	}
}

var (
	words = strings.Fields(`the of graph retrieval document entity relation index query model
		system data network packet kernel socket buffer table column server function value
		probability distribution variance estimator algorithm Spark cluster RDD vector matrix`)
	cjk    = []string{"知识图谱", "检索增强生成", "文档", "实体关系", "日本語の文章", "分割する", "数据库", "查询"}
	cjkEnd = []string{"。", "！", "？", "；", "，"}
	emoji  = []string{"🙂", "🚀", "👩‍💻", "é", "ß", "∑"}
)

// randomText builds a deterministic text from seed mixing English
// sentences, CJK sentences, emoji, odd whitespace and long unbroken words.
func randomText(seed uint64, approxWords int) string {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	var b strings.Builder
	for w := 0; w < approxWords; w++ {
		switch x := r.IntN(100); {
		case x < 60:
			if b.Len() > 0 && r.IntN(4) > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[r.IntN(len(words))])
		case x < 68:
			b.WriteString([]string{". ", "! ", "? ", ", ", "; ", ".", ":"}[r.IntN(7)])
		case x < 74:
			b.WriteString([]string{"\n", "\n\n", "\n\n\n", "\r\n", "  ", "\t", " \n "}[r.IntN(7)])
		case x < 86:
			b.WriteString(cjk[r.IntN(len(cjk))])
			if r.IntN(3) == 0 {
				b.WriteString(cjkEnd[r.IntN(len(cjkEnd))])
			}
		case x < 92:
			b.WriteString(emoji[r.IntN(len(emoji))])
		case x < 95:
			b.WriteString(strings.Repeat(words[r.IntN(len(words))], 1+r.IntN(40)))
		case x < 97:
			b.WriteString(strings.Repeat("字", 1+r.IntN(200)))
		default:
			b.WriteString(strings.Repeat(" ", 1+r.IntN(30)))
		}
	}
	return b.String()
}

// proseText builds deterministic English-like prose: paragraphs of
// sentences, the shape of the documents docgraph ingests.
func proseText(seed uint64, size int) string {
	r := rand.New(rand.NewPCG(seed, 0x9405e))
	var b strings.Builder
	for b.Len() < size {
		for s, n := 0, 2+r.IntN(7); s < n; s++ {
			for w, m := 0, 6+r.IntN(18); w < m; w++ {
				word := words[r.IntN(len(words))]
				if w == 0 {
					word = strings.ToUpper(word[:1]) + word[1:]
				} else {
					b.WriteByte(' ')
				}
				b.WriteString(word)
				if w < m-1 && r.IntN(10) == 0 {
					b.WriteByte(',')
				}
			}
			b.WriteString([]string{". ", ". ", ". ", "? ", "! "}[r.IntN(5)])
		}
		b.WriteString("\n\n")
	}
	return b.String()
}

// sharedDocs returns the paths of the shared benchmark documents, or nil
// when the data set is absent.
func sharedDocs(tb testing.TB) []string {
	tb.Helper()
	dir, err := os.Getwd()
	if err != nil {
		return nil
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil
		}
		dir = parent
	}
	paths, _ := filepath.Glob(filepath.Join(dir, "..", "shared", "data", "ultradomain_cs", "documents", "*.md"))
	sort.Strings(paths)
	return paths
}
