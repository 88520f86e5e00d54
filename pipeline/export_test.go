package pipeline

import "time"

// WithRemovalGrace sets how much longer than a change a removal waits
// before it is processed (half the debounce by default). Tests of moves
// give it seconds: a loaded machine may deliver a move's new name later
// than half a short test debounce after its old one.
func WithRemovalGrace(d time.Duration) WatchOption {
	return func(c *watchConfig) { c.removalGrace = d }
}
