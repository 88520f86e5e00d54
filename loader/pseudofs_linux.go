package loader

import (
	"os"

	"golang.org/x/sys/unix"
)

// pseudoFileSystems names the file systems whose files the kernel makes up
// as they are read, by their statfs magic numbers (linux/magic.h). Their
// regular files report no size, and a read may block until the kernel has
// something to say (/proc/kmsg, trace_pipe), never end, or change the
// system (a read of some debugfs files does work): none is a document, and
// none is opened. Device files are refused for being no regular files.
var pseudoFileSystems = map[uint32]string{
	unix.PROC_SUPER_MAGIC:      "proc",
	unix.SYSFS_MAGIC:           "sysfs",
	unix.DEBUGFS_MAGIC:         "debugfs",
	unix.TRACEFS_MAGIC:         "tracefs",
	unix.SECURITYFS_MAGIC:      "securityfs",
	unix.CGROUP_SUPER_MAGIC:    "cgroup",
	unix.CGROUP2_SUPER_MAGIC:   "cgroup2",
	0x62656570:                 "configfs", // CONFIGFS_MAGIC
	unix.BPF_FS_MAGIC:          "bpf",
	unix.PSTOREFS_MAGIC:        "pstore",
	unix.EFIVARFS_MAGIC:        "efivarfs",
	0x65735543:                 "fusectl", // FUSE_CTL_SUPER_MAGIC
	unix.BINFMTFS_MAGIC:        "binfmt_misc",
	unix.NSFS_MAGIC:            "nsfs",
	unix.SELINUX_MAGIC:         "selinuxfs",
	unix.SMACK_MAGIC:           "smackfs",
	0x19800202:                 "mqueue", // MQUEUE_MAGIC
	unix.RDTGROUP_SUPER_MAGIC:  "resctrl",
	unix.USBDEVICE_SUPER_MAGIC: "usbfs",
	unix.OPENPROM_SUPER_MAGIC:  "openpromfs",
	unix.XENFS_SUPER_MAGIC:     "xenfs",
	unix.DEVPTS_SUPER_MAGIC:    "devpts",
}

// PseudoFS names the pseudo file system (proc, sysfs, debugfs, ...) that
// path, links followed, lies on, or is "" for a real one or a path that
// cannot be looked at. It asks the file system (statfs) and opens nothing,
// so it is safe on any path: the walk, --watch and Load ask it before they
// open a file.
func PseudoFS(path string) string {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return ""
	}
	return pseudoName(&st)
}

// PseudoFSOf is PseudoFS for a file already open: a folder, which is
// opened to be listed anyway (opening one reads nothing).
func PseudoFSOf(f *os.File) string {
	rc, err := f.SyscallConn()
	if err != nil {
		return ""
	}
	var st unix.Statfs_t
	var statErr error
	if err := rc.Control(func(fd uintptr) { statErr = unix.Fstatfs(int(fd), &st) }); err != nil || statErr != nil {
		return ""
	}
	return pseudoName(&st)
}

func pseudoName(st *unix.Statfs_t) string {
	return pseudoFileSystems[uint32(st.Type)] // int32 on some platforms: the magic is its low 32 bits
}
