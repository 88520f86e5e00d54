//go:build !linux

package clitest

import (
	"errors"
	"os"
)

// openPTY is Linux only here (/dev/ptmx and its ioctls differ elsewhere):
// tests on a terminal are skipped.
func openPTY() (master, tty *os.File, err error) {
	return nil, nil, errors.New("pseudo-terminals are only opened on Linux")
}
