//go:build !(linux || darwin)

package pgraph

import (
	"errors"
	"os"
)

// Supported says whether files can be mapped here: not on this system,
// so Open fails and stores answer from their database.
const Supported = false

func mapFile(*os.File, int64) ([]byte, error) { return nil, errors.ErrUnsupported }
func unmapFile([]byte) error                  { return nil }
