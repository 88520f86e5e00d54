package sqlite

import (
	"context"
	"path/filepath"
	"testing"
)

// TestVectorLogCatchUp: a second handle on the file (another process's
// view) follows the writer's changes through the vector log, reading only
// the rows that changed, and answers exactly as a fresh load would; with a
// gap in the log it loads everything instead.
func TestVectorLogCatchUp(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "g.db")
	writer := sidecarStore(t, path, "d1", "d2", "d3")
	reader := openAt(t, path)
	if err := reader.Warm(ctx); err != nil {
		t.Fatal(err)
	}
	catchUps := func() (n int64) {
		for _, x := range reader.vecIndexes() {
			n += x.catchUps.Load()
		}
		return n
	}
	steps := []struct {
		name  string
		write func()
	}{
		{"replace", func() { writeSynthetic(t, writer, "d2", 99) }},
		{"delete", func() {
			if err := writer.DeleteDocument(ctx, "d1"); err != nil {
				t.Fatal(err)
			}
		}},
		{"add two", func() { writeSynthetic(t, writer, "d4", 4); writeSynthetic(t, writer, "d5", 5) }},
		{"rename", func() {
			if err := writer.RenameDocument(ctx, "d3", "moved.txt"); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, st := range steps {
		before := catchUps()
		st.write()
		checkAgainstRows(t, reader)
		if got := catchUps() - before; got != 3 {
			t.Errorf("after %s: %d of 3 indexes caught up from the log", st.name, got)
		}
	}

	// A write that left no log (an older docgraph, or pruned): full load.
	writeSynthetic(t, writer, "d6", 6)
	gen, err := writer.generation(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := writer.wdb.ExecContext(ctx, `DELETE FROM vector_log WHERE gen = ?`, gen); err != nil {
		t.Fatal(err)
	}
	before := catchUps()
	checkAgainstRows(t, reader)
	if got := catchUps() - before; got != 0 {
		t.Errorf("%d indexes caught up over a gap in the log", got)
	}
}

func TestRenameMovesGraphVersion(t *testing.T) {
	ctx := context.Background()
	s := sidecarStore(t, filepath.Join(t.TempDir(), "g.db"), "d1")
	v1, err := s.GraphVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RenameDocument(ctx, "d1", "elsewhere.txt"); err != nil {
		t.Fatal(err)
	}
	v2, err := s.GraphVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if v1 == v2 {
		t.Errorf("GraphVersion %s unchanged by a rename: other processes keep the old path", v1)
	}
}
