package loader_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docgraph/docgraph/loader"
	"github.com/docgraph/docgraph/loader/internal/pdfgen"
)

func loadFixture(t *testing.T, name string) *loader.Document {
	t.Helper()
	doc, err := loader.New().Load(context.Background(), filepath.Join(pdfDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// lines is the text's non-empty lines.
func lines(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// Each fixture reproduces a way the loader used to lose or garble text
// (see internal/pdfgen/faithful.go for how each is drawn).
func TestFaithfulText(t *testing.T) {
	tests := []struct {
		file  string
		lines []string
	}{
		// Ligatures through ToUnicode, a Type 1 font's built-in encoding
		// and /Differences glyph names; word gaps by displacement only.
		{"ligatures.pdf", []string{
			"the first fitted models suffix here",
			"in the first instance an office job",
			"an office memo baffled us effort wasted",
		}},
		// Form XObjects in place, nested, drawn twice; a loop of forms.
		{"forms.pdf", []string{
			"Page text before the form.",
			"Text inside the form.",
			"Nested form text.",
			"Repeated stamp Repeated stamp",
			"Page text after the form.",
		}},
		// Property lists with escapes and nested dictionaries; ActualText.
		{"markedcontent.pdf", []string{
			"Typeset with TeX, then the rest.",
			"Angle protect > brackets.",
			"The rest of the page is read.",
		}},
		// A ToUnicode destination of three bytes (the pdf library panicked
		// with "index out of range [3] with length 3").
		{"oddtounicode.pdf", []string{"Hello Hello!!"}},
		// Hebrew and Arabic drawn in visual order.
		{"rtl.pdf", pdfgen.RTLText},
		// Dot leaders, and a letter-spaced line.
		{"leaders.pdf", []string{"1 Introduction 1", "2 Reading the shelf 5", "3 Results 12", "Demonstration of spacing"}},
		// Two columns on shared baselines between full-width lines.
		{"columns.pdf", pdfgen.ColumnsText},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			doc := loadFixture(t, tc.file)
			if got := lines(doc.Text); strings.Join(got, "\n") != strings.Join(tc.lines, "\n") {
				t.Errorf("lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.lines, "\n"))
			}
		})
	}
}

func TestFormLoopIsReported(t *testing.T) {
	doc := loadFixture(t, "forms.pdf")
	if len(doc.Issues) != 1 || doc.Issues[0].Kind != loader.WarnTextLoss || doc.Issues[0].Count != 1 ||
		!strings.Contains(doc.Issues[0].Message, "forms nested in a loop") {
		t.Errorf("Issues = %+v, want one text-loss warning for the form loop", doc.Issues)
	}
}

// Columns are only read apart where each side holds real text: a table of
// contents has page numbers down its right edge, not a column.
func TestLeadersAreNotColumns(t *testing.T) {
	doc := loadFixture(t, "leaders.pdf")
	if !strings.HasPrefix(doc.Text, "1 Introduction 1\n2 Reading") {
		t.Errorf("text = %q", doc.Text)
	}
}

func TestLossWarnings(t *testing.T) {
	doc := loadFixture(t, "losses.pdf")
	if !strings.Contains(doc.Text, "Readable words.") || !strings.Contains(doc.Text, "Kept before the break.") {
		t.Errorf("text = %q", doc.Text)
	}
	want := map[loader.WarningKind]struct {
		count int
		says  string
	}{
		loader.WarnPagesSkipped:   {1, "1 of 3 pages skipped: page 3: unknown filter NoSuchDecode"},
		loader.WarnUnmappedGlyphs: {26, "no Unicode mapping in font MysteryDingbats (26)"},
		loader.WarnTextLoss:       {1, "text recovered with loss on 1 page (2): damaged content stream"},
	}
	if len(doc.Issues) != len(want) || len(doc.Warnings) != len(want) {
		t.Fatalf("Issues = %+v", doc.Issues)
	}
	for i, w := range doc.Issues {
		exp, ok := want[w.Kind]
		if !ok || w.Count != exp.count || !strings.Contains(w.Message, exp.says) || doc.Warnings[i] != w.Message {
			t.Errorf("issue %+v, want count %d and a message containing %q", w, exp.count, exp.says)
		}
		if len(w.Message) > loader.MaxWarningLen || strings.ContainsAny(w.Message, "\n\r") {
			t.Errorf("message %q is not one short line", w.Message)
		}
	}
}
