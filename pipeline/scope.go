package pipeline

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// linkOutside is why a symbolic link leading out of the folders given is
// passed over: one text for every such link, since the summary counts
// the files it passed over by reason.
const linkOutside = "symbolic link leading outside the folders given, not followed (--follow-outside-links follows it)"

// scope is where a run's symbolic links may lead: under one of the paths
// it was given, each resolved (a folder named through a link of its own
// counts where it really is), unless follow says links are followed
// wherever they lead. A cloned repository or an unpacked archive may hold
// a link to ~/.ssh/id_rsa or /etc/passwd; followed, it would make any
// file the user can read passages of the graph (LaTeX's \input refuses
// the same, through os.Root).
type scope struct {
	roots  []string
	follow bool
}

// newScope is the scope of a run given paths (absolute or not).
func newScope(paths []string, follow bool) *scope {
	s := &scope{follow: follow}
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			continue
		}
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			s.roots = append(s.roots, real)
		}
	}
	return s
}

// leadsOut reports whether path is a symbolic link whose target, every
// link on the way resolved, lies under none of the roots: a path nothing
// reads. It judges the last element of path only: the walk meets links
// nowhere else, as it does not enter linked folders. A path that is no
// link, or one that does not resolve (a broken link, reported as such by
// whoever stats it), is not its business.
func (s *scope) leadsOut(path string) bool {
	if s.follow {
		return false
	}
	info, err := os.Lstat(path)
	if err != nil || info.Mode()&fs.ModeSymlink == 0 {
		return false
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return false
	}
	return !slices.ContainsFunc(s.roots, func(root string) bool { return underRoot(real, root) })
}
