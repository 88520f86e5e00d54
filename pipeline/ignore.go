package pipeline

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
)

// IgnoreFile names the per-folder file of gitignore-style patterns that keep
// files out of the graph in watch mode. Patterns are relative to the folder
// holding the file; deeper files take precedence, as in git.
const IgnoreFile = ".docgraphignore"

// IgnorePatterns is one parsed ignore file. It supports the gitignore subset
// people write: *, ?, [abc], ** across folders, a leading / to anchor, a
// trailing / for folders only, ! to re-include, # comments and \ escapes.
type IgnorePatterns struct {
	rules []ignoreRule
}

type ignoreRule struct {
	segs     []string // pattern split on "/"; "**" is a segment of its own
	negate   bool
	dirOnly  bool
	anchored bool // contains a slash: matched from the folder, not at any depth
}

// ParseIgnorePatterns parses the text of an ignore file.
func ParseIgnorePatterns(text string) *IgnorePatterns {
	ip := &IgnorePatterns{}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSuffix(line, "\r")
		line = trimUnescapedSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var r ignoreRule
		if strings.HasPrefix(line, "!") {
			r.negate, line = true, line[1:]
		} else if strings.HasPrefix(line, `\!`) || strings.HasPrefix(line, `\#`) {
			line = line[1:]
		}
		if strings.HasSuffix(line, "/") {
			r.dirOnly, line = true, strings.TrimRight(line, "/")
		}
		if strings.Contains(line, "/") {
			r.anchored, line = true, strings.TrimPrefix(line, "/")
		}
		if line == "" {
			continue
		}
		r.segs = strings.Split(line, "/")
		ip.rules = append(ip.rules, r)
	}
	return ip
}

// trimUnescapedSpace drops trailing spaces unless the last one is escaped.
func trimUnescapedSpace(s string) string {
	for strings.HasSuffix(s, " ") && !strings.HasSuffix(s, `\ `) {
		s = s[:len(s)-1]
	}
	if strings.HasSuffix(s, `\ `) {
		s = s[:len(s)-2] + " "
	}
	return s
}

// Match reports how the patterns decide rel, a slash-separated path relative
// to the ignore file's folder: decided is false when no pattern matches,
// otherwise ignored is the verdict of the last matching pattern. Folders that
// contain rel are not consulted; Ignore does that.
func (ip *IgnorePatterns) Match(rel string, isDir bool) (ignored, decided bool) {
	if ip == nil {
		return false, false
	}
	parts := strings.Split(strings.Trim(rel, "/"), "/")
	for i := len(ip.rules) - 1; i >= 0; i-- {
		r := ip.rules[i]
		if r.dirOnly && !isDir {
			continue
		}
		ok := false
		if r.anchored {
			ok = matchSegments(r.segs, parts)
		} else {
			ok = matchSegments(r.segs, parts[len(parts)-1:])
		}
		if ok {
			return !r.negate, true
		}
	}
	return false, false
}

// matchSegments matches path segments against pattern segments, where a
// "**" segment stands for zero or more whole segments.
func matchSegments(pat, parts []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			rest := pat[1:]
			if len(rest) == 0 {
				return len(parts) > 0
			}
			for i := 0; i <= len(parts); i++ {
				if matchSegments(rest, parts[i:]) {
					return true
				}
			}
			return false
		}
		if len(parts) == 0 {
			return false
		}
		if ok, err := path.Match(pat[0], parts[0]); err != nil || !ok {
			return false
		}
		pat, parts = pat[1:], parts[1:]
	}
	return len(parts) == 0
}

// Ignore decides which paths under a set of root folders watch mode leaves
// alone: hidden files and folders, editors' swap, backup and probe files,
// and whatever the folders' .docgraphignore files exclude. It is safe for
// concurrent use; Reload picks up edited ignore files.
type Ignore struct {
	roots []string

	mu    sync.RWMutex
	files map[string]*IgnorePatterns // folder -> its parsed ignore file
}

// NewIgnore reads the ignore files under the roots (absolute folders).
func NewIgnore(roots []string) (*Ignore, error) {
	ig := &Ignore{roots: roots}
	if err := ig.Reload(); err != nil {
		return nil, err
	}
	return ig, nil
}

// Reload re-reads every ignore file under the roots, skipping folders that
// are themselves ignored (git does not look inside those either).
func (ig *Ignore) Reload() error {
	files := map[string]*IgnorePatterns{}
	for _, root := range ig.roots {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if d != nil && d.IsDir() && p != root {
					return fs.SkipDir
				}
				return nil
			}
			if !d.IsDir() {
				return nil
			}
			if p != root && ig.skipWith(files, p, true) {
				return fs.SkipDir
			}
			data, err := os.ReadFile(filepath.Join(p, IgnoreFile))
			switch {
			case err == nil:
				files[p] = ParseIgnorePatterns(string(data))
			case errors.Is(err, fs.ErrNotExist):
			default:
				return fmt.Errorf("read %s: %w", filepath.Join(p, IgnoreFile), err)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("ignore rules under %s: %w", root, err)
		}
	}
	ig.mu.Lock()
	ig.files = files
	ig.mu.Unlock()
	return nil
}

// Skip reports whether path (absolute) is to be left out of the graph: it
// lies outside every root, or it or a folder above it is hidden, an editor's
// scratch file, or excluded by an ignore file.
func (ig *Ignore) Skip(path string, isDir bool) bool {
	ig.mu.RLock()
	defer ig.mu.RUnlock()
	return ig.skipWith(ig.files, path, isDir)
}

func (ig *Ignore) skipWith(files map[string]*IgnorePatterns, p string, isDir bool) bool {
	root := ig.rootOf(p)
	if root == "" {
		return true
	}
	if p == root {
		return false
	}
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return true
	}
	parts := strings.Split(filepath.ToSlash(rel), "/")
	dir := root
	for i, name := range parts {
		last := i == len(parts)-1
		entryIsDir := !last || isDir
		if EditorScratch(name) {
			return true
		}
		cur := filepath.Join(dir, name)
		if ignoredBy(files, root, cur, entryIsDir) {
			return true
		}
		dir = cur
	}
	return false
}

// ignoredBy asks the ignore files from p's folder up to root, deepest first;
// the first file with a matching pattern decides.
func ignoredBy(files map[string]*IgnorePatterns, root, p string, isDir bool) bool {
	for dir := filepath.Dir(p); ; dir = filepath.Dir(dir) {
		if ip := files[dir]; ip != nil {
			rel, err := filepath.Rel(dir, p)
			if err == nil {
				if ignored, decided := ip.Match(filepath.ToSlash(rel), isDir); decided {
					return ignored
				}
			}
		}
		if dir == root || len(dir) <= len(root) {
			return false
		}
	}
}

// rootOf returns the deepest root containing p, or "".
func (ig *Ignore) rootOf(p string) string {
	best := ""
	for _, r := range ig.roots {
		if (p == r || strings.HasPrefix(p, r+string(filepath.Separator)) || r == string(filepath.Separator)) && len(r) > len(best) {
			best = r
		}
	}
	return best
}

// EditorScratch reports whether a file or folder name is hidden or one of
// the scratch files editors write next to the real one while saving: vim's
// swap files and its 4913 write probe, backups ending in ~, emacs lock and
// autosave files, and common temporary and partial-download suffixes.
func EditorScratch(name string) bool {
	lower := strings.ToLower(name)
	switch {
	case strings.HasPrefix(name, "."), // hidden, incl. .#lock and .name.swp
		strings.HasSuffix(name, "~"),
		name == "4913",
		len(name) > 1 && strings.HasPrefix(name, "#") && strings.HasSuffix(name, "#"):
		return true
	}
	for _, suf := range []string{".swp", ".swo", ".swx", ".swpx", ".tmp", ".temp", ".bak", ".orig", ".part", ".crdownload", ".kate-swp"} {
		if strings.HasSuffix(lower, suf) {
			return true
		}
	}
	return false
}
