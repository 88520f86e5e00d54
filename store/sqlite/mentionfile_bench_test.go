package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"docgraph/store"
)

// BenchmarkScanMentions scans ~50k mentions (3000 passages of two chunks,
// 30k distinct entities, ids shaped like the real ones) three ways: "sql"
// is the SQL scan alone, "miss" is ScanMentions without a valid sidecar (the
// SQL scan plus writing the sidecar), "sidecar" is ScanMentions served from
// the file.
func BenchmarkScanMentions(b *testing.B) {
	const docs, chunks, perChunk, pool = 3000, 2, 8, 30000
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(b.TempDir(), "g.db"), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	// Rows go straight into the tables: this measures the scan, not ingest.
	tx, err := s.wdb.Begin()
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for d := 0; d < docs; d++ {
		doc := fmt.Sprintf("%032x", r.Uint64())
		if _, err := tx.Exec(`INSERT INTO documents(id, path, status) VALUES (?, ?, 'done')`, doc, doc+".txt"); err != nil {
			b.Fatal(err)
		}
		for c := 0; c < chunks; c++ {
			chunk := fmt.Sprintf("%s:%04d", doc, c)
			for m := 0; m < perChunk; m++ {
				ent := fmt.Sprintf("e%016x", r.IntN(pool))
				if _, err := tx.Exec(`INSERT INTO entity_mentions(entity_id, chunk_id, doc_id, name) VALUES (?, ?, ?, ?)`, ent, chunk, doc, ent); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	if _, err := tx.Exec(`UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'`); err != nil {
		b.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	count := func(m store.Mention) error { return nil }
	rows := 0
	if err := s.ScanMentions(ctx, func(store.Mention) error { rows++; return nil }); err != nil {
		b.Fatal(err)
	}
	fi, err := os.Stat(s.mentionsFile)
	if err != nil {
		b.Fatal(err)
	}

	b.Run("sql", func(b *testing.B) {
		for b.Loop() {
			tx, err := s.rdb.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
			if err != nil {
				b.Fatal(err)
			}
			if err := s.scanMentionRows(ctx, tx, count); err != nil {
				b.Fatal(err)
			}
			tx.Rollback()
		}
		b.ReportMetric(float64(rows), "mentions")
	})
	b.Run("miss", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			os.Remove(s.mentionsFile)
			b.StartTimer()
			if err := s.ScanMentions(ctx, count); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("sidecar", func(b *testing.B) {
		hits := s.mentionFileHits.Load()
		for b.Loop() {
			if err := s.ScanMentions(ctx, count); err != nil {
				b.Fatal(err)
			}
		}
		if s.mentionFileHits.Load() == hits {
			b.Fatal("the sidecar was not used")
		}
		b.ReportMetric(float64(fi.Size()), "file-bytes")
	})
}
