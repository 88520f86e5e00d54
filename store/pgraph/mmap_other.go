//go:build !(linux || darwin)

package pgraph

import (
	"errors"
	"os"
)

// Elsewhere the file is not mapped; Open fails and stores answer from
// their database.
func mapFile(*os.File, int64) ([]byte, error) { return nil, errors.ErrUnsupported }
func unmapFile([]byte) error                  { return nil }
