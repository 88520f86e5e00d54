package termtext

import "testing"

func TestFit(t *testing.T) {
	tests := []struct {
		in      string
		cols    int
		keepEnd bool
		want    string
	}{
		{"short", 10, false, "short"},
		{"long-file-name.md", 8, true, "…name.md"},
		{"long-file-name.md", 8, false, "long-fi…"},
		{"日本語.md", 6, true, "…語.md"},
		{"anything", 0, false, ""},
	}
	for _, tt := range tests {
		got := Fit(tt.in, tt.cols, tt.keepEnd)
		if got != tt.want || Columns(got) > max(tt.cols, 0) {
			t.Errorf("Fit(%q, %d, %v) = %q (%d columns), want %q", tt.in, tt.cols, tt.keepEnd, got, Columns(got), tt.want)
		}
	}
	if Columns("e\u0301") != 1 || Columns("日本") != 4 {
		t.Errorf("combining mark or wide characters miscounted")
	}
}
