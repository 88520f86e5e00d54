package storetest

import (
	"errors"
	"reflect"
	"testing"

	"github.com/docgraph/docgraph/store"
)

// RunGraphScanner checks the whole-graph reads of store.GraphScanner on
// stores opened with open: ScanMentions returns exactly the mentions of done
// documents, and GraphVersion moves with every change that alters them.
func RunGraphScanner(t *testing.T, open func(t *testing.T) store.Store) {
	s := suite{open: open}
	t.Run("ScanMentions", s.testScanMentions)
	t.Run("GraphVersion", s.testGraphVersion)
}

// mentionsOf is what a scan should return for the writes: one edge per
// entity-chunk pair.
func mentionsOf(ws ...*store.DocumentWrite) []store.Mention {
	seen := map[store.Mention]bool{}
	var out []store.Mention
	for _, w := range ws {
		for _, m := range w.Entities {
			e := store.Mention{EntityID: m.EntityID, ChunkID: m.ChunkID, DocID: w.Document.ID}
			if !seen[e] {
				seen[e] = true
				out = append(out, e)
			}
		}
	}
	sortMentions(out)
	return out
}

func scanner(t *testing.T, st store.Store) store.GraphScanner {
	t.Helper()
	gs, ok := st.(store.GraphScanner)
	if !ok {
		t.Fatalf("%T does not implement store.GraphScanner", st)
	}
	return gs
}

func (s suite) testScanMentions(t *testing.T) {
	st, _ := s.fresh(t)
	ctx := ctxFor(t)
	gs := scanner(t, st)
	scan := func() []store.Mention {
		t.Helper()
		var got []store.Mention
		if err := gs.ScanMentions(ctx, func(m store.Mention) error {
			got = append(got, m)
			return nil
		}); err != nil {
			t.Fatalf("ScanMentions: %v", err)
		}
		sortMentions(got)
		return got
	}
	if got := scan(); len(got) != 0 {
		t.Errorf("empty store: ScanMentions = %v", got)
	}

	rhine, ports := rhineV1().write(), ports().write()
	// A second fragment of an entity in the same chunk is still one edge.
	dup := ports.Entities[0]
	dup.Description = "another fragment"
	ports.Entities = append(ports.Entities, dup)
	mustWrite(t, st, rhine, ports)
	if got, want := scan(), mentionsOf(rhine, ports); !reflect.DeepEqual(got, want) {
		t.Errorf("ScanMentions = %v\nwant %v", got, want)
	}

	// A document back in processing drops out, like it does from search.
	if err := st.SetStatus(ctx, rhine.Document, store.StatusProcessing, ""); err != nil {
		t.Fatal(err)
	}
	if got, want := scan(), mentionsOf(ports); !reflect.DeepEqual(got, want) {
		t.Errorf("with rhine processing: ScanMentions = %v\nwant %v", got, want)
	}
	mustWrite(t, st, rhine)

	// Replacing a version swaps its edges.
	v2 := rhineV2().write(rhine.Document.ID)
	mustWrite(t, st, v2)
	if got, want := scan(), mentionsOf(ports, v2); !reflect.DeepEqual(got, want) {
		t.Errorf("after replace: ScanMentions = %v\nwant %v", got, want)
	}

	if err := st.DeleteDocument(ctx, ports.Document.ID); err != nil {
		t.Fatal(err)
	}
	if got, want := scan(), mentionsOf(v2); !reflect.DeepEqual(got, want) {
		t.Errorf("after delete: ScanMentions = %v\nwant %v", got, want)
	}

	// An error from the callback stops the scan and comes back.
	stop := errors.New("enough")
	calls := 0
	err := gs.ScanMentions(ctx, func(store.Mention) error {
		calls++
		return stop
	})
	if !errors.Is(err, stop) || calls != 1 {
		t.Errorf("ScanMentions with a failing callback: error %v after %d calls; want %v after 1", err, calls, stop)
	}
}

func (s suite) testGraphVersion(t *testing.T) {
	st, _ := s.fresh(t)
	ctx := ctxFor(t)
	gs := scanner(t, st)
	seen := map[string]string{}
	version := func(after string) {
		t.Helper()
		v, err := gs.GraphVersion(ctx)
		if err != nil {
			t.Fatalf("GraphVersion after %s: %v", after, err)
		}
		if prev, dup := seen[v]; dup {
			t.Errorf("GraphVersion after %s = %q, the same as after %s", after, v, prev)
		}
		seen[v] = after
	}
	version("open")
	if v, err := gs.GraphVersion(ctx); err != nil || seen[v] != "open" {
		t.Errorf("GraphVersion changed without a change: %q, %v", v, err)
	}
	rhine, ports := rhineV1().write(), ports().write()
	mustWrite(t, st, rhine)
	version("first write")
	mustWrite(t, st, ports)
	version("second write")
	if err := st.SetStatus(ctx, rhine.Document, store.StatusProcessing, ""); err != nil {
		t.Fatal(err)
	}
	version("status change")
	mustWrite(t, st, rhine)
	version("rewrite")
	if err := st.DeleteDocument(ctx, rhine.Document.ID); err != nil {
		t.Fatal(err)
	}
	version("delete")
}
