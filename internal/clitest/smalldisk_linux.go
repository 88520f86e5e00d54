package clitest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// smallDiskEnv tells the child of OnSmallDisk where to mount its disk and
// how large to make it: "DIR|BYTES".
const smallDiskEnv = "DOCGRAPH_CLITEST_SMALL_DISK"

// smallDiskUnavailable is what a child prints when it cannot mount its
// disk; the parent then skips the test.
const smallDiskUnavailable = "DOCGRAPH-SMALL-DISK-UNAVAILABLE"

// OnSmallDisk runs the calling test (a top-level one) again in a child
// process that has a disk of its own: a tmpfs of size bytes, in private
// mount (and, when not root, user) namespaces, so that a full disk is the
// system's own ENOSPC, not a simulation. In the child it returns the
// folder the disk is mounted on, empty; in the parent it returns "" once
// the child has run, whose verdict and output are the test's. Where the
// namespaces cannot be made (user namespaces disabled) the test is skipped.
func OnSmallDisk(t *testing.T, size int64) string {
	t.Helper()
	if v := os.Getenv(smallDiskEnv); v != "" {
		dir, n, _ := strings.Cut(v, "|")
		// Nothing mounted here may show in the parent's namespace.
		err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, "")
		if err == nil {
			err = syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, "size="+n+",mode=0755")
		}
		if err != nil {
			fmt.Println(smallDiskUnavailable, err)
			t.SkipNow()
		}
		return dir
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), smallDiskEnv+"="+dir+"|"+strconv.FormatInt(size, 10))
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS}
	if os.Geteuid() != 0 {
		cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWUSER
		cmd.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Geteuid(), Size: 1}}
		cmd.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getegid(), Size: 1}}
	}
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err != nil && !errors.As(err, &exit):
		t.Skipf("cannot start a process with a disk of its own: %v", err)
	case strings.Contains(string(out), smallDiskUnavailable):
		t.Skipf("cannot mount a disk of its own:\n%s", out)
	case err != nil:
		t.Fatalf("on a disk of %d bytes: %v\n%s", size, err, out)
	}
	t.Logf("on a disk of %d bytes:\n%s", size, out)
	return ""
}

// FillDisk writes a file into dir until the disk it is on has no room
// left, and returns its name: removing it makes the room again.
func FillDisk(t *testing.T, dir string) string {
	t.Helper()
	name := filepath.Join(dir, "filler")
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4096)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	// A write of a single byte fails too: not a byte is left.
	if _, err := f.Write(buf[:1]); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("the disk still has room after it was filled: %v", err)
	}
	return name
}
