package loader_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/docgraph/docgraph/loader"
)

// These tests read files LibreOffice writes, made at test time from the
// sources in testdata/office, since hand-built fixtures only show what
// their author thought the formats hold. They skip where LibreOffice (or
// qpdf, or Python-UNO) is not installed.

// soffice converts src into dir as each "ext:filter" says, with a private
// profile so that it neither touches nor waits for the user's own.
func soffice(t *testing.T, src, dir string, targets ...string) map[string]string {
	t.Helper()
	bin, err := exec.LookPath("soffice")
	if err != nil {
		t.Skip("LibreOffice (soffice) is not installed")
	}
	profile := "file://" + filepath.ToSlash(filepath.Join(t.TempDir(), "profile"))
	out := map[string]string{}
	for _, target := range targets {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		cmd := exec.CommandContext(ctx, bin, "-env:UserInstallation="+profile, "--headless", "--norestore",
			"--convert-to", target, "--outdir", dir, src)
		msg, err := cmd.CombinedOutput()
		cancel()
		ext, _, _ := strings.Cut(target, ":")
		p := filepath.Join(dir, strings.TrimSuffix(filepath.Base(src), filepath.Ext(src))+"."+ext)
		if _, statErr := os.Stat(p); err != nil || statErr != nil {
			t.Fatalf("soffice --convert-to %s %s: %v %v\n%s", target, src, err, statErr, msg)
		}
		out[ext] = p
	}
	return out
}

// words splits text into lower-case words of letters and digits.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// recall is the share of source's words (counted with repeats) in got.
func recall(source, got string) float64 {
	have := map[string]int{}
	for _, w := range words(got) {
		have[w]++
	}
	found, total := 0, 0
	for _, w := range words(source) {
		total++
		if have[w] > 0 {
			have[w]--
			found++
		}
	}
	if total == 0 {
		return 1
	}
	return float64(found) / float64(total)
}

// The text of testdata/office/manual.fodt and talk.fodp, as written there.
const (
	manualText = `Quayside Engineering confidential handbook. Revision seventeen printed in Gdansk.
Priming the pump. Before the first start the impeller housing must be flooded with clean water.
Brackish water corrodes the bronze seals. Close the discharge valve. Check the gasket.
Replace cracked rubber. Grease the flange. Tighten the bolts. Open the vent screw.
Pour water until bubbles stop. Spare parts. Mechanical seal kit. Impeller with key.
Part number. Torque. QX-4471. forty newton metres.`
	talkText = `Bleaching along the outer reef. Water warmed two degrees in March.
Staghorn colonies lost their algae first. Mention the divers from Townsville.
Recovery plan. Shade cloth over nursery frames. Replant fragments before the wet season.
Budget. Eighty thousand dollars over three years. Ask the council about matching funds.`
)

func TestLibreOfficeFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("starts LibreOffice")
	}
	dir := t.TempDir()
	writer := soffice(t, filepath.Join("testdata", "office", "manual.fodt"), dir, "docx:MS Word 2007 XML", "odt:writer8")
	impress := soffice(t, filepath.Join("testdata", "office", "talk.fodp"), dir, "pptx:Impress MS PowerPoint 2007 XML", "odp:impress8")
	tests := []struct {
		path, format, title, source string
		want                        []string // lines of the loaded text, in order
	}{
		{writer["docx"], "docx", "Harbour Pump Manual", manualText, []string{
			"Priming the pump", "1. Close the discharge valve.", "a) Check the gasket.", "i. Replace cracked rubber.",
			"ii. Grease the flange.", "b) Tighten the bolts.", "2. Open the vent screw.", "3. Pour water until bubbles stop.",
			"• Mechanical seal kit", "QX-4471\tforty newton metres",
			"Quayside Engineering confidential handbook", "Revision seventeen printed in Gdansk",
			"Brackish water corrodes the bronze seals.",
		}},
		{writer["odt"], "odt", "Harbour Pump Manual", manualText, []string{
			"Priming the pump", "1. Close the discharge valve.", "a) Check the gasket.", "i. Replace cracked rubber.",
			"ii. Grease the flange.", "b) Tighten the bolts.", "2. Open the vent screw.", "3. Pour water until bubbles stop.",
			"- Mechanical seal kit", "QX-4471\tforty newton metres", "Brackish water corrodes the bronze seals.",
			"Quayside Engineering confidential handbook", "Revision seventeen printed in Gdansk",
		}},
		{impress["pptx"], "pptx", "Coral Reef Survey", talkText, []string{
			"Bleaching along the outer reef", "Mention the divers from Townsville.", "Recovery plan", "Budget", "Ask the council about matching funds.",
		}},
		{impress["odp"], "odp", "Coral Reef Survey", talkText, []string{
			"Bleaching along the outer reef", "Mention the divers from Townsville.", "Recovery plan", "Budget", "Ask the council about matching funds.",
		}},
	}
	l := loader.New()
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			doc, err := l.Load(context.Background(), tt.path)
			if err != nil {
				t.Fatal(err)
			}
			if doc.Format != tt.format || doc.Title != tt.title {
				t.Errorf("format %q, title %q; want %q, %q", doc.Format, doc.Title, tt.format, tt.title)
			}
			if r := recall(tt.source, doc.Text); r < 1 {
				t.Errorf("word recall %.3f against the source, want 1:\n%s", r, doc.Text)
			}
			rest := doc.Text
			for _, w := range tt.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Errorf("no %q after the lines before it in:\n%s", w, doc.Text)
					continue
				}
				rest = rest[i+len(w):]
			}
			// Page headers and footers once, though printed on every page.
			if n := strings.Count(doc.Text, "Quayside Engineering"); (tt.format == "docx" || tt.format == "odt") && n != 1 {
				t.Errorf("header text %d times", n)
			}
		})
	}
}

// pythonUNO returns a python3 that can import LibreOffice's uno module.
func pythonUNO(t *testing.T) string {
	t.Helper()
	for _, py := range []string{"/usr/bin/python3", "python3"} {
		if exec.Command(py, "-c", "import uno").Run() == nil {
			return py
		}
	}
	t.Skip("no python3 with the uno module (python3-uno) to save password-protected files")
	return ""
}

// TestPasswordProtectedFiles: files saved with a password by LibreOffice
// and qpdf fail with a *FileError that names them and says so.
func TestPasswordProtectedFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("starts LibreOffice")
	}
	dir := t.TempDir()
	made := soffice(t, filepath.Join("testdata", "office", "manual.fodt"), dir, "docx:MS Word 2007 XML", "odt:writer8", "pdf:writer_pdf_Export")
	talk := soffice(t, filepath.Join("testdata", "office", "talk.fodp"), dir, "pptx:Impress MS PowerPoint 2007 XML")
	type locked struct {
		path   string
		cause  error
		reason string
	}
	var files []locked
	if _, err := exec.LookPath("soffice"); err == nil {
		py := pythonUNO(t)
		script, err := filepath.Abs(filepath.Join("testdata", "office", "encrypt.py"))
		if err != nil {
			t.Fatal(err)
		}
		profile := "file://" + filepath.ToSlash(filepath.Join(t.TempDir(), "profile"))
		for _, c := range []struct{ src, out, filter string }{
			{made["docx"], "locked.docx", "MS Word 2007 XML"},
			{made["odt"], "locked.odt", "writer8"},
			{talk["pptx"], "locked.pptx", "Impress MS PowerPoint 2007 XML"},
		} {
			out := filepath.Join(dir, c.out)
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			msg, err := exec.CommandContext(ctx, py, script, profile, c.src, out, c.filter, "harbour-secret").CombinedOutput()
			cancel()
			if err != nil {
				t.Fatalf("encrypt %s: %v\n%s", c.out, err, msg)
			}
			reason := "password-protected Office file"
			if filepath.Ext(out) == ".odt" {
				reason = "password-protected OpenDocument file"
			}
			files = append(files, locked{out, loader.ErrEncrypted, reason})
		}
	}
	if qpdf, err := exec.LookPath("qpdf"); err == nil {
		for _, c := range []struct {
			name   string
			args   []string
			reason string
		}{
			{"rc4.pdf", []string{"--allow-weak-crypto", "--encrypt", "harbour-secret", "owner", "128", "--use-aes=n", "--"}, "password-protected"},
			{"aes128.pdf", []string{"--encrypt", "harbour-secret", "owner", "128", "--use-aes=y", "--"}, "password-protected"},
			{"aes256.pdf", []string{"--encrypt", "harbour-secret", "owner", "256", "--"}, "perhaps password-protected"},
		} {
			out := filepath.Join(dir, c.name)
			if msg, err := exec.Command(qpdf, append(c.args, made["pdf"], out)...).CombinedOutput(); err != nil {
				t.Fatalf("qpdf %s: %v\n%s", c.name, err, msg)
			}
			files = append(files, locked{out, loader.ErrEncryptedPDF, c.reason})
		}
		// Encrypted without a user password: it opens, so it is read.
		open := filepath.Join(dir, "restricted.pdf")
		if msg, err := exec.Command(qpdf, "--encrypt", "", "owner", "128", "--use-aes=y", "--", made["pdf"], open).CombinedOutput(); err != nil {
			t.Fatalf("qpdf: %v\n%s", err, msg)
		}
		doc, err := loader.New().Load(context.Background(), open)
		if err != nil {
			t.Errorf("a PDF encrypted without a user password: %v", err)
		} else if r := recall(manualText, doc.Text); r < 0.9 {
			t.Errorf("its word recall %.3f:\n%s", r, doc.Text)
		}
	}
	if len(files) == 0 {
		t.Skip("neither Python-UNO nor qpdf to make password-protected files")
	}
	for _, f := range files {
		_, err := loader.New().Load(context.Background(), f.path)
		var fe *loader.FileError
		if !errors.As(err, &fe) || fe.Path != f.path || !errors.Is(err, f.cause) || !strings.Contains(err.Error(), f.reason) {
			t.Errorf("%s: got %v, want a *FileError naming it, %v, %q", filepath.Base(f.path), err, f.cause, f.reason)
			continue
		}
		t.Logf("%s", err)
	}
}
