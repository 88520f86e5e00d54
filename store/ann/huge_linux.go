package ann

import "golang.org/x/sys/unix"

// adviseHuge asks for b to be backed by transparent huge pages. It is
// only advice: where they are off or scarce, 4 KiB pages serve.
func adviseHuge(b []byte) { _ = unix.Madvise(b, unix.MADV_HUGEPAGE) }
