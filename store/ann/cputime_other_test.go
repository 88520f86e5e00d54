//go:build !(linux || darwin)

package ann

import "time"

var start = time.Now()

// cpuTime falls back to wall time where rusage is not at hand.
func cpuTime() time.Duration { return time.Since(start) }
