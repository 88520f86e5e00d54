package cli

import (
	"strings"
	"testing"
)

func TestEscape(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain.md", "plain.md"},
		{"日本語 café", "日本語 café"},
		{"a\nb", `a\nb`},
		{"tab\there", `tab\there`},
		{"esc\x1b[31mred", `esc\x1b[31mred`},
		{"bell\a", `bell\x07`},
		{"del\x7f", `del\x7f`},
		{"c1\u0085", `c1\x85`},
		{"rlo\u202efdp.exe", `rlo\u202efdp.exe`},
		{"bad\xffbyte", `bad\xffbyte`},
	}
	for _, tt := range tests {
		if got := Escape(tt.in); got != tt.want {
			t.Errorf("Escape(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestOneLine(t *testing.T) {
	if got := OneLine("a\n\n b\tc  ", 0); got != "a b c" {
		t.Errorf("whitespace: %q", got)
	}
	long := "/start/" + strings.Repeat("d/", 2000) + "end: file name too long"
	got := OneLine(long, 100)
	if len(got) > 100 || !strings.HasPrefix(got, "/start/") || !strings.HasSuffix(got, "end: file name too long") || !strings.Contains(got, "…") {
		t.Errorf("long line cut to %d bytes: %q", len(got), got)
	}
	if got := OneLine(strings.Repeat("日", 100), 20); len(got) > 20 || strings.ContainsRune(got, '\uFFFD') {
		t.Errorf("cut inside a rune: %q", got)
	}
}

func TestFitAndColumns(t *testing.T) {
	if Columns("abc") != 3 || Columns("日本") != 4 || Columns("e\u0301") != 1 {
		t.Errorf("columns: %d %d %d", Columns("abc"), Columns("日本"), Columns("e\u0301"))
	}
	for _, cols := range []int{1, 5, 10} {
		for _, keepEnd := range []bool{false, true} {
			got := Fit("日本語のファイル名.md", cols, keepEnd)
			if Columns(got) > cols {
				t.Errorf("Fit(%d, %v) = %q: %d columns", cols, keepEnd, got, Columns(got))
			}
		}
	}
	if got := Fit("long-file-name.md", 8, true); got != "…name.md" {
		t.Errorf("keepEnd: %q", got)
	}
	if got := Fit("short", 10, false); got != "short" {
		t.Errorf("fits already: %q", got)
	}
}
