package pipeline

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/docgraph/docgraph/loader"
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

// NewIgnore reads the ignore files under the roots (absolute folders). The
// error, if any, lists ignore files that could not be read; the Ignore is
// usable regardless and leaves those files' folders out.
func NewIgnore(roots []string) (*Ignore, error) {
	ig := &Ignore{roots: roots}
	return ig, ig.Reload()
}

// ignoreAll stands for an ignore file that could not be read: its folder's
// contents are left out, since what it excludes is unknown.
var ignoreAll = ParseIgnorePatterns("*\n")

// Reload re-reads every ignore file under the roots, once per folder,
// skipping folders that are themselves ignored (git does not look inside
// those either). Folders that cannot be read are passed over; an ignore
// file that cannot be read leaves its folder out and is named in the error.
func (ig *Ignore) Reload() error {
	files := map[string]*IgnorePatterns{}
	var problems []error
	for _, root := range ig.roots {
		walkTree(root, func(dir string, ip *IgnorePatterns) { files[dir] = ip },
			func(string, fs.DirEntry) bool { return true },
			func(p string, err error, ignoreFile bool) {
				if ignoreFile {
					files[p] = ignoreAll
					problems = append(problems, err)
				}
			})
	}
	ig.mu.Lock()
	ig.files = files
	ig.mu.Unlock()
	return errors.Join(problems...)
}

// Skip reports whether path (absolute) is to be left out of the graph: it
// lies outside every root, or it or a folder above it is hidden, an editor's
// scratch file, or excluded by an ignore file.
func (ig *Ignore) Skip(path string, isDir bool) bool {
	ig.mu.RLock()
	defer ig.mu.RUnlock()
	root := ig.rootOf(path)
	if root == "" {
		return true
	}
	if path == root {
		return false
	}
	rel, err := filepath.Rel(root, path)
	if err != nil {
		return true
	}
	// Decide each folder on the way down with the ignore files above it, as
	// a walk from the root would: linear in the depth, not cubic.
	var chain []ignoreLevel
	dir := root
	parts := strings.Split(rel, string(filepath.Separator))
	for i, name := range parts {
		if ip := ig.files[dir]; ip != nil {
			chain = append(chain, ignoreLevel{dir: dir, ip: ip})
		}
		cur := filepath.Join(dir, name)
		if EditorScratch(name) || chainIgnores(chain, cur, i < len(parts)-1 || isDir) {
			return true
		}
		dir = cur
	}
	return false
}

// ignoreLevel is the ignore file of one folder on a walk's way down.
type ignoreLevel struct {
	dir string
	ip  *IgnorePatterns
}

// chainIgnores asks the ignore files of the folders above p, deepest
// first; the first file with a matching pattern decides.
func chainIgnores(chain []ignoreLevel, p string, isDir bool) bool {
	for i := len(chain) - 1; i >= 0; i-- {
		l := chain[i]
		rel := strings.TrimPrefix(p[len(l.dir):], string(filepath.Separator))
		if ignored, decided := l.ip.Match(filepath.ToSlash(rel), isDir); decided {
			return ignored
		}
	}
	return false
}

// walkTree walks the folder root top-down, in name order, reading each
// folder's ignore file once (and giving it to rules, if not nil). Entries
// that are hidden, editors' scratch files or ignored are left out; visit is
// called for every other entry, and a folder is entered when visit returns
// true. problem hears about a folder that cannot be read or lies on a
// pseudo file system (loader.PseudoFS: /proc mounted in a chroot), and
// about an ignore file that cannot be read (ignoreFile set); either way
// that folder is left out and the walk goes on. Symbolic links are
// reported to visit as they are, never followed.
func walkTree(root string, rules func(dir string, ip *IgnorePatterns), visit func(path string, d fs.DirEntry) bool,
	problem func(path string, err error, ignoreFile bool)) {
	var chain []ignoreLevel
	var walk func(dir string)
	walk = func(dir string) {
		entries, pseudo, err := listFolder(dir)
		if err != nil {
			problem(dir, folderError(dir, err), false)
			return
		}
		if pseudo != "" {
			problem(dir, fmt.Errorf("%s: %s", dir, loader.PseudoFSReason(pseudo)), false)
			return
		}
		pushed := false
		for _, e := range entries {
			if e.Name() != IgnoreFile {
				continue
			}
			data, err := readIgnoreFile(filepath.Join(dir, IgnoreFile))
			if err != nil {
				problem(dir, fmt.Errorf("%s: cannot read its %s, so the folder is left out: %w", dir, IgnoreFile, cause(err)), true)
				return
			}
			ip := ParseIgnorePatterns(string(data))
			if rules != nil {
				rules(dir, ip)
			}
			chain = append(chain, ignoreLevel{dir: dir, ip: ip})
			pushed = true
		}
		for _, e := range entries {
			p := filepath.Join(dir, e.Name())
			if EditorScratch(e.Name()) || chainIgnores(chain, p, e.IsDir()) {
				continue
			}
			if visit(p, e) && e.IsDir() {
				walk(p)
			}
		}
		if pushed {
			chain = chain[:len(chain)-1]
		}
	}
	walk(root)
}

// listFolder is os.ReadDir (entries sorted by name), except that a folder
// on a pseudo file system is not listed: pseudo names the file system.
// The open folder is asked (loader.PseudoFSOf), so a deep folder's long
// path is not looked up twice.
func listFolder(dir string) (entries []fs.DirEntry, pseudo string, err error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	if pseudo := loader.PseudoFSOf(f); pseudo != "" {
		return nil, pseudo, nil
	}
	entries, err = f.ReadDir(-1)
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, "", err
}

// readIgnoreFile reads an ignore file as the loader reads a document, so
// that a named pipe or a link to /proc/kmsg called .docgraphignore cannot
// block the walk: nothing on a pseudo file system, opened non-blocking
// (a pipe's open waits for a writer otherwise), a regular file only.
func readIgnoreFile(path string) ([]byte, error) {
	if fs := loader.PseudoFS(path); fs != "" {
		return nil, errors.New(loader.PseudoFSReason(fs))
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	switch {
	case info.IsDir():
		return nil, errors.New("is a folder")
	case !info.Mode().IsRegular():
		return nil, fmt.Errorf("not a regular file (%s)", fileKind(info.Mode()))
	}
	return io.ReadAll(f)
}

// folderError says why a folder could not be listed.
func folderError(dir string, err error) error {
	c := cause(err)
	if errors.Is(c, syscall.ENAMETOOLONG) {
		return fmt.Errorf("%s: cannot read folder: %w (its path is longer than the system allows)", dir, c)
	}
	return fmt.Errorf("%s: cannot read folder: %w", dir, c)
}

// cause drops the operation and path a *fs.PathError repeats.
func cause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
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
