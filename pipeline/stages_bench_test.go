package pipeline_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/docgraph/docgraph/embedstore"
	"github.com/docgraph/docgraph/graphbuild"
	"github.com/docgraph/docgraph/pipeline"
	"github.com/docgraph/docgraph/store"
)

// BenchmarkBuildStages measures what ingest does per document before and
// around the store, with no store: walk, load, split, extract, resolve and
// build the mention rows, embed the chunks, and merge and embed the
// document's entities and relations as the store's merger does for the
// entities and relations a write touches. It runs one document at a time,
// so ns/op is CPU time; compare it with a whole ingest of the same files
// to see the store's share.
//
//	go test ./pipeline -run '^$' -bench BuildStages -benchmem -benchtime 3x
//
// x1 is 2wiki's 6,119 passages as files (title heading, then text), as in
// /work/scale/x1; books is the 10 shared computer-science books.
func BenchmarkBuildStages(b *testing.B) {
	b.Run("x1", func(b *testing.B) { benchStages(b, passageFiles(b)) })
	b.Run("books", func(b *testing.B) { benchStages(b, ultraDomain(b)) })
}

func benchStages(b *testing.B, dir string) {
	ctx := context.Background()
	emb := embedstore.NewHash()
	p, err := pipeline.Offline(pipeline.Settings{ChunkTokens: 768, ChunkOverlap: 32, Concurrency: 1}, emb, nil)
	if err != nil {
		b.Fatal(err)
	}
	merger := graphbuild.NewMerger(emb)
	var docs, chunks, ents, rels int
	for b.Loop() {
		docs, chunks, ents, rels = 0, 0, 0, 0
		files, _, err := pipeline.Walk([]string{dir})
		if err != nil {
			b.Fatal(err)
		}
		for _, f := range files {
			doc, err := p.Loader.Load(ctx, f)
			if err != nil {
				b.Fatal(err)
			}
			w, _, err := p.BuildCounted(ctx, doc)
			if err != nil {
				b.Fatal(err)
			}
			es, err := merger.MergeEntities(ctx, entityGroups(w.Entities))
			if err != nil {
				b.Fatal(err)
			}
			rs, err := merger.MergeRelations(ctx, relationGroups(w.Relations))
			if err != nil {
				b.Fatal(err)
			}
			docs++
			chunks += len(w.Chunks)
			ents += len(es)
			rels += len(rs)
		}
	}
	b.ReportMetric(float64(docs), "docs")
	b.ReportMetric(float64(chunks), "chunks")
	b.ReportMetric(float64(ents+rels), "merged")
}

// entityGroups groups mention rows by entity, in order of first mention.
func entityGroups(ms []store.EntityMention) [][]store.EntityMention {
	return groupBy(ms, func(m store.EntityMention) string { return m.EntityID })
}

func relationGroups(ms []store.RelationMention) [][]store.RelationMention {
	return groupBy(ms, func(m store.RelationMention) string { return m.RelationID })
}

func groupBy[T any](ms []T, key func(T) string) [][]T {
	at := map[string]int{}
	var out [][]T
	for _, m := range ms {
		k := key(m)
		i, ok := at[k]
		if !ok {
			i = len(out)
			at[k] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], m)
	}
	return out
}

// passageFiles writes 2wiki's passages as one Markdown file each, as
// tools/scale_corpus.py lays out a copy (a heading with the title, then the
// text), and returns the folder; it skips when the shared data is absent.
func passageFiles(b *testing.B) string {
	f, err := os.Open("../../shared/data/2wiki/corpus.jsonl")
	if err != nil {
		b.Skip("shared data absent:", err)
	}
	defer f.Close()
	dir := b.TempDir()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for n := 0; sc.Scan(); n++ {
		var p struct{ ID, Title, Text string }
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			b.Fatal(err)
		}
		sub := filepath.Join(dir, fmt.Sprintf("%02d", n%100))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			b.Fatal(err)
		}
		text := "# " + p.Title + "\n" + p.Text + "\n"
		if err := os.WriteFile(filepath.Join(sub, p.ID+".md"), []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	if err := sc.Err(); err != nil {
		b.Fatal(err)
	}
	return dir
}
