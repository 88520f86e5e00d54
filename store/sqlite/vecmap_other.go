//go:build !(linux || darwin)

package sqlite

import (
	"fmt"
	"os"
	"unsafe"
)

// mapFile reads the first size bytes of f where mmap is not used. The
// buffer is allocated as uint64s so the matrix inside it is aligned for
// float32 access, as a real mapping would be.
func mapFile(f *os.File, size int) ([]byte, error) {
	buf := make([]uint64, (size+7)/8)
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(buf))), len(buf)*8)[:size:size]
	if _, err := f.ReadAt(b, 0); err != nil {
		return nil, fmt.Errorf("read %s: %w", f.Name(), err)
	}
	return b, nil
}

// unmapFile has nothing to release: the garbage collector owns the buffer.
func unmapFile([]byte) error { return nil }
