package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
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
	sigs chan os.Signal

	mu      sync.Mutex
	aborted os.Signal // the second signal, nil before one came
}

func newShutdown(ctx context.Context, timeout time.Duration, busy func() bool) *shutdown {
	d := pipeline.NewDrain(ctx, timeout, busy)
	s := &shutdown{Drain: d, work: d.Work(), sigs: make(chan os.Signal, 2)}
	signal.Notify(s.sigs, os.Interrupt, syscall.SIGTERM)
	go s.run()
	return s
}

// run counts the signals until the drain is over; the second aborts.
func (s *shutdown) run() {
	signals := 0
	for {
		select {
		case <-s.Done():
			return
		case sig := <-s.sigs:
			if signals++; signals < 2 {
				continue
			}
			s.mu.Lock()
			s.aborted = sig
			s.mu.Unlock()
			s.Abort()
			code := cli.ExitCode(cli.Interrupted{Signal: sig})
			time.AfterFunc(hardExitDelay, func() { os.Exit(code) })
			return
		}
	}
}

// close releases the signal handler; call it when the run is over.
func (s *shutdown) close() {
	signal.Stop(s.sigs)
	s.Close()
}

// settle turns the error of a run that the shutdown cut short into what the
// user should see: a timeout is a clean stop (in-flight work rolled back),
// a second signal is errAborted.
func (s *shutdown) settle(err error, w io.Writer) error {
	timedOut, waiting, _ := s.Why()
	s.mu.Lock()
	aborted := s.aborted
	s.mu.Unlock()
	switch {
	case aborted != nil:
		return fmt.Errorf("%w; %w", cli.Interrupted{Signal: aborted}, errAborted)
	case err == nil:
		return nil
	case waiting && errors.Is(err, context.Canceled):
		fmt.Fprintln(w, "ingest: stopped while waiting for the model: the calls in flight were cancelled, and the documents in flight were rolled back and will be resumed on the next run")
		return nil
	case timedOut && errors.Is(err, context.Canceled):
		fmt.Fprintln(w, "ingest: shutdown timeout reached: documents in flight were rolled back and will be resumed on the next run")
		return nil
	}
	return err
}

// runWatch syncs the folders, then applies their changes until the first
// signal (graceful) or a second one (immediate, still atomic per document).
func runWatch(ctx context.Context, sd *shutdown, opts *ingestOptions, io streams, p *pipeline.Pipeline, prog *progress) error {
	p.Progress = prog
	var (
		mu  sync.Mutex
		enc = json.NewEncoder(io.Out)
	)
	logChange := func(r pipeline.FileResult) {
		if r.Outcome == pipeline.Unchanged {
			return // an event without a content change (a touch, a save without edits)
		}
		mu.Lock()
		defer mu.Unlock()
		if opts.JSON {
			_ = enc.Encode(tidyResult(r))
			return
		}
		fmt.Fprintln(io.Out, changeLine(time.Now(), r))
	}
	err := p.Watch(sd.work, opts.Paths,
		pipeline.WithDebounce(opts.Debounce),
		pipeline.WithStop(ctx.Done()),
		pipeline.WithOnChange(logChange),
		pipeline.WithOnError(func(err error) {
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprintln(io.Err, "ingest:", cli.OneLine(err.Error(), maxErrorBytes))
		}),
		pipeline.WithOnSynced(func(sum *pipeline.Summary) {
			prog.finish()
			mu.Lock()
			defer mu.Unlock()
			if opts.JSON {
				_ = enc.Encode(tidySummary(sum))
			} else {
				printSummary(io.Out, sum)
				fmt.Fprintf(io.Out, "watching %d folder(s) for changes (debounce %s); Ctrl-C to stop\n", len(opts.Paths), opts.Debounce)
			}
		}),
	)
	if err = sd.settle(err, io.Err); err != nil {
		return err
	}
	if !opts.JSON {
		fmt.Fprintln(io.Out, "stopped watching")
	}
	return nil
}

// changeLine is the one log line watch mode writes per change: when, what,
// which document, how long, and how much of the graph it touched.
func changeLine(at time.Time, r pipeline.FileResult) string {
	doc := ""
	if r.DocID != "" {
		doc = " (doc " + shortID(r.DocID) + ")"
	}
	head := fmt.Sprintf("%s %-9s %s%s %s", at.Format("15:04:05"), r.Outcome, cli.Escape(r.Path), doc, r.Duration.Round(time.Millisecond))
	switch r.Outcome {
	case pipeline.Added, pipeline.Updated:
		return fmt.Sprintf("%s: %d chunks, %d entity mentions, %d relation mentions", head, r.Chunks, r.Entities, r.Relations)
	case pipeline.Deleted:
		return fmt.Sprintf("%s: %d chunks, %d entities and %d relations removed", head, r.Chunks, r.Entities, r.Relations)
	case pipeline.Renamed:
		return head + ": graph kept"
	case pipeline.Failed, pipeline.Unsupported:
		return head + ": " + cli.OneLine(r.Error, maxErrorBytes)
	case pipeline.Claimed:
		return head + ": " + claimedLine(r)
	}
	for _, w := range r.Warnings {
		head += "; " + cli.OneLine(w, maxWarningBytes)
	}
	return head
}

func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
