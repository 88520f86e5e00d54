//go:build !linux

package clitest

import "testing"

// OnSmallDisk needs Linux's namespaces: elsewhere the test is skipped.
func OnSmallDisk(t *testing.T, size int64) string {
	t.Helper()
	t.Skip("a disk of its own needs Linux namespaces")
	return ""
}

// FillDisk is not reached where OnSmallDisk skips.
func FillDisk(t *testing.T, dir string) string {
	t.Helper()
	t.Skip("a disk of its own needs Linux namespaces")
	return ""
}
