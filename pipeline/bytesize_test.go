package pipeline_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docgraph/docgraph/embedstore"
	"github.com/docgraph/docgraph/pipeline"
)

func TestParseByteSize(t *testing.T) {
	tests := []struct {
		in   string
		want pipeline.ByteSize
		text string // String(), "" for in
	}{
		{"64MiB", 64 << 20, ""},
		{"64mib", 64 << 20, "64MiB"},
		{"200MB", 200_000_000, "200000000"},
		{"1.5G", 3 << 29, "1536MiB"},
		{"1 GiB", 1 << 30, "1GiB"},
		{"67108864", 64 << 20, "64MiB"},
		{"10kB", 10_000, "10000"},
		{"512", 512, ""},
		{"2K", 2048, "2KiB"},
	}
	for _, tc := range tests {
		got, err := pipeline.ParseByteSize(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseByteSize(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
			continue
		}
		want := tc.text
		if want == "" {
			want = tc.in
		}
		if got.String() != want {
			t.Errorf("ByteSize(%d).String() = %q, want %q", got, got.String(), want)
		}
	}
	for _, bad := range []string{"", "MiB", "abc", "-5MB", "12 parsecs", "1e3", "99999999TiB"} {
		if got, err := pipeline.ParseByteSize(bad); err == nil || !strings.Contains(err.Error(), "64MiB") {
			t.Errorf("ParseByteSize(%q) = %d, %v; want an error saying what a size looks like", bad, got, err)
		}
	}
}

// TestMaxFileSize: a file over --max-file-size fails alone, with a message
// naming the flag, its value and the file's size; the others are ingested.
func TestMaxFileSize(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "small.md"), adaText)
	write(t, filepath.Join(dir, "big.txt"), strings.Repeat("Ada Lovelace wrote programs. ", 100))
	s := pipeline.Settings{Store: "sqlite://" + filepath.Join(t.TempDir(), "g.db"), MaxFileSize: 1 << 10}
	p, _ := offlinePipeline(t, s, embedstore.NewHash())
	sum, err := p.Ingest(context.Background(), []string{dir}, pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Added != 1 || sum.Failed != 1 {
		t.Fatalf("added %d, failed %d; want 1 and 1: %+v", sum.Added, sum.Failed, sum.Failures)
	}
	msg := sum.Failures[0].Error
	if !strings.Contains(msg, "big.txt") || !strings.Contains(msg, "is 2.8 KiB, over --max-file-size 1 KiB") {
		t.Errorf("failure %q does not name the file, its size and the flag", msg)
	}
}
