//go:build !(linux || darwin)

package ann

import (
	"errors"
	"os"
)

// The index is used through shared memory maps and file locks, which this
// package implements for Linux and macOS only; elsewhere opening fails and
// callers search exactly.
const supported = false

func mapFile(*os.File, int64, bool) ([]byte, error) { return nil, errors.ErrUnsupported }
func unmapFile([]byte) error                        { return nil }
func anonMap(int64) ([]byte, error)                 { return nil, errors.ErrUnsupported }
func syncMap([]byte) error                          { return errors.ErrUnsupported }
func tryLock(*os.File) (bool, error)                { return false, errors.ErrUnsupported }
