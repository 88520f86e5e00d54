package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestStartProfiles(t *testing.T) {
	dir := t.TempDir()
	cpu, mem := filepath.Join(dir, "cpu.pprof"), filepath.Join(dir, "mem.pprof")
	t.Setenv("DOCGRAPH_CPUPROFILE", cpu)
	t.Setenv("DOCGRAPH_MEMPROFILE", mem)
	var stderr bytes.Buffer
	stop := StartProfiles(&stderr)
	sink := 0
	for i := range 1 << 20 {
		sink += len(strings.Repeat("x", i%7))
	}
	stop()
	if stderr.Len() > 0 {
		t.Fatalf("stderr: %s", stderr.String())
	}
	for _, p := range []string{cpu, mem} {
		// A pprof profile is gzip-compressed protocol buffers.
		if data, err := os.ReadFile(p); err != nil || len(data) < 2 || data[0] != 0x1f || data[1] != 0x8b {
			t.Errorf("%s: no profile written (%d bytes, %v)", p, len(data), err)
		}
	}
}

func TestStartProfilesReportsUnwritableFile(t *testing.T) {
	t.Setenv("DOCGRAPH_CPUPROFILE", filepath.Join(t.TempDir(), "missing", "cpu.pprof"))
	t.Setenv("DOCGRAPH_MEMPROFILE", "")
	var stderr bytes.Buffer
	StartProfiles(&stderr)()
	if !strings.HasPrefix(stderr.String(), "DOCGRAPH_CPUPROFILE: ") {
		t.Fatalf("stderr %q, want the failure reported", stderr.String())
	}
}
