package loader_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ledongthuc/pdf"

	"github.com/docgraph/docgraph/loader"
	"github.com/docgraph/docgraph/loader/internal/pdfgen"
)

// wordRecall is the share of want's words (as a multiset) found in got.
func wordRecall(want, got string) float64 {
	have := make(map[string]int)
	for _, w := range strings.Fields(got) {
		have[w]++
	}
	words := strings.Fields(want)
	found := 0
	for _, w := range words {
		if have[w] > 0 {
			have[w]--
			found++
		}
	}
	return float64(found) / float64(len(words))
}

// lineRecall is the share of want's non-empty lines that are lines of got.
func lineRecall(want, got string) float64 {
	have := make(map[string]int)
	for _, l := range strings.Split(got, "\n") {
		have[strings.TrimSpace(l)]++
	}
	total, found := 0, 0
	for _, l := range strings.Split(want, "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		total++
		if have[l] > 0 {
			have[l]--
			found++
		}
	}
	return float64(found) / float64(total)
}

func paragraphs(s string) int {
	n := 0
	for _, p := range strings.Split(strings.TrimSpace(s), "\n\n") {
		if strings.TrimSpace(p) != "" {
			n++
		}
	}
	return n
}

func readFixture(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(pdfDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestLoadPDF(t *testing.T) {
	tests := []struct {
		file, expected string
		title          string
		lines          string  // reference for line checks, if not expected
		minLines       float64 // share of reference lines reproduced exactly
		sameParagraphs bool
		warning        string
	}{
		// Generated: headings drawn twice, kerned TJ arrays with spaces by
		// displacement, words placed one by one out of order, justified lines.
		{file: "prose.pdf", expected: "prose.txt", title: "The Quiet Engineering of Rivers", minLines: 0.98, sameParagraphs: true},
		// Duplicate glyphs, lines drawn bottom up, rotated margin notes, small footnote.
		{file: "layout.pdf", expected: "layout.txt", title: "layout", minLines: 0.98, sameParagraphs: true},
		// Standard fonts without /Widths: positions come from built-in metrics.
		{file: "nowidths.pdf", expected: "nowidths.txt", title: "Café Notes — Winter", minLines: 0.98, sameParagraphs: true},
		// Object streams and an xref stream.
		{file: "objstreams.pdf", expected: "prose.txt", title: "The Quiet Engineering of Rivers", minLines: 0.98, sameParagraphs: true},
		// Linearized: two xref sections chained by /Prev.
		{file: "linearized.pdf", expected: "prose.txt", title: "The Quiet Engineering of Rivers", minLines: 0.98, sameParagraphs: true},
		// Opened with the empty user password.
		{file: "encrypted-owner.pdf", expected: "prose.txt", title: "The Quiet Engineering of Rivers", minLines: 0.98, sameParagraphs: true, warning: "encrypted"},
		// LibreOffice output (subset TrueType fonts, justified text), lines
		// checked against poppler's pdftotext reading of the same file.
		{file: "office.pdf", expected: "office.txt", title: "Lending Libraries", lines: "office.pdftotext.txt", minLines: 0.98, sameParagraphs: true},
		// Chromium's print to PDF: CID fonts, every glyph placed with its own Td.
		{file: "chrome.pdf", expected: "office.txt", title: "Lending Libraries", lines: "chrome.pdftotext.txt", minLines: 0.98, sameParagraphs: true},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			doc, err := loader.New().Load(context.Background(), filepath.Join(pdfDir, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			want := readFixture(t, tc.expected)
			if r := wordRecall(want, doc.Text); r < 0.98 {
				t.Errorf("word recall %.3f < 0.98\ngot:\n%s", r, doc.Text)
			}
			if p := wordRecall(doc.Text, want); p < 0.98 {
				t.Errorf("word precision %.3f < 0.98\ngot:\n%s", p, doc.Text)
			}
			if tc.lines == "" && doc.Text != strings.TrimSuffix(want, "\n") {
				// Generated fixtures are simple enough to come back exactly.
				t.Errorf("text differs from %s:\n%s", tc.expected, doc.Text)
			}
			ref := want
			if tc.lines != "" {
				ref = readFixture(t, tc.lines)
			}
			if r := lineRecall(ref, doc.Text); r < tc.minLines {
				t.Errorf("line recall %.3f < %.2f\ngot:\n%s", r, tc.minLines, doc.Text)
			}
			if tc.sameParagraphs && paragraphs(doc.Text) != paragraphs(want) {
				t.Errorf("%d paragraphs, want %d\ngot:\n%s", paragraphs(doc.Text), paragraphs(want), doc.Text)
			}
			if doc.Title != tc.title || doc.Format != "pdf" {
				t.Errorf("Title, Format = %q, %q; want %q, pdf", doc.Title, doc.Format, tc.title)
			}
			if (tc.warning == "") != (len(doc.Warnings) == 0) || (tc.warning != "" && !strings.Contains(doc.Warnings[0], tc.warning)) {
				t.Errorf("Warnings = %q, want one containing %q", doc.Warnings, tc.warning)
			}
			t.Logf("%s: words %.3f, lines %.3f", tc.file, wordRecall(want, doc.Text), lineRecall(ref, doc.Text))
		})
	}
}

// The generated fixtures must really defeat naive extraction, or the test
// above proves nothing: the library's plain-text concatenation loses spaces.
func TestFixturesDefeatConcatenation(t *testing.T) {
	for _, name := range []string{"prose", "layout"} {
		f, r, err := pdf.Open(filepath.Join(pdfDir, name+".pdf"))
		if err != nil {
			t.Fatal(err)
		}
		plain, err := r.GetPlainText()
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		b.ReadFrom(plain)
		if rec := wordRecall(readFixture(t, name+".txt"), b.String()); rec > 0.9 {
			t.Errorf("%s: naive extraction already recovers %.2f of the words", name, rec)
		}
	}
}

func TestPDFPageErrorsAreIsolated(t *testing.T) {
	doc, err := loader.New().Load(context.Background(), filepath.Join(pdfDir, "badpage.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	if doc.Text != "This page is fine." {
		t.Errorf("Text = %q", doc.Text)
	}
	if len(doc.Issues) != 1 || doc.Issues[0].Kind != loader.WarnPagesSkipped || doc.Issues[0].Count != 1 ||
		!strings.HasPrefix(doc.Warnings[0], "1 of 2 pages skipped: page 2: ") {
		t.Errorf("Issues = %+v, want one skipped page, page 2", doc.Issues)
	}
}

// The committed fixtures must be what the generator makes today.
func TestFixturesUpToDate(t *testing.T) {
	for name, data := range pdfgen.Fixtures() {
		got, err := os.ReadFile(filepath.Join(pdfDir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, data) {
			t.Errorf("%s differs from the generator's output; run go generate ./loader", name)
		}
	}
}

func BenchmarkLoadPDF(b *testing.B) {
	for _, name := range []string{"prose.pdf", "office.pdf"} {
		b.Run(name, func(b *testing.B) {
			l := loader.New()
			path := filepath.Join(pdfDir, name)
			for b.Loop() {
				if _, err := l.Load(context.Background(), path); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
