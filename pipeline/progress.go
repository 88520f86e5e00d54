package pipeline

import (
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/docgraph/docgraph/internal/termtext"
	"github.com/docgraph/docgraph/llm"
)

// ProgressWriter is a Progress for people: it draws a bar on a terminal and plain log lines otherwise: one
// newline-terminated line per file, its warnings on lines of their own.
// The bar is redrawn in place and always fits the terminal's width, so it
// never wraps and leaves no stale lines; failures, warnings and retries
// (one bounded line each) are printed above it.
//
// While model calls wait, it says so: on a terminal the bar shows the
// wait once the oldest call has waited waitShown, redrawn every second;
// otherwise one line every waitLineEvery. It is also an io.Writer, for log
// lines (a model call retried) that must not garble the bar.
type ProgressWriter struct {
	// Prefix starts the wait lines printed without a bar ("ingest: ").
	Prefix string

	mu    sync.Mutex
	w     io.Writer
	bar   bool
	width func() int
	total int
	done  int
	start time.Time
	last  string // the last file's path, named on the bar
	drawn bool   // the bar is on screen

	waits    func() []llm.Waits
	wait     string    // the wait the bar shows, "" for none
	lastWait time.Time // when the last wait line was printed (no terminal)
	stopTick chan struct{}
}

// waitShown is how long a call waits before the progress says so: models
// answer most calls in a few seconds, which needs no comment.
const waitShown = 3 * time.Second

// waitLineEvery spaces the wait lines of a run without a terminal, so a
// log shows a stuck model without filling up.
const waitLineEvery = 30 * time.Second

// NewProgressWriter reports to w, drawing a bar when bar is set (w is a
// terminal) that fits the width width reports at each redraw (nil or 0:
// 80 columns).
func NewProgressWriter(w io.Writer, bar bool, width func() int) *ProgressWriter {
	return &ProgressWriter{w: w, bar: bar, width: width, start: time.Now()}
}

// WatchWaits makes the progress report the calls waits describes, checked
// every tick, until stop.
func (p *ProgressWriter) WatchWaits(waits func() []llm.Waits, tick time.Duration) {
	p.mu.Lock()
	p.waits = waits
	p.stopTick = make(chan struct{})
	stop := p.stopTick
	p.mu.Unlock()
	go func() {
		t := time.NewTicker(tick)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case now := <-t.C:
				p.showWait(now)
			}
		}
	}()
}

// showWait redraws the bar with the current wait, or prints a wait line
// when one is due.
func (p *ProgressWriter) showWait(now time.Time) {
	var text string
	for _, w := range p.waits() {
		if w.InFlight > 0 && w.Oldest >= waitShown {
			text = waitText(w)
			break
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar {
		if text == "" && p.wait == "" {
			return // nothing waits: the files redraw the bar
		}
		p.wait = text
		p.redraw()
		return
	}
	if text != "" && now.Sub(p.lastWait) >= waitLineEvery {
		p.lastWait = now
		fmt.Fprintf(p.w, "%s%s\n", p.Prefix, text)
	}
}

// waitText is one wait as a user reads it: "waiting for openai:gpt-4o-mini
// at api.example: 12 s, 4 in flight; last failure: HTTP 500".
func waitText(w llm.Waits) string {
	s := "waiting for " + w.Model
	if host := endpointHost(w.Endpoint); host != "" {
		s += " at " + host
	}
	s += fmt.Sprintf(": %s, %d in flight", w.Oldest.Truncate(time.Second), w.InFlight)
	if w.Retrying > 0 {
		s += fmt.Sprintf(" (%d waiting to retry)", w.Retrying)
	}
	if w.FailedAttempts > 0 && w.LastError != "" {
		s += fmt.Sprintf("; %s failed in the last %s, the last: %s",
			Counted(w.FailedAttempts, "attempt"), w.Failing.Truncate(time.Second), w.LastError)
	}
	return termtext.OneLine(s, MaxWarningBytes)
}

// endpointHost is the host of an endpoint URL, the part a user recognises.
func endpointHost(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return ""
	}
	return u.Host
}

// Start hears how many files the run has.
func (p *ProgressWriter) Start(total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.total = total
}

// File reports one file's result: a line, or the bar redrawn with the
// failure and warnings above it.
func (p *ProgressWriter) File(r FileResult) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	p.last = r.Path
	if !p.bar {
		line := fmt.Sprintf("%s %s (%d chunks, %s)", r.Outcome, termtext.Escape(r.Path), r.Chunks, r.Duration.Round(time.Millisecond))
		switch {
		case r.Error != "":
			line = fmt.Sprintf("%s %s", r.Outcome, termtext.OneLine(r.Error, MaxErrorBytes))
		case r.Outcome == Claimed:
			line = fmt.Sprintf("%s %s (%s)", r.Outcome, termtext.Escape(r.Path), claimedLine(r))
		}
		fmt.Fprintln(p.w, line)
		for _, warn := range r.Warnings {
			fmt.Fprintf(p.w, "warning: %s\n", WarningLine(r.Path, warn))
		}
		return
	}
	if r.Outcome == Failed {
		fmt.Fprintf(p.w, "\r\033[Kfailed: %s\n", termtext.OneLine(r.Error, MaxErrorBytes))
	}
	for _, warn := range r.Warnings {
		// A whole line of its own above the bar: it may wrap, but nothing
		// redraws over it.
		fmt.Fprintf(p.w, "\r\033[Kwarning: %s\n", WarningLine(r.Path, warn))
	}
	p.redraw()
}

// Write prints b (whole lines, such as a retry's log line) above the bar,
// or as they are without one.
func (p *ProgressWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.bar {
		return p.w.Write(b)
	}
	if p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
	}
	n, err := p.w.Write(b)
	if p.drawn {
		p.redraw()
	}
	return n, err
}

// redraw draws the bar in place; p.mu is held.
func (p *ProgressWriter) redraw() {
	fmt.Fprintf(p.w, "\r\033[K%s", p.barLine(p.columns()))
	p.drawn = true
}

// columns is the terminal's width, 80 when it does not say.
func (p *ProgressWriter) columns() int {
	if p.width != nil {
		if n := p.width(); n > 0 {
			return n
		}
	}
	return 80
}

// barLine is "[====    ] 12/224 3s name", at most cols-1 columns wide (a
// line that reaches the last column makes some terminals wrap early);
// while a model call waits, the wait takes the name's place.
func (p *ProgressWriter) barLine(cols int) string {
	counts := fmt.Sprintf(" %d/%d %s", p.done, p.total, time.Since(p.start).Round(time.Second))
	room := cols - 1 - len(counts)
	width := min(30, room-12) // leave the name at least 10 columns
	if p.wait != "" {
		width = min(8, width) // the wait needs the room more than the bar
	}
	if width < 5 {
		return termtext.Fit(strings.TrimSpace(counts), cols-1, false)
	}
	filled := 0
	if p.total > 0 {
		filled = min(width, width*p.done/p.total)
	}
	line := "[" + strings.Repeat("=", filled) + strings.Repeat(" ", width-filled) + "]" + counts
	if p.wait != "" {
		return line + " " + termtext.Fit(p.wait, cols-1-len(line)-1, false)
	}
	return line + " " + termtext.Fit(termtext.Escape(filepath.Base(p.last)), cols-1-len(line)-1, true)
}

// Finish ends the bar; waits are reported on lines of their own from now
// on (watch mode goes on after its first sync).
func (p *ProgressWriter) Finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar && p.drawn {
		fmt.Fprintln(p.w)
	}
	p.bar, p.drawn, p.wait = false, false, ""
}

// Stop ends the reports of waits WatchWaits started.
func (p *ProgressWriter) Stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopTick != nil {
		close(p.stopTick)
		p.stopTick = nil
	}
}

var _ Progress = (*ProgressWriter)(nil)
