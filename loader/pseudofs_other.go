//go:build !linux

package loader

import "os"

// PseudoFS names the pseudo file system path lies on; off Linux it knows
// none and says "" (procfs, where mounted, is left to the checks every
// file gets: only regular files are read, with O_NONBLOCK, up to the
// size limit).
func PseudoFS(path string) string { return "" }

// PseudoFSOf is PseudoFS for a file already open: "" off Linux.
func PseudoFSOf(f *os.File) string { return "" }
