//go:build !unix

package termtext

import "os"

// Width is 80 when f looks like a terminal (a character device), else 0.
func Width(f *os.File) int {
	if IsTerminal(f) {
		return 80
	}
	return 0
}

// IsTerminal reports whether f is a character device.
func IsTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
