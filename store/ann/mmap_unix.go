//go:build linux || darwin

package ann

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

const supported = true

// mapFile maps size bytes of f shared: read-only for readers (which are
// advised that access is random, so one search does not read ahead whole
// runs of a large file), read-write for the writer.
func mapFile(f *os.File, size int64, write bool) ([]byte, error) {
	prot := unix.PROT_READ
	if write {
		prot |= unix.PROT_WRITE
	}
	b, err := unix.Mmap(int(f.Fd()), 0, int(size), prot, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("ann: map %s: %w", f.Name(), err)
	}
	if !write {
		_ = unix.Madvise(b, unix.MADV_RANDOM)
	}
	return b, nil
}

// anonMap maps size bytes of zeroed private memory: a new file is built in
// it and written out in one pass, since building a graph in a shared
// mapping of a fresh file faults and allocates a file block at every first
// touch of a page, and the kernel's writeback throttles the build while it
// runs (x4 relations: 110 s wall for 43 s of CPU).
//
// A large image asks for huge pages: a build reads the codes and lists of
// nodes scattered over all of it, and in 4 KiB pages most of those reads
// also miss the TLB once the image outgrows what the TLB covers.
func anonMap(size int64) ([]byte, error) {
	b, err := unix.Mmap(-1, 0, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return nil, fmt.Errorf("ann: map %d bytes: %w", size, err)
	}
	if size >= hugeImage {
		adviseHuge(b)
	}
	return b, nil
}

// hugeImage is the smallest image anonMap asks huge pages for. Faulting
// huge pages in costs more than the TLB misses they save in an image that
// the TLB and the caches nearly cover: from 8 MiB, x1's ingest (images up
// to 29 MB) took 1.07x the time in two of three alternating runs, while
// x4's (its relation image 115 MB) took 0.965x.
const hugeImage = 64 << 20

func unmapFile(b []byte) error {
	if b == nil {
		return nil
	}
	return unix.Munmap(b)
}

// syncMap writes the mapping's dirty pages of b to the file and waits.
func syncMap(b []byte) error {
	if err := unix.Msync(b, unix.MS_SYNC); err != nil {
		return fmt.Errorf("ann: msync: %w", err)
	}
	return nil
}

// tryLock takes the exclusive lock of f without waiting. Locks belong to
// the open file description, so two opens conflict even in one process.
func tryLock(f *os.File) (bool, error) {
	err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	if err == unix.EWOULDBLOCK {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("ann: lock %s: %w", f.Name(), err)
	}
	return true, nil
}
