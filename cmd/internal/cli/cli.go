// Package cli is what docgraph's commands share at the command line: errors
// reported with the command's name and usage hint, exit codes, signals, and
// terminal output that a file name or a warning cannot garble.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
)

// UsageError is a mistake on the command line (an unknown flag, a missing
// argument, a value out of range): it is reported with the command's usage hint.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// Usagef makes a UsageError.
func Usagef(format string, a ...any) error {
	return &UsageError{Err: fmt.Errorf(format, a...)}
}

// Args makes a positional-argument check report its complaint as a
// UsageError with the message msg (what is missing and how to give it).
func Args(check cobra.PositionalArgs, msg string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return &UsageError{Err: errors.New(msg)}
		}
		return nil
	}
}

// shown wraps an error whose message the command already printed (a
// summary, a list of what was not found): Run adds nothing to it.
type shown struct{ err error }

func (e shown) Error() string { return e.err.Error() }
func (e shown) Unwrap() error { return e.err }

// Shown marks err as already reported to the user.
func Shown(err error) error {
	if err == nil {
		return nil
	}
	return shown{err}
}

// Interrupted is the cause of a context that a signal ended. It is also a
// context.Canceled, so code that checks for cancellation still sees one.
type Interrupted struct{ Signal os.Signal }

func (e Interrupted) Error() string { return "interrupted (" + e.Signal.String() + ")" }

// Is makes an Interrupted count as context.Canceled.
func (e Interrupted) Is(target error) bool { return target == context.Canceled }

// NotifyContext is signal.NotifyContext for SIGINT and SIGTERM whose
// context.Cause is Interrupted with the signal received, so the exit status
// can say which one ended the run.
func NotifyContext(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			cancel(Interrupted{Signal: s})
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(done)
		cancel(context.Canceled)
	}
}

// Interruption returns the Interrupted that ended ctx, or nil.
func Interruption(ctx context.Context) error {
	var in Interrupted
	if errors.As(context.Cause(ctx), &in) {
		return in
	}
	return nil
}

// ExitCode is the exit status for err: 0 for nil, 128+N for a run ended by
// signal N (130 for Ctrl-C), 1 otherwise.
func ExitCode(err error) int {
	var in Interrupted
	switch {
	case err == nil:
		return 0
	case errors.As(err, &in):
		if s, ok := in.Signal.(syscall.Signal); ok {
			return 128 + int(s)
		}
		return 130
	}
	return 1
}

// Run executes root with args under ctx and reports a failure on stderr the
// way every docgraph command does: "<command>: <problem>", and for a
// command-line mistake the hint "Run '<command> --help' for usage." It
// returns the error; a run a signal ended returns Interrupted.
func Run(ctx context.Context, root *cobra.Command, args []string, stderr io.Writer) error {
	root.SetArgs(args)
	root.SetErr(stderr)
	root.SilenceErrors, root.SilenceUsage = true, true
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &UsageError{Err: flagError(err)} })
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return nil
	}
	if in := Interruption(ctx); in != nil && errors.Is(err, context.Canceled) && !errors.As(err, new(Interrupted)) {
		err = fmt.Errorf("%w: %w", in, err)
	}
	Report(stderr, cmd, err)
	return err
}

var badValue = regexp.MustCompile(`^invalid argument "(.*)" for "(.*?)" flag: (.*)$`)

// flagError says what a bad flag value should have been, in place of the
// parser's own words (strconv.ParseInt: parsing "abc": invalid syntax).
func flagError(err error) error {
	m := badValue.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	want := m[3]
	switch {
	case strings.Contains(want, "out of range"):
		want = "too large"
	case strings.Contains(want, "ParseInt"), strings.Contains(want, "ParseUint"):
		want = "want a whole number"
	case strings.Contains(want, "ParseFloat"):
		want = "want a number"
	case strings.Contains(want, "ParseBool"):
		want = "want true or false"
	case strings.HasPrefix(want, "time: "):
		want = "want a duration such as 90s, 2m or 1h"
	}
	return fmt.Errorf("%s %q: %s", m[2], m[1], want)
}

// Report prints err for cmd as Run does.
func Report(w io.Writer, cmd *cobra.Command, err error) {
	if errors.As(err, new(shown)) {
		return
	}
	name := cmd.CommandPath()
	fmt.Fprintf(w, "%s: %s\n", name, Escape(err.Error()))
	// A setting out of range says whether it was typed (CommandLine) or
	// came from the environment or a file, where the usage would not help.
	var typed interface{ CommandLine() bool }
	if errors.As(err, new(*UsageError)) || (errors.As(err, &typed) && typed.CommandLine()) {
		fmt.Fprintf(w, "Run '%s --help' for usage.\n", name)
	}
}
