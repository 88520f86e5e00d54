package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// The per-round ratios pair each x4 run with the x1 run of its own round,
// not with the medians.
func TestRoundsLine(t *testing.T) {
	s := time.Second
	x1 := row{k: 1, rounds: []ingestRun{{wall: 10 * s, cpu: 20 * s}, {wall: 14 * s, cpu: 24 * s}, {wall: 12 * s, cpu: 22 * s}}}
	x4 := row{k: 4, rounds: []ingestRun{{wall: 45 * s, cpu: 84 * s}, {wall: 56 * s, cpu: 96 * s}, {wall: 60 * s, cpu: 99 * s}}}
	x1.ingest, x1.ingestCPU = 12*s, 22*s
	x4.ingest, x4.ingestCPU = 56*s, 96*s
	var buf bytes.Buffer
	roundsLine(&buf, x1, x4)
	got := buf.String()
	for _, want := range []string{
		"x1 10.0, 14.0, 12.0 s;",
		"x4 45.0, 56.0, 60.0 s;",
		"x4/x1 per round 4.50, 4.00, 5.00 (median 4.50)",
		"CPU 4.20, 4.00, 4.50 (median 4.20)",
		"of the medians: 4.67x, CPU 4.36x",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("rounds line lacks %q:\n%s", want, got)
		}
	}
}

// The fastest rounds' ratio takes each scale's fastest round, whichever
// round it was.
func TestRoundsLineFastest(t *testing.T) {
	s := time.Second
	x1 := row{k: 1, rounds: []ingestRun{{wall: 15 * s, cpu: 26 * s}, {wall: 12 * s, cpu: 25 * s}}}
	x4 := row{k: 4, rounds: []ingestRun{{wall: 54 * s, cpu: 100 * s}, {wall: 66 * s, cpu: 120 * s}}}
	var buf bytes.Buffer
	roundsLine(&buf, x1, x4)
	if want := "of the fastest: 4.50x, CPU 4.00x"; !strings.Contains(buf.String(), want) {
		t.Errorf("rounds line lacks %q:\n%s", want, buf.String())
	}
}

// Each baseline ingest is paired with -bin's ingest of the same round.
func TestVsLine(t *testing.T) {
	s := time.Second
	r := row{k: 1, ingest: 12 * s, rounds: []ingestRun{{wall: 10 * s}, {wall: 14 * s}, {wall: 12 * s}}}
	r.vsRounds = []ingestRun{{wall: 40 * s}, {wall: 35 * s}, {wall: 48 * s}}
	var buf bytes.Buffer
	vsLine(&buf, options{bin: "new", vsIngest: "old"}, r)
	got := buf.String()
	for _, want := range []string{
		"x1 ingest of old: 40.0, 35.0, 48.0 s (median 40.0 s)",
		"new's multiple of it per round 0.250, 0.400, 0.250 (median 0.250)",
		"of the medians: 0.300x",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("baseline line lacks %q:\n%s", want, got)
		}
	}
}
