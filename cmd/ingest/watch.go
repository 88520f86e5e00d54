package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/docgraph/docgraph/cmd/internal/cli"
	"github.com/docgraph/docgraph/pipeline"
)

// addWatchFlags registers the watch-mode and shutdown flags.
func addWatchFlags(fs *pflag.FlagSet, opts *ingestOptions) {
	fs.BoolVar(&opts.Watch, "watch", false, "after ingesting, keep watching the folders and apply every change (implies --prune)")
	fs.DurationVar(&opts.Debounce, "debounce", pipeline.DefaultDebounce, "with --watch: how long a file must stay unchanged before it is re-ingested")
	fs.DurationVar(&opts.ShutdownTimeout, "shutdown-timeout", 30*time.Second, "on SIGINT/SIGTERM: how long documents in flight may take to finish before they are rolled back")
}

// errAborted ends a run cut short by a second signal.
var errAborted = errors.New("second signal: documents in flight were rolled back")

// hardExitDelay bounds how long a second signal waits for in-flight
// transactions to roll back before the process exits regardless; a store
// transaction that never committed leaves nothing behind either way.
const hardExitDelay = 3 * time.Second

// shutdown is a run's pipeline.Drain and the signals that end it: the
// first (which main turns into cancelling the run's context) lets the
// documents in flight finish within the shutdown timeout; a second rolls
// them back, and the process exits after hardExitDelay regardless.
type shutdown struct {
	*pipeline.Drain
	work context.Context
	stop func()
}

func newShutdown(ctx context.Context, timeout time.Duration, busy func() bool) *shutdown {
	d := pipeline.NewDrain(ctx, timeout, busy)
	stop := d.NotifySignals(func(sig os.Signal) {
		code := cli.ExitCode(cli.Interrupted{Signal: sig})
		time.AfterFunc(hardExitDelay, func() { os.Exit(code) })
	})
	return &shutdown{Drain: d, work: d.Work(), stop: stop}
}

// close releases the signal handler; call it when the run is over.
func (s *shutdown) close() {
	s.stop()
	s.Close()
}

// settle turns the error of a run that the shutdown cut short into what the
// user should see: a timeout is a clean stop (in-flight work rolled back),
// a second signal is errAborted.
func (s *shutdown) settle(err error, w io.Writer) error {
	if sig := s.AbortSignal(); sig != nil {
		return fmt.Errorf("%w; %w", cli.Interrupted{Signal: sig}, errAborted)
	}
	err, note := s.Settle(err)
	if note != "" {
		fmt.Fprintln(w, "ingest: "+note)
	}
	return err
}

// runWatch syncs the folders, then applies their changes until the first
// signal (graceful) or a second one (immediate, still atomic per document).
func runWatch(ctx context.Context, sd *shutdown, opts *ingestOptions, io streams, p *pipeline.Pipeline, prog *pipeline.ProgressWriter) error {
	wl := &pipeline.WatchLog{Out: io.Out, Err: io.Err, JSON: opts.JSON, Prefix: "ingest:", Synced: prog.Finish,
		Watching: fmt.Sprintf("watching %d folder(s) for changes (debounce %s); Ctrl-C to stop", len(opts.Paths), opts.Debounce)}
	err := p.Watch(sd.work, opts.Paths, append(wl.Options(), pipeline.WithDebounce(opts.Debounce), pipeline.WithStop(ctx.Done()))...)
	if err = sd.settle(err, io.Err); err != nil {
		return err
	}
	if !opts.JSON {
		fmt.Fprintln(io.Out, "stopped watching")
	}
	return nil
}
