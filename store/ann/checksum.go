package ann

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math/bits"
	"os"
	"slices"
	"sync/atomic"
	"unsafe"
)

// A file checks itself: the arrays after the header are cut into 4 KiB
// blocks, each with a Castagnoli CRC in the sums array, and the header's
// StateCRC covers the sums and the header's counts, entry and generation.
// Opening a file whose Dirty flag is clear reads every block that holds
// published records and compares (verify): a file damaged past its header,
// or cut short, is refused with ErrCorrupt rather than searched.
//
// Sums per block, rather than one CRC of the whole file, because a writer
// changes the file in place: an Apply of a few vectors writes a few
// thousand scattered pages of a file that may hold hundreds of megabytes,
// and it computes again only the sums of the blocks it wrote (the view
// marks them, blockSet), where one CRC would read the whole file at every
// Apply. Measured at x4's relation index (473,000 vectors, 133 MB,
// BenchmarkFileAtSize): an Apply of 100 vectors spends about 1 ms of its
// 70-80 ms of CPU on sums, where a CRC of the whole file would cost what
// a check at open does, 12-14 ms. Opening costs the same either way: a
// read of every used block (by read calls, not through the mapping: see
// verify).
//
// While Dirty is set the sums may be behind the blocks (an Apply is under
// way, or a writer died in one), so a dirty file cannot be checked: it is
// opened unchecked, as before sums existed; the writer that repairs it
// computes every sum again. Seq tells a reader checking a clean file that a
// writer started an Apply meanwhile, so that a change under way is not
// taken for damage.

// blockSize is the span of one sum: a page, the unit the kernel writes
// back and an Apply dirties.
const blockSize = 4096

// blockSet is a set of blocks of a file, one bit each.
type blockSet struct {
	bits []uint64
}

func newBlockSet(blocks int) *blockSet {
	return &blockSet{bits: make([]uint64, (blocks+63)/64)}
}

// add puts the blocks holding the n bytes at file offset off into s.
func (s *blockSet) add(off, n int64) {
	if n <= 0 || off < headerSize {
		return
	}
	first := (off - headerSize) / blockSize
	last := (off + n - 1 - headerSize) / blockSize
	for b := first; b <= last && int(b>>6) < len(s.bits); b++ {
		s.bits[b>>6] |= 1 << (b & 63)
	}
}

// each calls f for every block in s, in order.
func (s *blockSet) each(f func(b int)) {
	for w, x := range s.bits {
		for x != 0 {
			i := bits.TrailingZeros64(x)
			f(w*64 + i)
			x &^= 1 << i
		}
	}
}

func (s *blockSet) reset() { clear(s.bits) }

// usedBlocks is the set of blocks of l that hold published records of
// count nodes and used upper-layer slots: the blocks a file's sums cover.
// The rest of each array is either unused or rewritten before it is used.
func usedBlocks(l layout, count, used int) *blockSet {
	s := newBlockSet(l.blocks)
	n := int64(count)
	s.add(l.codes, n*int64(l.words)*8)
	s.add(l.scale, n*4)
	s.add(l.ids, n*8)
	s.add(l.info, n*4)
	s.add(l.upOff, n*4)
	s.add(l.links0, n*int64(1+l.m0)*4)
	s.add(l.upper, int64(used)*4)
	return s
}

// mark records in v's set of changed blocks (a writer's file) the n bytes
// at p, which lie in v's mapping.
func (v *view) mark(p unsafe.Pointer, n uintptr) {
	if v.changed == nil {
		return
	}
	v.changed.add(int64(uintptr(p)-uintptr(v.base)), int64(n))
}

func (v *view) sum(b int) uint32 {
	return binary.LittleEndian.Uint32(v.data[v.l.sums+int64(b)*4:])
}

func (v *view) blockCRC(b int) uint32 {
	off := headerSize + int64(b)*blockSize
	return crc32.Checksum(v.data[off:off+blockSize], castagnoli)
}

// resum computes the sums of the blocks in s again.
func (v *view) resum(s *blockSet) {
	s.each(func(b int) {
		binary.LittleEndian.PutUint32(v.data[v.l.sums+int64(b)*4:], v.blockCRC(b))
	})
}

// stateCRC is the CRC of the header's counts, entry, deleted count and
// generation gen, and of the sums.
func (v *view) stateCRC(gen uint64) uint32 {
	var st [32]byte
	le := binary.LittleEndian
	le.PutUint32(st[0:], atomic.LoadUint32(&v.h.Count))
	le.PutUint32(st[4:], atomic.LoadUint32(&v.h.UpperUsed))
	le.PutUint64(st[8:], atomic.LoadUint64(&v.h.Entry))
	le.PutUint32(st[16:], atomic.LoadUint32(&v.h.Deleted))
	le.PutUint64(st[24:], gen)
	c := crc32.Update(0, castagnoli, st[:])
	return crc32.Update(c, castagnoli, v.data[v.l.sums:v.l.sums+int64(v.l.blocks)*4])
}

// seal computes the sums of every used block of an image about to be
// written out, and its StateCRC.
func (v *view) seal() {
	v.resum(usedBlocks(v.l, int(v.count()), int(atomic.LoadUint32(&v.h.UpperUsed))))
	atomic.StoreUint32(&v.h.StateCRC, v.stateCRC(atomic.LoadUint64(&v.h.Gen)))
}

// verify checks a clean file's StateCRC and the sums of its used blocks.
// No writer may change the file meanwhile (see checked).
//
// The blocks are read from f, the file mapped, when it is given: through
// the page cache in runs of up to a MiB, where reading them through the
// mapping faults a page at a time (a reader's mapping asks for random
// access) and leaves every page in the reader's resident memory. At x4's
// relation index (133 MB) the check took 48-95 ms through the mapping,
// 12-13 ms by read calls.
func (v *view) verify(f *os.File) error {
	if got, want := v.stateCRC(atomic.LoadUint64(&v.h.Gen)), atomic.LoadUint32(&v.h.StateCRC); got != want {
		return fmt.Errorf("%w: checksum of the header's counts and the block sums mismatch", ErrCorrupt)
	}
	const run = 256 // blocks read at once
	var (
		buf      []byte
		from, to = -1, -1 // the blocks in buf
		err      error
	)
	usedBlocks(v.l, int(v.count()), int(atomic.LoadUint32(&v.h.UpperUsed))).each(func(b int) {
		if err != nil {
			return
		}
		var blk []byte
		if f == nil {
			off := headerSize + int64(b)*blockSize
			blk = v.data[off : off+blockSize]
		} else {
			if b >= to {
				from, to = b, min(b+run, v.l.blocks)
				buf = slices.Grow(buf[:0], (to-from)*blockSize)[:(to-from)*blockSize]
				if _, rerr := f.ReadAt(buf, headerSize+int64(from)*blockSize); rerr != nil {
					err = fmt.Errorf("ann: check: %w", rerr)
					return
				}
			}
			blk = buf[(b-from)*blockSize : (b-from+1)*blockSize]
		}
		if crc32.Checksum(blk, castagnoli) != v.sum(b) {
			err = fmt.Errorf("%w: checksum mismatch in the block at byte %d", ErrCorrupt, headerSize+int64(b)*blockSize)
		}
	})
	return err
}

// checked verifies v (mapped from f) as a reader does, while a writer in another process
// may be applying: a dirty file cannot be checked and is taken as it is;
// so is a clean one that a writer kept changing while it was being
// checked (the writer checked it when it opened it). It reports whether
// the file was checked.
func (v *view) checked(f *os.File) (bool, error) {
	for range 3 {
		seq := atomic.LoadUint32(&v.h.Seq)
		if seq&1 != 0 || atomic.LoadUint32(&v.h.Dirty) != 0 {
			return false, nil
		}
		err := v.verify(f)
		if atomic.LoadUint32(&v.h.Seq) == seq {
			return true, err
		}
	}
	return false, nil
}
