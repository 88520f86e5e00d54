package pgraph

import (
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// sample is a graph with a hub (entity 7 in every chunk), a chunk no
// entity mentions, a repeated edge, documents with titles of several
// lengths, and enough chunks that the body spans several blocks.
func sample() Input {
	in := Input{Version: "12/m3", Instance: "abc"}
	for d := range 30 {
		in.Docs = append(in.Docs, Doc{ID: fmt.Sprintf("doc%02d", d), Title: strings.Repeat("T", d%3) + fmt.Sprint(d)})
	}
	for c := range 600 {
		in.Chunks = append(in.Chunks, Chunk{ID: fmt.Sprintf("doc%02d#%04d", c%30, c), Doc: c % 30})
	}
	for c := range 600 {
		if c == 5 {
			continue // a chunk with no entity
		}
		in.Edges = append(in.Edges, Edge{Entity: 7, Chunk: c})
		in.Edges = append(in.Edges, Edge{Entity: int64(-1000 + c%50), Chunk: c})
		in.Edges = append(in.Edges, Edge{Entity: int64(1 << 40 * (c % 3)), Chunk: c})
	}
	in.Edges = append(in.Edges, Edge{Entity: 7, Chunk: 0}) // again
	return in
}

// answers reads every node of in (and unknown ones) from f at maxChunks,
// as text to compare, or the first error.
func answers(f *File, in Input, maxChunks int) (string, error) {
	r := f.Reader()
	var b strings.Builder
	keys := map[int64]bool{12345: true}
	for _, e := range in.Edges {
		keys[e.Entity] = true
	}
	for k := range keys {
		found, n, chunks, err := r.Entity(k, maxChunks)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "e%d %v %d %v\n", k, found, n, chunks)
	}
	for _, c := range append(in.Chunks, Chunk{ID: "nope"}) {
		found, info, ents, hubs, err := r.Chunk(c.ID, maxChunks)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "c%s %v %v %v %d\n", c.ID, found, info, ents, hubs)
	}
	return b.String(), nil
}

func write(t *testing.T, in Input) string {
	t.Helper()
	if !Supported {
		t.Skip("files are not mapped on this system")
	}
	path := filepath.Join(t.TempDir(), "g.pgraph")
	if err := Write(path, in); err != nil {
		t.Fatal(err)
	}
	return path
}

func open(t *testing.T, path string) *File {
	t.Helper()
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestRoundTrip(t *testing.T) {
	in := sample()
	f := open(t, write(t, in))
	if f.Version() != "12/m3" || f.Instance() != "abc" {
		t.Errorf("version %q instance %q", f.Version(), f.Instance())
	}
	if st := f.Stats(); st != (Stats{Entities: 1 + 50 + 3, Chunks: 599, Docs: 30, Edges: 3 * 599}) {
		t.Errorf("stats %+v", st)
	}
	r := f.Reader()
	chunkInfo := func(c int) ChunkInfo {
		return ChunkInfo{ID: in.Chunks[c].ID, DocID: in.Docs[c%30].ID, DocTitle: in.Docs[c%30].Title}
	}
	for _, c := range []struct {
		key       int64
		maxChunks int
		found     bool
		n         int
		hub       bool
	}{
		{7, 0, true, 599, false},
		{7, 40, true, 599, true},
		{-1000 + 5, 40, true, 11, false}, // chunk 5's edges were left out
		{-1000 + 6, 40, true, 12, false},
		{-1000 + 6, 11, true, 12, true},
		{-1000 + 6, 12, true, 12, false},
		{12345, 0, false, 0, false},
	} {
		found, n, chunks, err := r.Entity(c.key, c.maxChunks)
		if err != nil || found != c.found || n != c.n || (chunks == nil) != (c.hub || !c.found) {
			t.Errorf("entity %d max %d: found %v n %d chunks %d err %v; want %v %d hub %v", c.key, c.maxChunks, found, n, len(chunks), err, c.found, c.n, c.hub)
			continue
		}
		for i := 1; i < len(chunks); i++ {
			if chunks[i-1].ID >= chunks[i].ID {
				t.Errorf("entity %d: chunks out of id order: %q then %q", c.key, chunks[i-1].ID, chunks[i].ID)
			}
		}
	}
	// Entity -994 is in chunks 6, 56, 106, ...: the first by id is 6's.
	_, _, chunks, _ := r.Entity(-994, 0)
	if len(chunks) != 12 || chunks[0] != chunkInfo(6) {
		t.Errorf("entity -994: first chunk %+v", chunks)
	}
	found, info, ents, hubs, err := r.Chunk(in.Chunks[31].ID, 40)
	if err != nil || !found || info != chunkInfo(31) || !reflect.DeepEqual(ents, []int64{-1000 + 31}) || hubs != 2 {
		t.Errorf("chunk 31 max 40: %v %+v %v %d %v", found, info, ents, hubs, err)
	}
	found, _, ents, hubs, _ = r.Chunk(in.Chunks[31].ID, 0)
	if !found || !reflect.DeepEqual(ents, []int64{-1000 + 31, 7, 1 << 40}) || hubs != 0 {
		t.Errorf("chunk 31 max 0: %v %v %d", found, ents, hubs)
	}
	if found, _, _, _, err := r.Chunk(in.Chunks[5].ID, 0); found || err != nil {
		t.Errorf("chunk 5 (no entity): found %v err %v", found, err)
	}
}

func TestEmptyGraph(t *testing.T) {
	f := open(t, write(t, Input{Version: "1/m0"}))
	if found, _, _, err := f.Reader().Entity(1, 0); found || err != nil {
		t.Errorf("entity: %v %v", found, err)
	}
	if found, _, _, _, err := f.Reader().Chunk("a", 0); found || err != nil {
		t.Errorf("chunk: %v %v", found, err)
	}
}

func TestMissing(t *testing.T) {
	if _, err := Open(filepath.Join(t.TempDir(), "none")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

// TestTruncated: every shorter prefix of a file is refused at Open.
func TestTruncated(t *testing.T) {
	path := write(t, sample())
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "cut")
	for n := 0; n < len(data); n += max(1, n/16) {
		if err := os.WriteFile(cut, data[:n], 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := Open(cut)
		if err == nil {
			f.Close()
			t.Fatalf("%d of %d bytes: opened", n, len(data))
		}
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("%d of %d bytes: %v, want ErrCorrupt", n, len(data), err)
		}
	}
}

// TestDamaged: a file with any one byte changed is refused at Open or
// gives ErrCorrupt when the changed part is read, never a panic or an
// answer other than the intact file's. Only the padding after the block
// checksums is covered by no checksum, and changing it changes nothing.
func TestDamaged(t *testing.T) {
	in := sample()
	path := write(t, in)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, err := answers(open(t, path), in, 40)
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "bad")
	var refused, caught, same int
	f0, err := parse(data)
	if err != nil {
		t.Fatal(err)
	}
	bodyAt := len(data) - len(f0.body)
	// Every byte of the header and checksums, then every 29th of the body.
	for i := 0; i < len(data); i = next(i, bodyAt) {
		d := append([]byte(nil), data...)
		d[i] ^= 0x5a
		if err := os.WriteFile(bad, d, 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := Open(bad)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("byte %d: %v", i, err)
			}
			refused++
			continue
		}
		got, err := answers(f, in, 40)
		switch {
		case err != nil && errors.Is(err, ErrCorrupt) && f.Damaged():
			caught++
		case err != nil:
			t.Errorf("byte %d: %v", i, err)
		case got != want:
			t.Errorf("byte %d: answers differ from the intact file's", i)
		default:
			same++
		}
		f.Close()
	}
	t.Logf("%d bytes: refused %d, caught %d, unnoticed %d", len(data), refused, caught, same)
	if same > 4 {
		t.Errorf("%d changed bytes went unnoticed (refused %d, caught %d)", same, refused, caught)
	}
	if refused == 0 || caught == 0 {
		t.Errorf("refused %d, caught %d: expected both", refused, caught)
	}
}

func next(i, bodyAt int) int {
	if i < bodyAt {
		return i + 1
	}
	return i + 29
}

// TestBadOffsets: a file whose checksums hold but whose offsets point
// outside their sections (a writer's bug) gives ErrCorrupt, not a panic.
func TestBadOffsets(t *testing.T) {
	in := sample()
	good, err := encode(in)
	if err != nil {
		t.Fatal(err)
	}
	f0, err := parse(good)
	if err != nil {
		t.Fatal(err)
	}
	bodyAt := len(good) - len(f0.body)
	for _, c := range []struct {
		name string
		sec  int
		at   uint64
		val  uint32
	}{
		{"entity run past the edges", secEntStart, 4, 1 << 30},
		{"chunk run backwards", secChunkStart, 8, 0},
		{"chunk number", secEntEdges, 0, 1 << 29},
		{"entity number", secChunkEdges, 0, 1 << 29},
		{"document number", secChunkDoc, 0, 1 << 29},
		{"string offset", secChunkID, 4, 1 << 31},
		{"title offset", secDocTitle, 0, 1 << 31},
	} {
		d := append([]byte(nil), good...)
		le.PutUint32(d[bodyAt+int(f0.off[c.sec]+c.at):], c.val)
		f, err := parse(d)
		if err != nil {
			t.Fatal(err)
		}
		// Make the checksums match, as a buggy writer would.
		for b := range (len(f.body) + blockSize - 1) / blockSize {
			end := min((b+1)*blockSize, len(f.body))
			le.PutUint32(f.crcs[4*b:], crc32.Checksum(f.body[b*blockSize:end], castagnoli))
		}
		if _, err := answers(f, in, 0); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", c.name, err)
		}
	}
}
