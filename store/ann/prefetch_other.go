//go:build !amd64 && !arm64

package ann

import "unsafe"

const havePrefetch = false

func prefetch(unsafe.Pointer) {}
