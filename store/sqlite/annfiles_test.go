package sqlite

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docgraph/docgraph/store"
	"github.com/docgraph/docgraph/store/ann"
	"github.com/docgraph/docgraph/store/storetest"
)

// writtenStore makes a store of annDocs(n) at a new path, closed (its
// index files current), and returns its path and documents.
func writtenStore(t *testing.T, n int) (string, []*store.DocumentWrite) {
	t.Helper()
	ctx := context.Background()
	opts := storetest.Options()
	path := filepath.Join(t.TempDir(), "g.db")
	s, err := Open(ctx, path, opts)
	if err != nil {
		t.Fatal(err)
	}
	docs := annDocs(n, opts.Embedder.Dimension)
	if err := s.WriteDocuments(ctx, docs...); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return path, docs
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// neverSearched checks, after damage was done to an index file, what a
// reader and then a writer make of it: a read-only handle answers as
// scanning does, by scanning (the file is never searched), and a writer
// opening the store builds the file again, after which searches go
// through it and still answer as scanning does.
func neverSearched(t *testing.T, path string, docs []*store.DocumentWrite) {
	t.Helper()
	ctx := context.Background()
	opts := storetest.Options()
	ro, err := Open(ctx, path, store.Options{Embedder: opts.Embedder, Merger: opts.Merger, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	sameAsScanning(t, ro, "read-only, with the damaged file", docs[:3])
	if n := ro.ann.scanned.Load(); n < 3 {
		t.Errorf("%d of 3 chunk searches scanned: the damaged file was searched", n)
	}
	ro.Close()

	w, err := Open(ctx, path, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := Open(ctx, path, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	filesCurrent(t, s, path)
	sameAsScanning(t, s, "after a writer opened the store", docs[:3])
	if s.ann.scanned.Load() != 0 {
		t.Errorf("%d searches scanned after a writer opened the store: the file was not built again", s.ann.scanned.Load())
	}
}

// TestIndexFileDamagedPastHeader: bytes flipped in an index file past its
// header (in the nodes' codes, ids and lists) are noticed: the file is
// never searched, and the next writer builds it again.
func TestIndexFileDamagedPastHeader(t *testing.T) {
	path, docs := writtenStore(t, 80)
	file := path + ".ann-chunks"
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	// One in 8 bytes that hold something (the unused room of the arrays
	// is zero), past the header's page.
	r := rand.New(rand.NewPCG(4, 4))
	flipped := 0
	for i := 4096; i < len(b); i++ {
		if b[i] != 0 && r.IntN(8) == 0 {
			b[i] ^= byte(1 + r.IntN(255))
			flipped++
		}
	}
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d bytes flipped in %s (%d bytes)", flipped, filepath.Base(file), len(b))
	neverSearched(t, path, docs)
}

// TestIndexFileOfOlderFormat: an index file of the format before the files
// checked themselves (version 1, whose first bytes are these) is not
// misread: never searched, built again by the next writer.
func TestIndexFileOfOlderFormat(t *testing.T) {
	path, docs := writtenStore(t, 12)
	file := path + ".ann-chunks"
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if string(b[:8]) != "docgANN1" {
		t.Fatalf("magic %q", b[:8])
	}
	b[8], b[9], b[10], b[11] = 1, 0, 0, 0 // the version, little-endian
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	neverSearched(t, path, docs)
}

// TestIndexFileOfAnotherIndex: an index file copied over another (the
// entity index over the chunk index of the same store, or the chunk index
// of another store) is not taken for it: never searched, built again by
// the next writer.
func TestIndexFileOfAnotherIndex(t *testing.T) {
	t.Run("another kind", func(t *testing.T) {
		path, docs := writtenStore(t, 80)
		copyFile(t, path+".ann-entities", path+".ann-chunks")
		neverSearched(t, path, docs)
	})
	t.Run("another store", func(t *testing.T) {
		path, docs := writtenStore(t, 80)
		// A store written the same way but with other documents: its
		// files hold the same generations.
		other, _ := writtenStore(t, 80)
		ctx := context.Background()
		s, err := Open(ctx, other, storetest.Options())
		if err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteDocument(ctx, docs[0].Document.ID); err != nil {
			t.Fatal(err)
		}
		if err := s.WriteDocuments(ctx, annDocs(81, storetest.Dimension)[80]); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		copyFile(t, other+".ann-chunks", path+".ann-chunks")
		neverSearched(t, path, docs)
	})
}

// The leftover test runs the test binary as a child that writes index
// files (leftoverModeEnv "build": it builds the chunk index again and
// again, each time a new file renamed over the old one) or holds one
// (leftoverModeEnv "hold": it holds the entity index's writer lock with a
// new file of its own half-written beside it, as a writer in the middle
// of writing one does).
const (
	leftoverPathEnv = "DOCGRAPH_SQLITE_LEFTOVER_PATH"
	leftoverModeEnv = "DOCGRAPH_SQLITE_LEFTOVER_MODE"
	leftoverReady   = "DOCGRAPH-LEFTOVER-READY"
)

// TestLeftoverChild is the child of TestLeftoverIndexFilesRemoved; it
// does nothing unless run by it.
func TestLeftoverChild(t *testing.T) {
	path := os.Getenv(leftoverPathEnv)
	if path == "" {
		return
	}
	ctx := context.Background()
	dim := storetest.Dimension
	switch os.Getenv(leftoverModeEnv) {
	case "build":
		file := path + ".ann-chunks"
		os.Remove(file)
		r := rand.New(rand.NewPCG(5, 5))
		vecs := make([][]float32, 20_000)
		for i := range vecs {
			vecs[i] = make([]float32, dim)
			for j := range vecs[i] {
				vecs[i][j] = float32(r.NormFloat64())
			}
		}
		for gen := uint64(1); ; gen++ {
			w, err := ann.OpenWriter(ctx, file, ann.Options{Dim: dim})
			if err != nil {
				t.Fatal(err)
			}
			err = w.Build(gen, func(yield func(int64, []float32) bool) {
				for i, v := range vecs {
					if !yield(int64(i), v) {
						return
					}
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			w.Close()
		}
	case "apply":
		// A writer of the chunk index, as the store's (its label), that
		// applies vectors the store does not hold, again and again.
		s, err := Open(ctx, path, storetest.Options())
		if err != nil {
			t.Fatal(err)
		}
		label := annLabel(kindChunk, s.instance)
		gen, _ := s.generation(ctx)
		s.Close()
		w, err := ann.OpenWriter(ctx, path+".ann-chunks", ann.Options{Dim: dim, Label: label})
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(6, 6))
		items := make([]ann.Item, 3000)
		for i := range items {
			v := make([]float32, dim)
			for j := range v {
				v[j] = float32(r.NormFloat64())
			}
			items[i] = ann.Item{ID: int64(i % 400), Vec: v}
		}
		for {
			if err := w.Apply(uint64(gen), items, nil); err != nil {
				t.Fatal(err)
			}
		}
	case "hold":
		// The writer's lock (ann.OpenWriter's), and a new file named as
		// its writer names them, part written.
		file := path + ".ann-entities"
		lf, err := os.OpenFile(file+".lock", os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		if err := syscall.Flock(int(lf.Fd()), syscall.LOCK_EX); err != nil {
			t.Fatal(err)
		}
		f, err := os.CreateTemp(filepath.Dir(file), filepath.Base(file)+".*.tmp")
		if err != nil {
			t.Fatal(err)
		}
		f.Write(make([]byte, 1<<16))
		fmt.Println(leftoverReady, f.Name())
		select {} // until killed
	}
}

// startLeftoverChild starts TestLeftoverChild in mode for the store at
// path; done is closed when it has exited.
func startLeftoverChild(t *testing.T, path, mode string) (cmd *exec.Cmd, out io.Reader, done chan struct{}) {
	t.Helper()
	cmd = exec.Command(os.Args[0], "-test.run=^TestLeftoverChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), leftoverPathEnv+"="+path, leftoverModeEnv+"="+mode)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done = make(chan struct{})
	go func() {
		cmd.Wait()
		close(done)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-done
	})
	return cmd, out, done
}

// writing reports whether a temporary file with some contents is beside
// the store at path, larger than a new empty index file: the image of a
// build.
func writing(t *testing.T, path string) bool {
	for _, name := range temps(t, path) {
		if fi, err := os.Stat(name); err == nil && fi.Size() > 1<<20 {
			return true
		}
	}
	return false
}

// temps lists the index writers' temporary files beside the store at path.
func temps(t *testing.T, path string) []string {
	t.Helper()
	var out []string
	for _, name := range annNames {
		m, err := filepath.Glob(path + ".ann-" + name + ".*.tmp")
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m...)
	}
	return out
}

// TestLeftoverIndexFilesRemoved: a writer killed while it writes a new
// index file (before renaming it over the old one) leaves it behind, as
// large as the index; the next open of the store by a writer removes it,
// but not the new file another process is writing at that moment.
func TestLeftoverIndexFilesRemoved(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	path, _ := writtenStore(t, 4)
	// Kill a writer as soon as one of its new files is seen with some of
	// a build's contents, until one is left behind (the kill can also come
	// just after the rename).
	var left []string
	for attempt := 0; len(left) == 0; attempt++ {
		if attempt == 50 {
			t.Fatal("no new index file left behind after 50 kills")
		}
		cmd, _, done := startLeftoverChild(t, path, "build")
		for !writing(t, path) {
			select {
			case <-done:
				t.Fatal("the writing child exited")
			case <-time.After(100 * time.Microsecond): // then look again
			}
		}
		cmd.Process.Signal(syscall.SIGKILL)
		<-done
		left = temps(t, path)
	}
	fi, err := os.Stat(left[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("left behind by the killed writer: %s, %d bytes", filepath.Base(left[0]), fi.Size())

	// Another process writes a new entity index file right now.
	holder, out, held := startLeftoverChild(t, path, "hold")
	sc := bufio.NewScanner(out)
	var live string
	for sc.Scan() {
		if name, ok := strings.CutPrefix(sc.Text(), leftoverReady+" "); ok {
			live = name
			break
		}
	}
	if live == "" {
		t.Fatal("the holding child did not start")
	}

	s, err := Open(context.Background(), path, storetest.Options())
	if err != nil {
		t.Fatal(err)
	}
	got := temps(t, path)
	if len(got) != 1 || got[0] != live {
		t.Errorf("after a writer opened the store: %v; want only the live writer's %s", got, filepath.Base(live))
	}
	holder.Process.Signal(syscall.SIGKILL)
	<-held
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestDirtyIndexFileBuiltAnew: an index file that a writer died applying
// to (dirty: its blocks' sums are behind, so it cannot be checked) is
// built anew from the store by the next writer, not repaired in place,
// which would vouch for whatever the dead writer left in it.
func TestDirtyIndexFileBuiltAnew(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	path, docs := writtenStore(t, 80)
	file := path + ".ann-chunks"
	// dirty reports that the file is dirty, and holds what a finished
	// Apply of the dead writer left (ids past the store's 320 chunks).
	dirty := func() bool {
		r, err := ann.OpenReader(file)
		if err != nil {
			return false
		}
		defer r.Close()
		return r.Dirty() && r.Len() > 320
	}
	// Kill a writer in the middle of an Apply, until one is left dirty.
	for attempt := 0; !dirty(); attempt++ {
		if attempt == 50 {
			t.Fatal("no index file left dirty after 50 kills")
		}
		cmd, _, done := startLeftoverChild(t, path, "apply")
		for !dirty() {
			select {
			case <-done:
				t.Fatal("the applying child exited")
			case <-time.After(100 * time.Microsecond): // then look again
			}
		}
		cmd.Process.Signal(syscall.SIGKILL)
		<-done
	}
	before, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}

	ctx := context.Background()
	w, err := Open(ctx, path, storetest.Options())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	after, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if os.SameFile(before, after) {
		t.Error("the dirty file was repaired in place, not built anew")
	}
	s, err := Open(ctx, path, storetest.Options())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	filesCurrent(t, s, path)
	// Built from the store: it holds the store's chunks and nothing else
	// (the dead writer's vectors had ids up to 399).
	var chunks int
	if err := s.rdb.QueryRow(`SELECT count(*) FROM vectors WHERE kind = 0`).Scan(&chunks); err != nil {
		t.Fatal(err)
	}
	if r, err := ann.OpenReader(file); err != nil || r.Len() != chunks {
		t.Errorf("the index file holds %d vectors (%v), the store %d chunks", r.Len(), err, chunks)
	} else {
		r.Close()
	}
	sameAsScanning(t, s, "after a writer opened the store", docs[:3])
	if s.ann.scanned.Load() != 0 {
		t.Errorf("%d searches scanned: the file was not built again", s.ann.scanned.Load())
	}
}
