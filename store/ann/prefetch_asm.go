//go:build amd64 || arm64

package ann

import "unsafe"

// havePrefetch says prefetch asks for a cache line without waiting.
const havePrefetch = true

// prefetch asks for the cache line at p and returns at once.
//
//go:noescape
func prefetch(p unsafe.Pointer)
