package splitter

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

func newSplitter(t testing.TB, opts ...Option) *Splitter {
	t.Helper()
	s, err := New(opts...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}

func TestNewTokenizer(t *testing.T) {
	a, err := NewTokenizer("")
	if err != nil {
		t.Fatalf("NewTokenizer(\"\"): %v", err)
	}
	b, err := NewTokenizer("cl100k_base")
	if err != nil {
		t.Fatalf("NewTokenizer(cl100k_base): %v", err)
	}
	if a != b {
		t.Error("default and cl100k_base tokenizers are not the same cached instance")
	}
	if _, err := NewTokenizer("no_such_encoding"); err == nil || !strings.Contains(err.Error(), "no_such_encoding") {
		t.Errorf("unknown encoding: err = %v, want an error naming it", err)
	}
	// cl100k_base splits these as [hello][ world] and [<|][endo]... (no
	// special-token handling in documents).
	if n := a.Count("hello world"); n != 2 {
		t.Errorf("Count(hello world) = %d, want 2", n)
	}
	if n := a.Count(""); n != 0 {
		t.Errorf("Count(\"\") = %d, want 0", n)
	}
	if n := a.Count("<|endoftext|>"); n <= 1 {
		t.Errorf("Count(<|endoftext|>) = %d, want it counted as ordinary text", n)
	}
}

// TestTokenizerOffline loads an encoding no other test uses with the HTTP
// proxy pointed at a closed port and tiktoken's download cache redirected
// to an empty directory: the downloading loader would fail or leave a file.
func TestTokenizerOffline(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("TIKTOKEN_CACHE_DIR", cache)
	t.Setenv("HTTPS_PROXY", "http://127.0.0.1:1")
	t.Setenv("HTTP_PROXY", "http://127.0.0.1:1")
	tok, err := NewTokenizer("r50k_base")
	if err != nil {
		t.Fatalf("NewTokenizer(r50k_base) offline: %v", err)
	}
	if n := tok.Count("hello world"); n != 2 {
		t.Errorf("r50k_base Count(hello world) = %d, want 2", n)
	}
	entries, err := os.ReadDir(cache)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Errorf("tiktoken cache dir got %d files: a downloading loader ran", len(entries))
	}
}

func TestTruncate(t *testing.T) {
	tok, err := NewTokenizer("")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		text string
		max  int
	}{
		{"fits", "a short sentence.", 50},
		{"english", strings.Repeat("The quick brown fox jumps over the lazy dog. ", 20), 17},
		{"cjk", strings.Repeat("知识图谱检索增强生成。", 30), 11},
		{"emoji", strings.Repeat("🚀👩‍💻🙂", 30), 7},
		{"invalid utf8", strings.Repeat("ab\xff\xfe字\xe5\xa5", 40), 9},
		{"zero", "anything", 0},
		{"empty", "", 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tok.Truncate(tt.text, tt.max)
			if !strings.HasPrefix(tt.text, got) {
				t.Fatalf("Truncate returned %q, not a prefix", got)
			}
			if n := tok.Count(got); n > tt.max {
				t.Fatalf("Truncate kept %d tokens, max %d", n, tt.max)
			}
			if snapBack(tt.text, len(got)) != len(got) {
				t.Fatalf("Truncate cut inside a UTF-8 character at %d", len(got))
			}
			if utf8.ValidString(tt.text) && !utf8.ValidString(got) {
				t.Fatalf("Truncate made invalid UTF-8 from valid input")
			}
			full := tok.Count(tt.text)
			switch {
			case full <= tt.max && got != tt.text:
				t.Fatalf("text of %d tokens fits in %d but was cut", full, tt.max)
			case full > tt.max && tt.max > 0:
				// Longest: two more characters do not fit. (One more may,
				// when the last token that fits ends inside a character.)
				more := nextBoundary(tt.text, nextBoundary(tt.text, len(got)))
				if tok.Count(tt.text[:more]) <= tt.max {
					t.Fatalf("Truncate stopped at byte %d though two more characters fit", len(got))
				}
			}
		})
	}
}

func TestNewOptions(t *testing.T) {
	tests := []struct {
		name    string
		opts    []Option
		wantErr bool
	}{
		{"defaults", nil, false},
		{"overlap zero", []Option{WithOverlap(0)}, false},
		{"overlap equals size", []Option{WithChunkSize(64), WithOverlap(64)}, true},
		{"overlap over size", []Option{WithChunkSize(64), WithOverlap(100)}, true},
		{"negative overlap", []Option{WithOverlap(-1)}, true},
		{"size too small", []Option{WithChunkSize(3), WithOverlap(0)}, true},
		{"smallest size", []Option{WithChunkSize(4), WithOverlap(0)}, false},
		{"nil tokenizer means default", []Option{WithTokenizer(nil)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := New(tt.opts...)
			if (err != nil) != tt.wantErr {
				t.Fatalf("New err = %v, wantErr %v", err, tt.wantErr)
			}
			if err == nil && s.Tokenizer() == nil {
				t.Fatal("Splitter has no tokenizer")
			}
		})
	}
	s := newSplitter(t)
	if s.size != 768 || s.overlap != 32 {
		t.Errorf("defaults: size %d overlap %d, want 768 and 32", s.size, s.overlap)
	}
}

func TestChunkID(t *testing.T) {
	c := Chunk{DocID: "ab12", Index: 3}
	if got := c.ID(); got != "ab12:0003" {
		t.Errorf("ID() = %q, want ab12:0003", got)
	}
	if got := (Chunk{DocID: "d", Index: 12345}).ID(); got != "d:12345" {
		t.Errorf("ID() = %q, want d:12345", got)
	}
}

func TestSplit(t *testing.T) {
	paragraphs := strings.Repeat("This paragraph talks about graphs and their entities. It has two sentences.\n\n", 30)
	lines := strings.Repeat("line of a log file with some words in it\n", 80)
	sentences := strings.Repeat("Sentences follow each other without line breaks. Does the splitter cut here? It should! ", 40)
	chinese := strings.Repeat("知识图谱是一种用图结构描述实体及其关系的数据模型。它支持检索增强生成！这有用吗？当然；", 20)
	japanese := strings.Repeat("文書を小さな断片に分割します。検索に使います！", 40)
	hugeWord := strings.Repeat("supercalifragilistic", 400)

	endsWithAny := func(ends ...string) func(string) bool {
		return func(s string) bool {
			for _, e := range ends {
				if strings.HasSuffix(s, e) {
					return true
				}
			}
			return false
		}
	}
	tests := []struct {
		name       string
		text       string
		opts       []Option
		wantChunks int               // exact count when > 0
		minChunks  int               // at least this many
		lastOK     func(string) bool // every chunk but the last must end like this
		check      func(*testing.T, []Chunk)
	}{
		{name: "empty", text: "", wantChunks: -1},
		{name: "whitespace only", text: " \n\n\t  \r\n", wantChunks: -1},
		{name: "shorter than one chunk", text: "  One short paragraph.\n", wantChunks: 1,
			check: func(t *testing.T, cs []Chunk) {
				if cs[0].Text != "One short paragraph." {
					t.Errorf("Text = %q, want the trimmed paragraph", cs[0].Text)
				}
			}},
		{name: "paragraphs", text: paragraphs, opts: []Option{WithChunkSize(64), WithOverlap(0)}, minChunks: 5,
			lastOK: endsWithAny("two sentences.")},
		{name: "lines", text: lines, opts: []Option{WithChunkSize(50), WithOverlap(8)}, minChunks: 5,
			lastOK: endsWithAny("in it")},
		{name: "sentences", text: sentences, opts: []Option{WithChunkSize(40), WithOverlap(8)}, minChunks: 5,
			lastOK: endsWithAny(".", "?", "!")},
		{name: "chinese", text: chinese, opts: []Option{WithChunkSize(48), WithOverlap(8)}, minChunks: 5,
			lastOK: endsWithAny("。", "！", "？", "；")},
		{name: "japanese", text: japanese, opts: []Option{WithChunkSize(40), WithOverlap(0)}, minChunks: 5,
			lastOK: endsWithAny("。", "！")},
		{name: "single huge word", text: hugeWord, opts: []Option{WithChunkSize(100), WithOverlap(10)}, minChunks: 5,
			check: func(t *testing.T, cs []Chunk) {
				for _, c := range cs[:len(cs)-1] {
					if c.Tokens < 80 {
						t.Errorf("chunk %d has %d tokens: a word split by tokens should fill chunks", c.Index, c.Tokens)
					}
				}
			}},
		{name: "overlap zero", text: paragraphs + sentences, opts: []Option{WithChunkSize(60), WithOverlap(0)}, minChunks: 5,
			check: func(t *testing.T, cs []Chunk) {
				for k := 1; k < len(cs); k++ {
					if cs[k].Start < cs[k-1].End {
						t.Errorf("chunks %d and %d overlap with overlap 0", k-1, k)
					}
				}
			}},
		{name: "overlap present", text: sentences, opts: []Option{WithChunkSize(80), WithOverlap(20)}, minChunks: 5,
			check: func(t *testing.T, cs []Chunk) {
				for k := 1; k < len(cs); k++ {
					if cs[k].Start >= cs[k-1].End {
						t.Errorf("chunks %d and %d do not overlap", k-1, k)
					}
				}
			}},
		{name: "custom separators", text: "a|b|c|" + strings.Repeat("word ", 30) + "|tail", opts: []Option{
			WithChunkSize(12), WithOverlap(0), WithSeparators([]string{"|"})}, minChunks: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSplitter(t, tt.opts...)
			cs := s.Split("doc", tt.text)
			checkChunks(t, s, "doc", tt.text, cs)
			switch {
			case tt.wantChunks < 0 && len(cs) != 0:
				t.Fatalf("got %d chunks, want none", len(cs))
			case tt.wantChunks > 0 && len(cs) != tt.wantChunks:
				t.Fatalf("got %d chunks, want %d", len(cs), tt.wantChunks)
			case len(cs) < tt.minChunks:
				t.Fatalf("got %d chunks, want at least %d", len(cs), tt.minChunks)
			}
			if tt.lastOK != nil {
				for _, c := range cs[:len(cs)-1] {
					if !tt.lastOK(c.Text) {
						t.Errorf("chunk %d ends mid-unit: ...%q", c.Index, c.Text[max(0, len(c.Text)-30):])
					}
				}
			}
			if tt.check != nil {
				tt.check(t, cs)
			}
		})
	}
}

// TestSplitProperties checks the invariants on many random texts and
// configurations.
func TestSplitProperties(t *testing.T) {
	n := 200
	if testing.Short() {
		n = 50
	}
	configs := []struct{ size, overlap int }{{4, 0}, {5, 2}, {16, 4}, {32, 0}, {40, 16}, {64, 8}, {128, 32}, {768, 32}}
	for seed := 0; seed < n; seed++ {
		text := randomText(uint64(seed), 20+seed*3)
		cfg := configs[seed%len(configs)]
		s := newSplitter(t, WithChunkSize(cfg.size), WithOverlap(cfg.overlap))
		t.Run(fmt.Sprintf("seed%d_size%d_overlap%d", seed, cfg.size, cfg.overlap), func(t *testing.T) {
			checkChunks(t, s, "d", text, s.Split("d", text))
		})
	}
}

// TestSplitOverlapAmount checks that overlap is not merely allowed but
// produced: on prose, consecutive chunks share close to the configured
// number of tokens.
func TestSplitOverlapAmount(t *testing.T) {
	text := proseText(1, 60_000)
	s := newSplitter(t, WithChunkSize(256), WithOverlap(32))
	cs := s.Split("d", text)
	checkChunks(t, s, "d", text, cs)
	total, shared := 0, 0
	for k := 1; k < len(cs); k++ {
		total++
		if cs[k].Start < cs[k-1].End && s.Tokenizer().Count(text[cs[k].Start:cs[k-1].End]) >= 16 {
			shared++
		}
	}
	if total < 10 || shared*10 < total*9 {
		t.Errorf("%d of %d chunk pairs share at least half the overlap, want 90%%", shared, total)
	}
	// Chunks should be filled close to the limit, not cut early.
	sum := 0
	for _, c := range cs[:len(cs)-1] {
		sum += c.Tokens
	}
	if avg := sum / (len(cs) - 1); avg < 200 {
		t.Errorf("average chunk has %d tokens, want near the 256 limit", avg)
	}
}

func TestSplitSharedData(t *testing.T) {
	paths := sharedDocs(t)
	if len(paths) == 0 {
		t.Skip("shared data set ../shared/data/ultradomain_cs absent")
	}
	if testing.Short() {
		paths = paths[:1]
	}
	s := newSplitter(t)
	for _, p := range paths[:min(2, len(paths))] {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b[:min(len(b), 300_000)])
		checkChunks(t, s, p, text, s.Split(p, text))
	}
}

func TestSplitConcurrent(t *testing.T) {
	s := newSplitter(t, WithChunkSize(64), WithOverlap(8))
	texts := make([]string, 8)
	want := make([][]Chunk, len(texts))
	for i := range texts {
		texts[i] = randomText(uint64(1000+i), 400)
		want[i] = s.Split("d", texts[i])
	}
	var wg sync.WaitGroup
	got := make([][]Chunk, len(texts))
	for i := range texts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = s.Split("d", texts[i])
		}()
	}
	wg.Wait()
	for i := range texts {
		if fmt.Sprint(got[i]) != fmt.Sprint(want[i]) {
			t.Errorf("text %d: concurrent Split differs from sequential", i)
		}
	}
}

func TestSnapBack(t *testing.T) {
	text := "a字\xff\x80b🙂"
	// boundaries by forward decoding: 0 a 1 字 4 \xff 5 \x80 6 b 7 🙂 11
	want := map[int]int{0: 0, 1: 1, 2: 1, 3: 1, 4: 4, 5: 5, 6: 6, 7: 7, 8: 7, 9: 7, 10: 7, 11: 11}
	for p, w := range want {
		if got := snapBack(text, p); got != w {
			t.Errorf("snapBack(%d) = %d, want %d", p, got, w)
		}
	}
}

func FuzzSplit(f *testing.F) {
	f.Add("Hello world. This is a test!\n\nSecond paragraph? Yes.", 16, 4)
	f.Add("知识图谱。检索增强生成！好吗？好；", 4, 1)
	f.Add("\xff\xfe\xe5\xa5 broken \xe5 utf8 字字字", 5, 0)
	f.Add(strings.Repeat("a", 300), 8, 3)
	f.Add(strings.Repeat("🙂", 50), 4, 3)
	f.Add("   \n\n\t ", 10, 2)
	f.Fuzz(func(t *testing.T, text string, size, overlap int) {
		size = 4 + abs(size)%60
		overlap = abs(overlap) % size
		s, err := New(WithChunkSize(size), WithOverlap(overlap))
		if err != nil {
			t.Fatal(err)
		}
		checkChunks(t, s, "f", text, s.Split("f", text))
		tr := s.Tokenizer().Truncate(text, size)
		if !strings.HasPrefix(text, tr) || s.Tokenizer().Count(tr) > size {
			t.Fatalf("Truncate(%d) = %q", size, tr)
		}
	})
}

func abs(x int) int {
	if x < 0 {
		if -x < 0 { // math.MinInt
			return 0
		}
		return -x
	}
	return x
}
