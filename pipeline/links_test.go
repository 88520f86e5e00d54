//go:build unix

package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/docgraph/docgraph/pipeline"
	"github.com/docgraph/docgraph/store"
)

// secretText is what a file outside the folders holds: a word no other
// test text has, so a search for it finds it only if it was read.
const secretText = "root:x:0:0:Quixotrysecret Zanzibarite:/root:/bin/bash\n"

// linkTree is a folder given to a run (root), a second one given with it
// (other), and a folder not given (away) holding a secret, a pipe and a
// link back into root. It returns the three folders.
func linkTree(t *testing.T) (root, other, away string) {
	t.Helper()
	base := t.TempDir()
	root, other, away = filepath.Join(base, "root"), filepath.Join(base, "other"), filepath.Join(base, "away")
	write(t, filepath.Join(root, "doc.md"), "# Doc\n\nAda Lovelace wrote the notes.")
	write(t, filepath.Join(other, "o.md"), "# Other\n\nCharles Babbage built engines.")
	write(t, filepath.Join(away, "secret.md"), secretText)
	write(t, filepath.Join(away, "passwd"), secretText)
	must(t, syscall.Mkfifo(filepath.Join(away, "pipe.txt"), 0o644))
	must(t, os.Symlink(filepath.Join(root, "doc.md"), filepath.Join(away, "back.md")))
	return root, other, away
}

// TestWalkLeavesOutLinksLeadingOutside: a symbolic link whose target, all
// links resolved, lies outside the folders given is passed over as not
// ingested, with its reason; links that stay inside (or lead into another
// folder given) are followed, whatever way they take.
func TestWalkLeavesOutLinksLeadingOutside(t *testing.T) {
	root, other, away := linkTree(t)
	must(t, os.Symlink(away, filepath.Join(root, "awaydir"))) // a folder: never followed
	tests := []struct {
		name   string
		link   string // in root
		target string
		inside bool
	}{
		{"to a file in the folder", "in.md", filepath.Join(root, "doc.md"), true},
		{"relative, to a file in the folder", "rel.md", "doc.md", true},
		{"to a file in another folder given", "other.md", filepath.Join(other, "o.md"), true},
		{"out and back in through a link outside", "back.md", filepath.Join(away, "back.md"), true},
		{"to a file outside", "secret.md", filepath.Join(away, "secret.md"), false},
		{"to a file outside with no extension", "passwd", filepath.Join(away, "passwd"), false},
		{"to a named pipe outside", "pipe.txt", filepath.Join(away, "pipe.txt"), false},
		{"relative, up and out", "up.md", "../away/secret.md", false},
		{"to a link in the folder that leads out", "hop.md", filepath.Join(root, "secret.md"), false},
		{"into a linked folder that lies outside", "via.md", filepath.Join(root, "awaydir", "secret.md"), false},
	}
	for _, tt := range tests {
		must(t, os.Symlink(tt.target, filepath.Join(root, tt.link)))
	}
	// The folder named through a link of its own: its links are judged
	// against where it really is.
	named := filepath.Join(t.TempDir(), "named")
	must(t, os.Symlink(root, named))

	for _, given := range []string{root, named} {
		files, passed, err := pipeline.Walk([]string{given, other})
		if err != nil {
			t.Fatal(err)
		}
		byPath := map[string]pipeline.FileResult{}
		for _, r := range passed {
			byPath[r.Path] = r
		}
		for _, tt := range tests {
			p := filepath.Join(given, tt.link)
			r, refused := byPath[p]
			switch {
			case tt.inside && !slices.Contains(files, p):
				t.Errorf("%s (%s): link not followed; passed over as %+v", tt.name, given, r)
			case !tt.inside && slices.Contains(files, p):
				t.Errorf("%s (%s): link followed out of the folders given", tt.name, given)
			case !tt.inside && (!refused || r.Outcome != pipeline.Unsupported || !strings.Contains(r.Error, "outside the folders given")):
				t.Errorf("%s (%s): got %+v, want unsupported, leading outside the folders given", tt.name, given, r)
			}
		}
		if r := byPath[filepath.Join(given, "awaydir")]; !strings.Contains(r.Error, "symbolic link to a folder") {
			t.Errorf("link to a folder outside: %+v", r)
		}
	}
}

// TestIngestNeverReadsOutsideLinks: a link leading outside the folders is
// never read, whether the walk meets it, a document stored before sits at
// its path, or a queued change names it; --prune drops what the path
// held before it became such a link.
func TestIngestNeverReadsOutsideLinks(t *testing.T) {
	ctx := context.Background()
	root, _, away := linkTree(t)
	secret := filepath.Join(away, "secret.md")
	must(t, os.Symlink(secret, filepath.Join(root, "leak.md")))
	p, st := newPipeline(t, filepath.Join(t.TempDir(), "g.db"), pipeline.Settings{})
	searchable := func(word string) bool {
		t.Helper()
		hits, err := st.SearchChunksText(ctx, word, 5)
		if err != nil {
			t.Fatal(err)
		}
		return len(hits) > 0
	}

	sum, err := p.Ingest(ctx, []string{root}, pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Added != 1 || sum.FilesRead != 1 || sum.Unsupported != 1 {
		t.Errorf("first run: %d added, %d files read, %d unsupported %+v; want 1, 1, 1", sum.Added, sum.FilesRead, sum.Unsupported, sum.UnsupportedFiles)
	}
	if searchable("Zanzibarite") {
		t.Fatal("the file outside the folder was read and stored")
	}

	// A document stored from a plain file, which then becomes a link out;
	// and a change queued for a path that is such a link.
	old := filepath.Join(root, "old.md")
	write(t, old, "# Old\n\nGrace Hopper met the Wombatfield committee.")
	if _, err := p.Ingest(ctx, []string{root}, pipeline.Options{}); err != nil {
		t.Fatal(err)
	}
	must(t, os.Remove(old))
	must(t, os.Symlink(secret, old))
	queued := filepath.Join(root, "queued.md")
	must(t, os.Symlink(secret, queued))
	must(t, p.MarkPending(ctx, queued))

	// doc.md may be read again (a file key taken just after a write is
	// not trusted): what matters is which files were read.
	var seen results
	p.Progress = &seen
	sum, err = p.Ingest(ctx, []string{root}, pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	seen.wantUnread(t, old, queued)
	if sum.Unsupported != 3 || searchable("Zanzibarite") {
		t.Fatalf("second run: %d unsupported %+v; the secret is searchable: %v", sum.Unsupported, sum.UnsupportedFiles, searchable("Zanzibarite"))
	}
	if !searchable("Wombatfield") {
		t.Error("without --prune, what the path held before stays")
	}
	if d, err := st.DocumentByPath(ctx, queued); err == nil {
		t.Errorf("the queued change of a link out is still there: %+v", d)
	}

	seen = results{}
	sum, err = p.Ingest(ctx, []string{root}, pipeline.Options{Prune: true})
	if err != nil {
		t.Fatal(err)
	}
	seen.wantUnread(t, old, queued)
	if sum.Deleted != 1 || searchable("Wombatfield") || searchable("Zanzibarite") {
		t.Errorf("prune: %d deleted; old text searchable %v", sum.Deleted, searchable("Wombatfield"))
	}
	if d, err := st.DocumentByPath(ctx, old); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the document of a path now leading out survived prune: %+v, %v", d, err)
	}
}

// TestWatchLeavesOutLinksLeadingOutside: watch mode holds links to the
// same rule as a batch run, in its first sync and for links made later:
// one leading out is reported as not ingested and never read, and a
// document whose path becomes one is removed; one staying inside is
// ingested.
func TestWatchLeavesOutLinksLeadingOutside(t *testing.T) {
	t.Parallel()
	_, _, away := linkTree(t)
	secret := filepath.Join(away, "secret.md")

	for _, follow := range []bool{false, true} {
		t.Run(fmt.Sprintf("sync, following outside links %v", follow), func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			write(t, filepath.Join(root, "doc.md"), "# Doc\n\nAda Lovelace wrote the notes.")
			must(t, os.Symlink(secret, filepath.Join(root, "leak.md")))
			must(t, os.Symlink(filepath.Join(root, "doc.md"), filepath.Join(root, "in.md")))
			p, st := openLifecyclePipeline(t)
			p.FollowOutsideLinks = follow
			stop := make(chan struct{})
			synced := make(chan *pipeline.Summary, 1)
			done := make(chan error, 1)
			go func() {
				done <- p.Watch(context.Background(), []string{root}, pipeline.WithDebounce(testDebounce), pipeline.WithStop(stop),
					pipeline.WithOnSynced(func(s *pipeline.Summary) { synced <- s; close(stop) }))
			}()
			// doc.md and in.md (the same text), and leak.md when followed.
			read, added := 2, 1
			if follow {
				read, added = 3, 2
			}
			select {
			case s := <-synced:
				if s.FilesRead != read || s.Added != added || s.Duplicate != 1 {
					t.Errorf("sync: %d read, %d added, %d duplicate; want %d, %d, 1", s.FilesRead, s.Added, s.Duplicate, read, added)
				}
			case err := <-done:
				t.Fatalf("Watch ended before syncing: %v", err)
			case <-time.After(waitDeadline):
				t.Fatal("initial sync did not finish")
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if hits, _ := st.SearchChunksText(context.Background(), "Zanzibarite", 5); (len(hits) > 0) != follow {
				t.Errorf("the file outside the folder searchable: %v", len(hits) > 0)
			}
		})
	}

	t.Run("later", func(t *testing.T) {
		t.Parallel()
		r := startWatch(t, testDebounce, map[string]string{
			"doc.md": "# Doc\n\nAda Lovelace wrote the notes.",
			"old.md": "# Old\n\nGrace Hopper met the Wombatfield committee.",
		})
		must(t, os.Symlink(secret, r.path("late.md")))
		if got := r.waitChange("late.md", pipeline.Unsupported); !strings.Contains(got.Error, "outside the folders given") {
			t.Errorf("reason = %q", got.Error)
		}
		must(t, os.Symlink(r.path("doc.md"), r.path("in.md")))
		r.waitChange("in.md", pipeline.Duplicate) // read: same text as doc.md
		// A stored file replaced by a link out, as ln -sf does it.
		must(t, os.Symlink(secret, r.path("old.tmp")))
		must(t, os.Rename(r.path("old.tmp"), r.path("old.md")))
		r.waitChange("old.md", pipeline.Deleted)
		if r.searchable("Wombatfield") || r.searchable("Zanzibarite") {
			t.Errorf("after the link: old text searchable %v, secret searchable %v", r.searchable("Wombatfield"), r.searchable("Zanzibarite"))
		}
		r.finish()
		for _, p := range r.paths() {
			if strings.HasPrefix(p, "old.md:") || strings.HasPrefix(p, "late.md:") {
				t.Errorf("stored: %s", p)
			}
		}
	})
}

// results is a Progress that keeps what it hears.
type results struct {
	mu sync.Mutex
	rs []pipeline.FileResult
}

func (r *results) Start(int) {}

func (r *results) File(fr pipeline.FileResult) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rs = append(r.rs, fr)
}

// wantUnread fails the test if any of paths was read.
func (r *results) wantUnread(t *testing.T, paths ...string) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, fr := range r.rs {
		if fr.Loaded && slices.Contains(paths, fr.Path) {
			t.Errorf("%s was read: %+v", fr.Path, fr)
		}
	}
}

// TestIngestFollowsOutsideLinksWhenAsked: with FollowOutsideLinks a link
// out of the folder is read like any other, and what is no regular file
// behind one still fails without being opened.
func TestIngestFollowsOutsideLinksWhenAsked(t *testing.T) {
	ctx := context.Background()
	root, _, away := linkTree(t)
	must(t, os.Symlink(filepath.Join(away, "secret.md"), filepath.Join(root, "leak.md")))
	must(t, os.Symlink(filepath.Join(away, "pipe.txt"), filepath.Join(root, "pipe.txt")))
	p, st := newPipeline(t, filepath.Join(t.TempDir(), "g.db"), pipeline.Settings{FollowOutsideLinks: true})
	sum, err := p.Ingest(ctx, []string{root}, pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Added != 2 || sum.Failed != 1 || !strings.Contains(sum.Failures[0].Error, "not a regular file (a named pipe)") {
		t.Errorf("%d added, %d failed %+v; want 2 added, the pipe failed", sum.Added, sum.Failed, sum.Failures)
	}
	if hits, _ := st.SearchChunksText(ctx, "Zanzibarite", 5); len(hits) == 0 {
		t.Error("the file the link leads to was not stored")
	}
}
