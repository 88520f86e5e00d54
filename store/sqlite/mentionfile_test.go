package sqlite

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"docgraph/store"
	"docgraph/store/storetest"
)

// mentionDoc is a small document whose first entity mention is repeated in
// its chunk, so the per-document dedupe is exercised on both paths.
func mentionDoc(id string, seed uint64) *store.DocumentWrite {
	w := synthetic(syntheticSize{docID: id, path: id + ".txt", chunks: 3, entities: 9, relations: 2, pool: 20, seed: seed, dim: storetest.Dimension})
	dup := w.Entities[0]
	dup.Description = "another fragment"
	w.Entities = append(w.Entities, dup)
	return w
}

func openAt(t *testing.T, path string) *Store {
	t.Helper()
	s, err := Open(context.Background(), path, storetest.Options())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func scanMentionsAll(t *testing.T, s *Store) []store.Mention {
	t.Helper()
	var got []store.Mention
	if err := s.ScanMentions(context.Background(), func(m store.Mention) error {
		got = append(got, m)
		return nil
	}); err != nil {
		t.Fatalf("ScanMentions: %v", err)
	}
	return got
}

// sqlMentions is what the SQL scan alone returns, bypassing the sidecar.
func sqlMentions(t *testing.T, s *Store) []store.Mention {
	t.Helper()
	ctx := context.Background()
	tx, err := s.rdb.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	var got []store.Mention
	if err := s.scanMentionRows(ctx, tx, func(m store.Mention) error {
		got = append(got, m)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return got
}

// rewriteMentionFile edits a sidecar's body and fixes its checksum, so only
// the loader's structural checks stand between the edit and a scan.
func rewriteMentionFile(t *testing.T, path string, edit func(hdr, body []byte)) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	hdr, body := data[:mentionFileHeader], data[mentionFileHeader:]
	edit(hdr, body)
	binary.LittleEndian.PutUint32(hdr[52:], crc32.Checksum(body, castagnoli))
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestMentionSidecar checks that a fresh handle serves ScanMentions from the
// sidecar the first scan wrote, with exactly the SQL scan's sequence, and
// that every change of state or damage to the file sends it back to SQL.
func TestMentionSidecar(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "g.db")
	side := path + ".mentions"
	w := openAt(t, path) // the writer, as another process would be
	for i, id := range []string{"a", "b", "c", "d"} {
		if err := w.WriteDocument(ctx, mentionDoc(id, uint64(i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.SetStatus(ctx, store.Document{ID: "d", Path: "d.txt"}, store.StatusProcessing, ""); err != nil {
		t.Fatal(err)
	}
	doc := func(id string) store.Document { return store.Document{ID: id, Path: id + ".txt"} }
	status := func(id string, st store.Status) {
		t.Helper()
		if err := w.SetStatus(ctx, doc(id), st, ""); err != nil {
			t.Fatal(err)
		}
	}

	first := openAt(t, path)
	want := scanMentionsAll(t, first)
	if first.mentionFileHits.Load() != 0 {
		t.Fatal("a scan with no sidecar reported a hit")
	}
	if _, err := os.Stat(side); err != nil {
		t.Fatalf("no sidecar written: %v", err)
	}
	if got := sqlMentions(t, first); !reflect.DeepEqual(got, want) {
		t.Fatalf("ScanMentions differs from the SQL scan:\n%v\n%v", want, got)
	}

	cases := []struct {
		name   string
		change func(t *testing.T)
	}{
		{"unchanged", func(*testing.T) {}},
		{"write", func(t *testing.T) {
			if err := w.WriteDocument(ctx, mentionDoc("e", 9)); err != nil {
				t.Fatal(err)
			}
		}},
		{"delete", func(t *testing.T) {
			if err := w.DeleteDocument(ctx, "b"); err != nil {
				t.Fatal(err)
			}
		}},
		{"status flip pair", func(t *testing.T) {
			before, _ := w.GraphVersion(ctx)
			status("a", store.StatusProcessing)
			status("d", store.StatusDone)
			// The done count is back where it was and no write bumped the
			// generation: only the done set tells the states apart.
			if after, _ := w.GraphVersion(ctx); after != before {
				t.Fatalf("GraphVersion moved (%s -> %s); the case no longer tests the done-set key", before, after)
			}
		}},
		{"new bare document", func(t *testing.T) { status("f", store.StatusDone) }},
		{"truncated", func(t *testing.T) {
			data, _ := os.ReadFile(side)
			os.WriteFile(side, data[:len(data)/2], 0o644)
		}},
		{"empty", func(t *testing.T) { os.WriteFile(side, nil, 0o644) }},
		{"flipped byte", func(t *testing.T) {
			// The last row repeats its document (marker 0); as 1 it would
			// read as an empty doc id, which parses: only the checksum tells.
			data, _ := os.ReadFile(side)
			if data[len(data)-1] != 0 {
				t.Fatal("the last row does not repeat its document")
			}
			data[len(data)-1] = 1
			os.WriteFile(side, data, 0o644)
		}},
		{"row count high", func(t *testing.T) {
			rewriteMentionFile(t, side, func(hdr, _ []byte) {
				binary.LittleEndian.PutUint32(hdr[48:], binary.LittleEndian.Uint32(hdr[48:])+1)
			})
		}},
		{"row count low", func(t *testing.T) {
			rewriteMentionFile(t, side, func(hdr, _ []byte) {
				binary.LittleEndian.PutUint32(hdr[48:], binary.LittleEndian.Uint32(hdr[48:])-1)
			})
		}},
		{"length past the end", func(t *testing.T) {
			rewriteMentionFile(t, side, func(_, body []byte) { body[len(body)-1] = 0x7f })
		}},
		{"removed", func(t *testing.T) { os.Remove(side) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.change(t)
			s := openAt(t, path)
			truth := sqlMentions(t, s)
			got := scanMentionsAll(t, s)
			if hit := s.mentionFileHits.Load() == 1; hit != (c.name == "unchanged") {
				t.Fatalf("sidecar hit = %v after %s", hit, c.name)
			}
			if !reflect.DeepEqual(got, truth) {
				t.Fatalf("ScanMentions after %s:\n got %v\nwant %v", c.name, got, truth)
			}
			// The miss rewrote the sidecar: the next scan reads it.
			again := scanMentionsAll(t, s)
			if n := s.mentionFileHits.Load(); n == 0 || !reflect.DeepEqual(again, truth) {
				t.Fatalf("second scan after %s: %d hits, same result %v", c.name, n, reflect.DeepEqual(again, truth))
			}
		})
	}
}

// TestMentionSidecarInstance checks that a sidecar of another database
// holding the same state (same generation and done set) is not used.
func TestMentionSidecarInstance(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var stores []*Store
	for _, name := range []string{"one.db", "two.db"} {
		s := openAt(t, filepath.Join(dir, name))
		if err := s.WriteDocument(ctx, mentionDoc("a", 1)); err != nil {
			t.Fatal(err)
		}
		stores = append(stores, s)
	}
	want := scanMentionsAll(t, stores[0])
	data, err := os.ReadFile(stores[0].mentionsFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stores[1].mentionsFile, data, 0o644); err != nil {
		t.Fatal(err)
	}
	got := scanMentionsAll(t, stores[1])
	if n := stores[1].mentionFileHits.Load(); n != 0 {
		t.Fatalf("another database's sidecar was used (%d hits)", n)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
}

// TestMentionSidecarCallbackError checks that an error from fn stops the
// scan on both paths, and that a stopped scan writes no sidecar.
func TestMentionSidecarCallbackError(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "g.db")
	w := openAt(t, path)
	for i, id := range []string{"a", "b"} {
		if err := w.WriteDocument(ctx, mentionDoc(id, uint64(i))); err != nil {
			t.Fatal(err)
		}
	}
	stop := errors.New("enough")
	for _, c := range []struct {
		name    string
		sidecar bool
		after   int // calls before fn fails
	}{
		{"sql first row", false, 1},
		{"sql later row", false, 5},
		{"sidecar first row", true, 1},
		{"sidecar later row", true, 5},
	} {
		t.Run(c.name, func(t *testing.T) {
			os.Remove(w.mentionsFile)
			if c.sidecar {
				scanMentionsAll(t, w)
			}
			s := openAt(t, path)
			calls := 0
			err := s.ScanMentions(ctx, func(store.Mention) error {
				if calls++; calls == c.after {
					return stop
				}
				return nil
			})
			if !errors.Is(err, stop) || calls != c.after {
				t.Fatalf("error %v after %d calls; want %v after %d", err, calls, stop, c.after)
			}
			if hit := s.mentionFileHits.Load() == 1; hit != c.sidecar {
				t.Fatalf("sidecar hit = %v", hit)
			}
			if _, err := os.Stat(w.mentionsFile); (err == nil) != c.sidecar {
				t.Fatalf("sidecar present = %v after a stopped scan", err == nil)
			}
			if left, _ := filepath.Glob(w.mentionsFile + ".tmp*"); len(left) > 0 {
				t.Fatalf("temporary files left: %v", left)
			}
		})
	}

	t.Run("cancelled", func(t *testing.T) {
		scanMentionsAll(t, w) // leaves a valid sidecar
		s := openAt(t, path)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		err := s.ScanMentions(cctx, func(store.Mention) error { return nil })
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled scan: %v", err)
		}
	})
}

// TestMentionWriterBound checks that a scan past the size bound leaves no
// file behind, and one within it writes a sidecar the loader accepts.
func TestMentionWriterBound(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "g.db.mentions")
	key := mentionKey{gen: 7}
	key.done[0] = 1
	rows := []store.Mention{{EntityID: "e1", ChunkID: "c1", DocID: "d"}, {EntityID: "e2", ChunkID: "c1", DocID: "d"}}
	for _, c := range []struct {
		limit int64
		write bool
	}{{1 << 20, true}, {mentionFileHeader + 10, false}} {
		t.Run(fmt.Sprint(c.limit), func(t *testing.T) {
			os.Remove(path)
			w := newMentionWriter(path, "inst")
			w.limit = c.limit
			for _, m := range rows {
				w.add(m)
			}
			w.finish(key)
			if left, _ := filepath.Glob(path + ".tmp*"); len(left) > 0 {
				t.Fatalf("temporary files left: %v", left)
			}
			mf, err := loadMentionFile(path, "inst", key)
			if (err == nil) != c.write {
				t.Fatalf("load: %v, want written = %v", err, c.write)
			}
			if mf == nil {
				return
			}
			var got []store.Mention
			mf.scan(context.Background(), "g.db", func(m store.Mention) error { got = append(got, m); return nil })
			if !reflect.DeepEqual(got, rows) {
				t.Fatalf("got %v, want %v", got, rows)
			}
			other := key
			other.done[31] ^= 1
			if _, err := loadMentionFile(path, "inst", other); err == nil {
				t.Fatal("a sidecar of another done set was accepted")
			}
		})
	}
}

// TestMentionFileDecode runs the loader on hand-made bodies: repeats and
// empty ids decode as written, and malformed bodies are refused whole.
func TestMentionFileDecode(t *testing.T) {
	key := mentionKey{gen: 3}
	str := func(s string) []byte { return append([]byte{byte(len(s))}, s...) }
	rep := func(s string) []byte { return append([]byte{byte(len(s) + 1)}, s...) }
	same := []byte{0}
	cat := func(parts ...[]byte) []byte {
		var b []byte
		for _, p := range parts {
			b = append(b, p...)
		}
		return b
	}
	valid := cat(str("inst"),
		str("e1"), rep("c1"), rep("d"),
		str("e2"), same, same,
		str("e3"), rep("c2"), same,
		str("e4"), rep(""), same)
	for _, c := range []struct {
		name string
		rows uint32
		body []byte
		want []store.Mention // nil: refused
	}{
		{"valid", 4, valid, []store.Mention{
			{EntityID: "e1", ChunkID: "c1", DocID: "d"},
			{EntityID: "e2", ChunkID: "c1", DocID: "d"},
			{EntityID: "e3", ChunkID: "c2", DocID: "d"},
			{EntityID: "e4", ChunkID: "", DocID: "d"},
		}},
		{"no rows", 0, str("inst"), []store.Mention{}},
		{"first row repeats", 1, cat(str("inst"), str("e1"), same, rep("d")), nil},
		{"other instance", 4, cat(str("other"), valid[5:]), nil},
		{"cut varint", 1, cat(str("inst"), []byte{0x80}), nil},
		{"length past the end", 1, cat(str("inst"), []byte{9}, []byte("e1")), nil},
		{"trailing byte", 4, cat(valid, same), nil},
		{"rows missing", 5, valid, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "g.db.mentions")
			hdr := make([]byte, mentionFileHeader)
			copy(hdr, mentionFileMagic)
			binary.LittleEndian.PutUint64(hdr[8:], uint64(key.gen))
			binary.LittleEndian.PutUint32(hdr[48:], c.rows)
			binary.LittleEndian.PutUint32(hdr[52:], crc32.Checksum(c.body, castagnoli))
			if err := os.WriteFile(path, cat(hdr, c.body), 0o644); err != nil {
				t.Fatal(err)
			}
			mf, err := loadMentionFile(path, "inst", key)
			if (err == nil) != (c.want != nil) {
				t.Fatalf("load: %v; want accepted = %v", err, c.want != nil)
			}
			if mf == nil {
				return
			}
			got := []store.Mention{}
			if err := mf.scan(context.Background(), "g.db", func(m store.Mention) error { got = append(got, m); return nil }); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %v\nwant %v", got, c.want)
			}
		})
	}
}
