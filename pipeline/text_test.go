package pipeline

import (
	"strings"
	"testing"
	"time"
)

func TestChangeLine(t *testing.T) {
	at := time.Date(2025, 1, 2, 15, 4, 5, 0, time.UTC)
	tests := []struct {
		r    FileResult
		want string
	}{
		{FileResult{Path: "/d/a.md", DocID: "0123456789abcdef", Outcome: Added, Chunks: 2, Entities: 3, Relations: 1, Duration: 1500 * time.Microsecond},
			"15:04:05 added     /d/a.md (doc 0123456789ab) 2ms: 2 chunks, 3 entity mentions, 1 relation mentions"},
		{FileResult{Path: "/d/b\n.md", Outcome: Failed, Error: "bad\n\npdf"},
			`15:04:05 failed    /d/b\n.md 0s: bad pdf`},
		{FileResult{Path: "/d/c.md", Outcome: Renamed}, "15:04:05 renamed   /d/c.md 0s: graph kept"},
	}
	for _, tt := range tests {
		if got := tt.r.ChangeLine(at); got != tt.want {
			t.Errorf("ChangeLine:\ngot  %q\nwant %q", got, tt.want)
		}
	}
}

func TestSummaryTextAndTidy(t *testing.T) {
	long := strings.Repeat("x ", 2*MaxErrorBytes)
	s := &Summary{Added: 1, Failed: 1, Failures: []FileResult{{Path: "/a", Error: long}},
		Unsupported: 3, UnsupportedFiles: []FileResult{{Error: "no file extension"}, {Error: ".go"}, {Error: "no file extension"}}}
	var b strings.Builder
	s.WriteText(&b)
	out := b.String()
	for _, want := range []string{"documents: 1 added,", "not ingested, as of no supported type: 2 no file extension, 1 .go (--json lists them)"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if tidy := s.Tidy(); len(tidy.Failures[0].Error) > MaxErrorBytes || s.Failures[0].Error != long {
		t.Errorf("Tidy: %d bytes, or changed the original", len(tidy.Failures[0].Error))
	}
	if Counted(1, "retry") != "1 retry" || Counted(int64(3), "transaction retry") != "3 transaction retries" {
		t.Error("Counted")
	}
}
