package pipeline

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/docgraph/docgraph/internal/termtext"
	"github.com/docgraph/docgraph/llm"
)

// TestProgressLines feeds the progress display directly: a 2 KB warning
// full of newlines is one short line everywhere, and the bar on a
// terminal never outgrows the terminal's width.
func TestProgressLines(t *testing.T) {
	raw := strings.Repeat("BT /F1 12 Tf 72 712 Td (stream) Tj ET\n", 60) // ~2 KB of content stream
	r := FileResult{Path: "/docs/manual.pdf", Outcome: Added, Chunks: 3,
		Warnings: []string{"page 2 skipped: " + raw}, Duration: time.Millisecond}

	var log bytes.Buffer
	p := NewProgressWriter(&log, false, nil)
	p.Start(1)
	p.File(r)
	lines := strings.Split(strings.TrimSuffix(log.String(), "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[1], "warning: /docs/manual.pdf: page 2 skipped: BT /F1") || len(lines[1]) > MaxWarningBytes+len("warning: ") {
		t.Errorf("want the file line and one bounded warning line, got %d lines:\n%s", len(lines), log.String())
	}

	for _, width := range []int{30, 50, 120} {
		var term bytes.Buffer
		p := NewProgressWriter(&term, true, func() int { return width })
		p.Start(300)
		for i := range 300 {
			name := "/docs/" + strings.Repeat("日本語のファイル名", 1+i%4) + ".md"
			res := FileResult{Path: name, Outcome: Added}
			if i%50 == 0 {
				res.Warnings = []string{raw}
			}
			p.File(res)
		}
		p.Finish()
		bars, warnings := 0, 0
		for _, seg := range strings.FieldsFunc(term.String(), func(r rune) bool { return r == '\r' || r == '\n' }) {
			seg = strings.TrimPrefix(seg, "\x1b[K")
			switch {
			case strings.HasPrefix(seg, "["):
				bars++
				if termtext.Columns(seg) >= width {
					t.Fatalf("width %d: a bar of %d columns: %q", width, termtext.Columns(seg), seg)
				}
			case strings.HasPrefix(seg, "warning: "):
				warnings++
				if len(seg) > MaxWarningBytes+len("warning: ") {
					t.Fatalf("a warning of %d bytes: %q", len(seg), seg)
				}
			default:
				t.Fatalf("unexpected output %q", seg)
			}
		}
		if bars != 300 || warnings != 6 {
			t.Errorf("width %d: %d bars, %d warnings; want 300 and 6", width, bars, warnings)
		}
	}
}

// TestProgressShowsWaits: on a terminal the bar names the model, its
// host, the oldest call's age and the calls in flight once a call has
// waited over 3 s; off a terminal one line says so every 30 s.
func TestProgressShowsWaits(t *testing.T) {
	var waits []llm.Waits
	source := func() []llm.Waits { return waits }
	stuck := llm.Waits{Model: "openai:gpt-4o-mini", Endpoint: "https://api.example/v1/chat/completions",
		InFlight: 4, Oldest: 12 * time.Second, FailedAttempts: 2, Failing: 9 * time.Second, LastError: "HTTP 500: overloaded"}
	const want = "waiting for openai:gpt-4o-mini at api.example: 12s, 4 in flight; 2 attempts failed in the last 9s, the last: HTTP 500: overloaded"

	t.Run("terminal", func(t *testing.T) {
		var buf bytes.Buffer
		p := NewProgressWriter(&buf, true, func() int { return 200 })
		p.waits = source
		p.Start(10)
		waits = []llm.Waits{{Model: "openai:gpt-4o-mini", InFlight: 2, Oldest: 2 * time.Second}}
		p.showWait(time.Now())
		if buf.Len() != 0 {
			t.Errorf("a 2 s wait was shown: %q", buf.String())
		}
		waits = []llm.Waits{stuck}
		p.showWait(time.Now())
		if !strings.Contains(buf.String(), "] 0/10 ") || !strings.Contains(buf.String(), want) {
			t.Errorf("bar %q, want the counts and %q", buf.String(), want)
		}
		fmt.Fprintln(p, "ingest: llm: llm call failed, retrying")
		if !strings.HasSuffix(buf.String(), "\r\033[Kingest: llm: llm call failed, retrying\n\r\033[K"+p.barLine(200)) {
			t.Errorf("a log line is not printed above a redrawn bar: %q", buf.String())
		}
		p.Finish()
	})
	t.Run("log", func(t *testing.T) {
		var buf bytes.Buffer
		p := NewProgressWriter(&buf, false, nil)
		p.Prefix = "ingest: "
		p.waits = source
		waits = []llm.Waits{stuck}
		t0 := time.Now()
		for _, at := range []time.Duration{0, time.Second, 29 * time.Second, 30 * time.Second, 45 * time.Second} {
			p.showWait(t0.Add(at))
		}
		if got := strings.Count(buf.String(), "ingest: "+want+"\n"); got != 2 {
			t.Errorf("%d wait lines in 45 s, want 2 (at 0 s and 30 s):\n%s", got, buf.String())
		}
	})
}
