package splitter

import (
	"os"
	"strings"
	"testing"
)

// benchText returns ~1 MB of realistic prose: the shared computer-science
// books when present, else deterministic generated paragraphs.
func benchText(b *testing.B) string {
	b.Helper()
	const size = 1 << 20
	var sb strings.Builder
	for _, p := range sharedDocs(b) {
		data, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		sb.Write(data)
		sb.WriteString("\n\n")
		if sb.Len() >= size {
			break
		}
	}
	text := sb.String()
	if text == "" {
		text = proseText(7, size)
	}
	return text[:snapBack(text, min(len(text), size))]
}

// BenchmarkSplit measures splitting with the default settings (768 tokens,
// overlap 32). Compare its MB/s with BenchmarkCount, the floor.
func BenchmarkSplit(b *testing.B) {
	text := benchText(b)
	s, err := New()
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	var chunks []Chunk
	for b.Loop() {
		chunks = s.Split("bench", text)
	}
	b.ReportMetric(float64(len(chunks)), "chunks/op")
}

// BenchmarkCount tokenizes the same text once: no splitter can be faster.
func BenchmarkCount(b *testing.B) {
	text := benchText(b)
	tok, err := NewTokenizer("")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	n := 0
	for b.Loop() {
		n = tok.Count(text)
	}
	b.ReportMetric(float64(n), "tokens/op")
}
