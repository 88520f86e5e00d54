//go:build linux || darwin

package sqlite

import (
	"fmt"
	"os"
	"syscall"
)

// mapFile maps the first size bytes of f copy-on-write: PROT_WRITE lets the
// index patch rows in place, MAP_PRIVATE keeps those patches out of the file.
func mapFile(f *os.File, size int) ([]byte, error) {
	b, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE)
	if err != nil {
		return nil, fmt.Errorf("map %s: %w", f.Name(), err)
	}
	return b, nil
}

// unmapFile releases a mapping made by mapFile.
func unmapFile(b []byte) error {
	if err := syscall.Munmap(b); err != nil {
		return fmt.Errorf("unmap vector sidecar: %w", err)
	}
	return nil
}
