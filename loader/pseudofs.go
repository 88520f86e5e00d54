package loader

// PseudoFSReason says why a file or folder on the pseudo file system fs
// (as PseudoFS names it) is not read.
func PseudoFSReason(fs string) string {
	return "on a pseudo file system (" + fs + "), whose files can block or never end when read: not read"
}
