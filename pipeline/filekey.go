package pipeline

import (
	"fmt"
	"io/fs"
	"time"
)

// racyWindow is how long after its modification time a file's size and
// time stop being able to hide a change: a write within the same tick of a
// coarse file-system clock (FAT counts 2 s) after we read can leave both as
// they were, so a file read sooner than this after its last change is read
// again next time instead of being trusted (git's "racily clean" files).
const racyWindow = 2 * time.Second

// fileKey is what a later run compares to skip a file without reading it:
// its size, modification time and, where the platform has one, inode (a
// file replaced by another of the same size and time is still caught).
func fileKey(fi fs.FileInfo) string {
	k := fmt.Sprintf("size=%d;mtime=%d", fi.Size(), fi.ModTime().UnixNano())
	if ino, ok := inode(fi); ok {
		k += fmt.Sprintf(";ino=%d", ino)
	}
	return k
}

// trustedKey is the key to record for a file stat-ed as before and read
// starting at readAt into a document whose loader saw size and modTime:
// "" when the file changed while or just before it was read.
func trustedKey(before fs.FileInfo, readAt time.Time, size int64, modTime time.Time) string {
	if before == nil || !before.Mode().IsRegular() || before.Size() != size || !before.ModTime().Equal(modTime) {
		return ""
	}
	if readAt.Sub(before.ModTime()) < racyWindow {
		return ""
	}
	return fileKey(before)
}
