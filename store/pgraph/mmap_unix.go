//go:build linux || darwin

package pgraph

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Supported says whether files can be mapped here; elsewhere Open fails.
const Supported = true

// mapFile maps size bytes of f read-only. It is not advised random: the
// file is compact, so the pages around one a walk reads are likely to be
// read by it too, and the kernel maps those it holds on the same fault.
func mapFile(f *os.File, size int64) ([]byte, error) {
	b, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("pgraph: map %s: %w", f.Name(), err)
	}
	return b, nil
}

func unmapFile(b []byte) error {
	if b == nil {
		return nil
	}
	return unix.Munmap(b)
}
