package ner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// benchText returns about n bytes of book text from the shared UltraDomain
// documents, or generated encyclopaedic text when they are absent.
func benchText(b *testing.B, n int) string {
	b.Helper()
	var sb strings.Builder
	dir := filepath.Join(sharedDataDir(b), "ultradomain_cs", "documents")
	if entries, err := os.ReadDir(dir); err == nil {
		names := make([]string, 0, len(entries))
		for _, e := range entries {
			names = append(names, e.Name())
		}
		sort.Strings(names)
		for _, name := range names {
			data, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				b.Fatalf("read %s: %v", name, err)
			}
			sb.Write(data[:min(len(data), n/len(names)+1)])
		}
	}
	for i := 0; sb.Len() < n; i++ {
		fmt.Fprintf(&sb, "Teutberga (died 11 November 875) was a queen of Lotharingia by marriage to Lothair II. "+
			"She was a daughter of Bosonid Boso the Elder and sister of Hucbert, the lay-abbot of St. Maurice's Abbey. "+
			"In %d, the \"Annales Bertiniani\" report that G. Stanley Hall paid $%d million to the University of Copenhagen.\n\n", 1000+i%1000, i)
	}
	return sb.String()
}

// chunks splits text into pieces of about size bytes at line ends, like the
// splitter's token-bounded chunks.
func chunks(text string, size int) []string {
	var out []string
	for len(text) > 0 {
		end := min(len(text), size)
		if nl := strings.LastIndexByte(text[:end], '\n'); nl > size/2 && end < len(text) {
			end = nl + 1
		}
		out = append(out, text[:end])
		text = text[end:]
	}
	return out
}

func BenchmarkOfflineExtract(b *testing.B) {
	text := benchText(b, 1<<20)
	parts := chunks(text, 4800) // about 1200 tokens
	o := NewOffline()
	ctx := context.Background()
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	entities := 0
	for b.Loop() {
		entities = 0
		for i, p := range parts {
			x, err := o.Extract(ctx, Chunk{ID: fmt.Sprint(i), DocTitle: "Benchmark", Text: p})
			if err != nil {
				b.Fatal(err)
			}
			entities += len(x.Entities)
		}
	}
	b.ReportMetric(float64(entities)/float64(len(parts)), "entities/chunk")
}

// BenchmarkOfflineExtractCJK extracts from the cmrc2018 passages (Chinese
// Wikipedia), one passage a chunk as eval ingests them.
func BenchmarkOfflineExtractCJK(b *testing.B) {
	type passage struct{ Title, Text string }
	ps := readJSONL[passage](b, filepath.Join(sharedDataDir(b), "cmrc2018", "corpus.jsonl"))
	o := NewOffline()
	ctx := context.Background()
	size := 0
	for _, p := range ps {
		size += len(p.Title) + 1 + len(p.Text)
	}
	b.SetBytes(int64(size))
	b.ResetTimer()
	entities, relations := 0, 0
	for b.Loop() {
		entities, relations = 0, 0
		for i, p := range ps {
			x, err := o.Extract(ctx, Chunk{ID: fmt.Sprint(i), DocTitle: p.Title, Text: p.Title + "\n" + p.Text})
			if err != nil {
				b.Fatal(err)
			}
			entities += len(x.Entities)
			relations += len(x.Relations)
		}
	}
	b.ReportMetric(float64(entities)/float64(len(ps)), "entities/passage")
	b.ReportMetric(float64(relations)/float64(len(ps)), "relations/passage")
}
