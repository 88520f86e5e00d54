package pipeline_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/docgraph/docgraph/pipeline"
)

func TestIgnorePatternsMatch(t *testing.T) {
	const rules = `
# comment line
*.draft.md
!keep.draft.md
/top.md
build/
docs/**/secret.txt
**/private/**
a?c.md
[xy]z.md
\#hash.md
trailing.md   
`
	ip := pipeline.ParseIgnorePatterns(rules)
	tests := []struct {
		path      string
		dir       bool
		ignored   bool
		undecided bool
	}{
		{path: "x.draft.md", ignored: true},
		{path: "deep/down/x.draft.md", ignored: true},
		{path: "keep.draft.md", ignored: false},          // negation re-includes
		{path: "deep/keep.draft.md", ignored: false},     // at any depth
		{path: "top.md", ignored: true},                  // anchored by the leading slash
		{path: "sub/top.md", undecided: true},            // ... so only at the top
		{path: "build", dir: true, ignored: true},        // trailing slash: folders
		{path: "build", dir: false, undecided: true},     // ... and not files
		{path: "src/build", dir: true, ignored: true},    // unanchored folder pattern
		{path: "docs/secret.txt", ignored: true},         // ** matches zero folders
		{path: "docs/a/b/secret.txt", ignored: true},     // ... or several
		{path: "other/docs/secret.txt", undecided: true}, // anchored: docs must be at the top
		{path: "private/x.md", ignored: true},
		{path: "a/b/private/c/d.md", ignored: true},
		{path: "private", dir: true, undecided: true}, // /** needs something inside
		{path: "abc.md", ignored: true},
		{path: "abbc.md", undecided: true},
		{path: "xz.md", ignored: true},
		{path: "zz.md", undecided: true},
		{path: "#hash.md", ignored: true},
		{path: "trailing.md", ignored: true}, // trailing spaces are not part of the pattern
		{path: "readme.md", undecided: true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/dir=%v", tt.path, tt.dir), func(t *testing.T) {
			ignored, decided := ip.Match(tt.path, tt.dir)
			if decided == tt.undecided || ignored != tt.ignored {
				t.Fatalf("Match(%q, dir=%v) = ignored %v, decided %v; want ignored %v, decided %v",
					tt.path, tt.dir, ignored, decided, tt.ignored, !tt.undecided)
			}
		})
	}
}

func TestIgnoreSkip(t *testing.T) {
	root := t.TempDir()
	put := func(rel, text string) {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	put(pipeline.IgnoreFile, "drafts/\n*.log.md\n")
	put("notes/"+pipeline.IgnoreFile, "!keep.log.md\nlocal.md\n")
	put("drafts/"+pipeline.IgnoreFile, "!*\n") // inside an ignored folder: never read
	ig, err := pipeline.NewIgnore([]string{root})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		rel  string
		dir  bool
		skip bool
	}{
		{rel: "a.md"},
		{rel: "x.log.md", skip: true},
		{rel: "notes/keep.log.md"},              // the deeper file re-includes it
		{rel: "notes/other.log.md", skip: true}, // the root file still applies below
		{rel: "notes/local.md", skip: true},     // the deeper file's own pattern
		{rel: "local.md"},                       // ... relative to its own folder only
		{rel: "drafts/a.md", skip: true},        // inside an ignored folder
		{rel: "drafts/keep.md", skip: true},     // a folder's exclusion cannot be undone inside it
		{rel: "drafts", dir: true, skip: true},  // the folder itself
		{rel: ".hidden.md", skip: true},         // hidden file
		{rel: ".git/config.md", skip: true},     // inside a hidden folder
		{rel: "a.md.swp", skip: true},           // vim swap
		{rel: ".a.md.swp", skip: true},          // vim swap, hidden form
		{rel: "a.md~", skip: true},              // backup
		{rel: ".#a.md", skip: true},             // emacs lock
		{rel: "#a.md#", skip: true},             // emacs autosave
		{rel: "4913", skip: true},               // vim's write probe
		{rel: "sub/a.md.tmp", skip: true},       // temp file of an atomic save
		{rel: "sub", dir: true},                 // plain folder
		{rel: "../outside.md", skip: true},      // not under the root
		{rel: pipeline.IgnoreFile, skip: true},  // the rules file itself
		{rel: "notes/" + pipeline.IgnoreFile, skip: true},
	}
	for _, tt := range tests {
		t.Run(tt.rel, func(t *testing.T) {
			p := filepath.Clean(filepath.Join(root, tt.rel))
			if got := ig.Skip(p, tt.dir); got != tt.skip {
				t.Fatalf("Skip(%s, dir=%v) = %v, want %v", tt.rel, tt.dir, got, tt.skip)
			}
		})
	}

	// Reload picks up an edited rules file.
	put(pipeline.IgnoreFile, "drafts/\n")
	if err := ig.Reload(); err != nil {
		t.Fatal(err)
	}
	if ig.Skip(filepath.Join(root, "x.log.md"), false) {
		t.Fatal("x.log.md is still skipped after its pattern was removed and the rules reloaded")
	}
}

func ExampleIgnorePatterns_Match() {
	ip := pipeline.ParseIgnorePatterns("drafts/\n*.tmp.md\n!keep.tmp.md\n")
	for _, p := range []string{"drafts", "notes/a.tmp.md", "keep.tmp.md", "notes/a.md"} {
		ignored, decided := ip.Match(p, p == "drafts")
		fmt.Printf("%s: ignored=%v decided=%v\n", p, ignored, decided)
	}
	// Output:
	// drafts: ignored=true decided=true
	// notes/a.tmp.md: ignored=true decided=true
	// keep.tmp.md: ignored=false decided=true
	// notes/a.md: ignored=false decided=false
}
