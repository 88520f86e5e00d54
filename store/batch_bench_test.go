package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/docgraph/docgraph/store"
)

// discardWriter commits every group at once and keeps nothing: what is
// left to measure is the Batcher's own bookkeeping.
type discardWriter struct {
	store.Writer
}

func (discardWriter) WriteDocument(context.Context, *store.DocumentWrite) error { return nil }

func (discardWriter) WriteDocuments(context.Context, ...*store.DocumentWrite) error { return nil }

func (discardWriter) PreferredGroupRows() int { return 1 << 30 }

// BenchmarkBatcherStream submits a stream of small documents, as an ingest
// does, into groups bounded by MaxDocuments. The cost per document must not
// grow with the group: compare the sizes.
func BenchmarkBatcherStream(b *testing.B) {
	for _, group := range []int{1000, 4000, 16000} {
		b.Run(fmt.Sprintf("group=%d", group), func(b *testing.B) {
			ws := make([]*store.DocumentWrite, group)
			for i := range ws {
				id := fmt.Sprintf("doc-%d", i)
				ws[i] = &store.DocumentWrite{
					Document: store.Document{ID: id, Path: id + ".md"},
					Chunks:   []store.Chunk{{ID: id + "-c0"}},
				}
			}
			ctx := context.Background()
			b.ResetTimer()
			for range b.N {
				bt := store.NewBatcher(discardWriter{}, store.BatchOptions{MaxDocuments: group, MaxQueuedRows: 1 << 30})
				var wg sync.WaitGroup
				wg.Add(len(ws))
				for _, w := range ws {
					if err := bt.Submit(ctx, w, func(error) { wg.Done() }); err != nil {
						b.Fatal(err)
					}
				}
				wg.Wait()
				bt.Close()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*group), "ns/doc")
		})
	}
}
