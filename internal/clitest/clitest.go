// Package clitest runs a command's main in a child process of its test
// binary, for what only a real process shows: exit statuses, signals, and
// permissions (run as another user).
package clitest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/docgraph/docgraph/pipeline"
)

// argsEnv carries the child's command line.
const argsEnv = "DOCGRAPH_CLITEST_ARGS"

// Child is the body of the test named test (TestChild, say) in a command's
// package: in a child started by Command it runs main with the child's
// arguments and exits; in a normal test run it skips.
func Child(t *testing.T, name string, main func()) {
	raw := os.Getenv(argsEnv)
	if raw == "" {
		t.Skip("runs only as the child process of the command's process tests")
	}
	var args []string
	if err := json.Unmarshal([]byte(raw), &args); err != nil {
		fmt.Fprintln(os.Stderr, "bad child args:", err)
		os.Exit(3)
	}
	os.Args = append([]string{name}, args...)
	main()
	os.Exit(0)
}

// Command is the command line args run by the test binary's test named
// test, which calls Child: the command's real main in a process of its own.
func Command(t *testing.T, test string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1")
	cmd.Env = os.Environ()
	SetArgs(t, cmd, args...)
	return cmd
}

// SetArgs replaces the command line of a child made by Command.
func SetArgs(t *testing.T, cmd *exec.Cmd, args ...string) {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Env = append(cmd.Env, argsEnv+"="+string(raw)) // the last one counts
}

// AsNobody makes cmd run as the user nobody when the tests run as root,
// for whom file permissions do not apply: the binary is copied to a
// folder nobody can reach, the copy is what runs. It returns a folder
// under which both can work (world-writable). Not root: cmd is unchanged
// and the folder is a plain temporary one. It skips the test when nobody
// or setpriv is missing.
func AsNobody(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "docgraph-clitest-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
			if err == nil && info.IsDir() {
				os.Chmod(p, 0o755)
			}
			return nil
		})
		os.RemoveAll(dir)
	})
	if os.Geteuid() != 0 {
		return dir
	}
	u, err := user.Lookup("nobody")
	if err != nil {
		t.Skip("no user nobody to run as:", err)
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("setpriv is needed to run as nobody")
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "cmd.test")
	if err := copyFile(cmd.Path, bin); err != nil {
		t.Fatal(err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	cmd.Args = append([]string{setpriv, "--reuid=" + strconv.Itoa(uid), "--regid=" + strconv.Itoa(gid), "--clear-groups", bin}, cmd.Args[1:]...)
	cmd.Path = setpriv
	cmd.Env = append(cmd.Env, "HOME="+dir)
	return dir
}

func copyFile(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}

// Result is what a finished child did.
type Result struct {
	Stdout, Stderr string
	Code           int // exit status; 128+N when signal N killed it
}

// Run runs cmd to its end (at most two minutes) and returns what it did.
func Run(t *testing.T, cmd *exec.Cmd) Result {
	t.Helper()
	return Start(t, cmd).Wait(t)
}

// Process is a child process started by Start.
type Process struct {
	cmd       *exec.Cmd
	out, errb bytes.Buffer
	done      chan error
}

// Start starts cmd; signal it through cmd.Process, then Wait.
func Start(t *testing.T, cmd *exec.Cmd) *Process {
	t.Helper()
	c := &Process{cmd: cmd, done: make(chan error, 1)}
	cmd.Stdout, cmd.Stderr = &c.out, &c.errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { c.done <- cmd.Wait() }()
	return c
}

// Wait waits for the child to exit (at most two minutes) and returns what
// it did.
func (c *Process) Wait(t *testing.T) Result {
	t.Helper()
	var err error
	select {
	case err = <-c.done:
	case <-time.After(2 * time.Minute):
		_ = c.cmd.Process.Kill()
		<-c.done
		t.Fatalf("child did not exit; stderr:\n%s", c.errb.String())
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	code := c.cmd.ProcessState.ExitCode()
	if ws, ok := c.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		code = 128 + int(ws.Signal())
	}
	return Result{Stdout: c.out.String(), Stderr: c.errb.String(), Code: code}
}

// CheckConfigKeys fails the test for every flag of root and its
// subcommands that docgraph.yaml would reject as an unknown key: a new
// flag must be added to the list in pipeline/settings.go.
func CheckConfigKeys(t *testing.T, root *cobra.Command) {
	t.Helper()
	var visit func(c *cobra.Command)
	visit = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if f.Name != "help" && f.Name != "config" && !pipeline.IsConfigKey(f.Name) {
				t.Errorf("%s --%s is not a known config key: add it to configKeys in pipeline/settings.go", c.CommandPath(), f.Name)
			}
		})
		for _, sub := range c.Commands() {
			visit(sub)
		}
	}
	visit(root)
}

// UserError is one mistake a user can make: the command line, the
// environment and the docgraph.yaml it is made with, and what the error
// message must say.
type UserError struct {
	Name   string
	Args   []string
	Env    map[string]string
	Config string // docgraph.yaml in the working folder, when not empty
	Want   []string
	// NoHint is set when the mistake was not typed (environment, file,
	// store), so the usage hint would not help.
	NoHint bool
}

// CheckUserErrors runs every case through run (in dir, the working
// folder) and checks that it failed with exit status 1, that stderr says
// every Want and has the usage hint unless NoHint, that nothing went to
// stdout and that none of the paths in untouched was created.
func CheckUserErrors(t *testing.T, dir string, cases []UserError, untouched []string,
	run func(t *testing.T, args ...string) (stdout, stderr string, code int)) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.Name, func(t *testing.T) {
			for k, v := range tt.Env {
				t.Setenv(k, v)
			}
			if tt.Config != "" {
				cfg := filepath.Join(dir, "docgraph.yaml")
				if err := os.WriteFile(cfg, []byte(tt.Config), 0o644); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { os.Remove(cfg) })
			}
			out, errs, code := run(t, tt.Args...)
			if code != 1 {
				t.Fatalf("exit status %d, want 1\nstderr:\n%s", code, errs)
			}
			for _, w := range tt.Want {
				if !strings.Contains(errs, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errs)
				}
			}
			if tt.NoHint == strings.Contains(errs, "for usage.") {
				t.Errorf("usage hint expected %v:\n%s", !tt.NoHint, errs)
			}
			if out != "" {
				t.Errorf("a failed command printed to stdout:\n%s", out)
			}
			for _, p := range untouched {
				if _, err := os.Stat(p); err == nil {
					t.Fatalf("a failed command created %s", p)
				}
			}
		})
	}
}

// OnTerminal runs cmd to its end (at most two minutes) with its standard
// output on a pseudo-terminal, as when a person runs it, and returns what
// it did: Stdout is what the terminal received, byte for byte. Standard
// error is a pipe. It skips the test where no pseudo-terminal can be
// opened.
func OnTerminal(t *testing.T, cmd *exec.Cmd) Result {
	t.Helper()
	master, tty, err := openPTY()
	if err != nil {
		t.Skip("no pseudo-terminal:", err)
	}
	defer master.Close()
	// Read all along: a terminal holds a few KB, and a child writing more
	// than that to a full one would wait forever.
	var out bytes.Buffer
	read := make(chan struct{})
	go func() {
		defer close(read)
		_, _ = io.Copy(&out, master) // ends with EIO once no process holds the terminal
	}()
	c := &Process{cmd: cmd, done: make(chan error, 1)}
	cmd.Stdout, cmd.Stderr = tty, &c.errb
	err = cmd.Start()
	tty.Close() // the child has its own copy
	if err != nil {
		t.Fatal(err)
	}
	go func() { c.done <- cmd.Wait() }()
	r := c.Wait(t)
	select {
	case <-read:
	case <-time.After(time.Minute):
		t.Fatal("the terminal's output did not end after the child exited")
	}
	r.Stdout = out.String()
	return r
}
