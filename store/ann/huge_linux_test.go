package ann

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
	"unsafe"
)

// thpMode is the kernel's transparent huge page mode (always, madvise or
// never), or "" where the kernel has none.
func thpMode() string {
	b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil {
		return ""
	}
	s := string(b)
	if i, j := strings.IndexByte(s, '['), strings.IndexByte(s, ']'); i >= 0 && j > i {
		return s[i+1 : j]
	}
	return ""
}

// thpEligible reports the THPeligible field of the mapping that starts at
// b's first byte, as /proc/self/smaps gives it.
func thpEligible(t *testing.T, b []byte) bool {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no smaps: %v", err)
	}
	defer f.Close()
	start := fmt.Sprintf("%x-", uintptr(unsafe.Pointer(&b[0])))
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		// A mapping's block starts with its address range; its fields
		// follow, each named with a colon.
		if first, _, _ := strings.Cut(line, " "); !strings.HasSuffix(first, ":") {
			in = strings.HasPrefix(line, start)
			continue
		}
		if in && strings.HasPrefix(line, "THPeligible:") {
			return strings.TrimSpace(strings.TrimPrefix(line, "THPeligible:")) == "1"
		}
	}
	t.Skip("smaps has no THPeligible field for the mapping")
	return false
}

func TestAnonMapAsksForHugePages(t *testing.T) {
	mode := thpMode()
	if mode != "madvise" && mode != "always" {
		t.Skipf("transparent huge pages are %q here", mode)
	}
	big, err := anonMap(hugeImage)
	if err != nil {
		t.Fatal(err)
	}
	defer unmapFile(big)
	if !thpEligible(t, big) {
		t.Errorf("a %d-byte image is not eligible for huge pages (mode %s)", hugeImage, mode)
	}
	if mode != "madvise" {
		return // every mapping is eligible: the threshold cannot show
	}
	small, err := anonMap(hugeImage / 4)
	if err != nil {
		t.Fatal(err)
	}
	defer unmapFile(small)
	if thpEligible(t, small) {
		t.Errorf("a %d-byte image asked for huge pages; only images from %d bytes should", hugeImage/4, hugeImage)
	}
}
