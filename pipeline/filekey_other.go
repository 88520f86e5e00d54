//go:build !unix

package pipeline

import "io/fs"

func inode(fs.FileInfo) (uint64, bool) { return 0, false }
