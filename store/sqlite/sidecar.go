package sqlite

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"sync/atomic"
)

// Sidecars (vecfile.go, mentionfile.go) are caches beside the database.
// Both formats start with an 8-byte magic and the write generation they
// hold, and both are written to a temporary file and renamed into place, so
// a reader never sees half of one.

// tmpSeq keeps temporary names apart when several writers of one process
// write a sidecar at once.
var tmpSeq atomic.Uint64

// createTemp makes a new temporary file beside path, named for this process
// and call alone.
func createTemp(path string) (*os.File, error) {
	tmp := fmt.Sprintf("%s.tmp%d-%d", path, os.Getpid(), tmpSeq.Add(1))
	return os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
}

// commitTemp closes f, made by createTemp, and moves it to path; on any
// failure the temporary file goes. Failures are not errors: a sidecar is
// only a cache.
func commitTemp(f *os.File, path string) {
	if f.Close() != nil || os.Rename(f.Name(), path) != nil {
		os.Remove(f.Name())
	}
}

// discardTemp closes and removes f, made by createTemp.
func discardTemp(f *os.File) {
	f.Close()
	os.Remove(f.Name())
}

// openSidecar opens the sidecar at path and reads its header into hdr. It
// reports false unless the file is a regular one starting with magic and
// holding generation gen. On success the file is positioned after the
// header and the caller closes it.
func openSidecar(path, magic string, gen int64, hdr []byte) (f *os.File, size int64, ok bool) {
	if path == "" {
		return nil, 0, false
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, false
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, 0, false
	}
	if _, err := io.ReadFull(f, hdr); err != nil || string(hdr[:8]) != magic ||
		int64(binary.LittleEndian.Uint64(hdr[8:])) != gen {
		f.Close()
		return nil, 0, false
	}
	return f, fi.Size(), true
}
