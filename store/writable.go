package store

import "os"

// WritableDir reports whether files can be created in dir: permissions and
// read-only mounts both count, for root too. A store decides by it whether
// it can keep its journal beside a file it only reads, and callers whether
// to keep caches beside a store.
func WritableDir(dir string) bool {
	f, err := os.CreateTemp(dir, ".docgraph-probe-*")
	if err != nil {
		return false
	}
	f.Close()
	os.Remove(f.Name())
	return true
}
