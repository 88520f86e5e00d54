//go:build unix

package termtext

import (
	"os"

	"golang.org/x/sys/unix"
)

// Width is the width in columns of the terminal f is, or 0 when f is not
// a terminal (a file, a pipe, /dev/null). It asks the terminal each time,
// so a resized window is seen at the next line drawn.
func Width(f *os.File) int {
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return 0
	}
	if ws.Col == 0 {
		return 80 // a terminal that does not say, such as a serial line
	}
	return int(ws.Col)
}

// IsTerminal reports whether f is a terminal.
func IsTerminal(f *os.File) bool {
	_, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	return err == nil
}
