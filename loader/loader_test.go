package loader_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/docgraph/docgraph/loader"
)

// pdfDir holds the committed PDF fixtures (see internal/genfixtures).
const pdfDir = "../testdata/pdf"

func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadText(t *testing.T) {
	tests := []struct {
		name, file  string
		data        string
		wantText    string
		wantTitle   string
		wantFormat  string
		wantWarning string
	}{
		{
			name: "markdown keeps headings, drops BOM and CRLF",
			file: "guide.md", data: "\xEF\xBB\xBF# Getting Started\r\n\r\nInstall it.\r\n## Next\r\n",
			wantText: "# Getting Started\n\nInstall it.\n## Next\n", wantTitle: "Getting Started", wantFormat: "md",
		},
		{
			name: "markdown title skips front matter and fenced code",
			file: "notes.markdown", data: "---\ntitle: Front\n---\n```sh\n# not a heading\n```\nIntro.\n\n### Real Title ###\n",
			wantText: "---\ntitle: Front\n---\n```sh\n# not a heading\n```\nIntro.\n\n### Real Title ###\n", wantTitle: "Real Title", wantFormat: "md",
		},
		{
			name: "setext heading",
			file: "setext.md", data: "Release Notes\n=============\n\nBody.\n",
			wantText: "Release Notes\n=============\n\nBody.\n", wantTitle: "Release Notes", wantFormat: "md",
		},
		{
			name: "front matter title when there is no heading",
			file: "fm.md", data: "---\ntitle: \"Quarterly Plan\"\n---\nJust text.\n",
			wantText: "---\ntitle: \"Quarterly Plan\"\n---\nJust text.\n", wantTitle: "Quarterly Plan", wantFormat: "md",
		},
		{
			name: "markdown without heading is titled by file name",
			file: "plain-notes.md", data: "#hashtag is not a heading\n",
			wantText: "#hashtag is not a heading\n", wantTitle: "plain-notes", wantFormat: "md",
		},
		{
			name: "txt is titled by file name, lone CR becomes LF",
			file: "Report.2024.TXT", data: "line one\rline two\r\n",
			wantText: "line one\nline two\n", wantTitle: "Report.2024", wantFormat: "txt",
		},
		{
			name: ".text extension",
			file: "a.text", data: "tab\tand form feed\f are text\n",
			wantText: "tab\tand form feed\f are text\n", wantTitle: "a", wantFormat: "txt",
		},
		{
			name: "invalid UTF-8 is repaired byte by byte",
			file: "latin1.txt", data: "caf\xE9 cr\xE8me br\xFBl\xE9e\n",
			wantText: "caf\uFFFD cr\uFFFDme br\uFFFDl\uFFFDe\n", wantTitle: "latin1", wantFormat: "txt",
			wantWarning: "invalid UTF-8 repaired: 4 bytes replaced with U+FFFD",
		},
		{
			name: "UTF-16LE with BOM is decoded",
			file: "win.txt", data: "\xFF\xFEH\x00i\x00 \x00\xE9\x00\r\x00\n\x00",
			wantText: "Hi é\n", wantTitle: "win", wantFormat: "txt", wantWarning: "decoded from UTF-16LE",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, tc.file, []byte(tc.data))
			doc, err := loader.New().Load(context.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			if doc.Text != tc.wantText {
				t.Errorf("Text = %q, want %q", doc.Text, tc.wantText)
			}
			if doc.Title != tc.wantTitle {
				t.Errorf("Title = %q, want %q", doc.Title, tc.wantTitle)
			}
			if doc.Format != tc.wantFormat {
				t.Errorf("Format = %q, want %q", doc.Format, tc.wantFormat)
			}
			if doc.Path != path || doc.Size != int64(len(tc.data)) || doc.ModTime.IsZero() {
				t.Errorf("Path, Size, ModTime = %q, %d, %v; want %q, %d, non-zero", doc.Path, doc.Size, doc.ModTime, path, len(tc.data))
			}
			sum := sha256.Sum256([]byte(tc.wantText))
			if want := hex.EncodeToString(sum[:]); doc.Hash != want || doc.ID != want[:32] {
				t.Errorf("ID, Hash = %s, %s; want hash of text %s", doc.ID, doc.Hash, want)
			}
			switch {
			case tc.wantWarning == "" && len(doc.Warnings) > 0:
				t.Errorf("unexpected warnings %q", doc.Warnings)
			case tc.wantWarning != "" && (len(doc.Warnings) != 1 || doc.Warnings[0] != tc.wantWarning):
				t.Errorf("Warnings = %q, want [%q]", doc.Warnings, tc.wantWarning)
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	big := bytes.Repeat([]byte("words "), 20)
	tests := []struct {
		name     string
		path     func(t *testing.T) string
		opts     []loader.Option
		want     error
		wantText string // substring of the error message
	}{
		{"empty file", file("empty.txt", ""), nil, loader.ErrEmpty, "empty"},
		{"whitespace only", file("blank.md", " \n\t\r\n  "), nil, loader.ErrEmpty, "whitespace"},
		{"BOM only", file("bom.txt", "\xEF\xBB\xBF\n"), nil, loader.ErrEmpty, "whitespace"},
		{"empty pdf", file("empty.pdf", ""), nil, loader.ErrEmpty, "empty"},
		{"NUL bytes", file("image.txt", "GIF89a\x01\x00\x01\x00\x00\xff"), nil, loader.ErrBinary, "NUL byte at offset 7"},
		{"control characters", file("ctl.md", strings.Repeat("ab\x01\x02\x03\x04", 50)), nil, loader.ErrBinary, "control characters"},
		{"invalid UTF-8 rejected", file("latin1.txt", "ok caf\xE9 and na\xEFve"), []loader.Option{loader.WithInvalidUTF8(loader.Reject)}, loader.ErrInvalidUTF8, "2 bad bytes, first at byte 6"},
		{"too large", file("big.txt", string(big)), []loader.Option{loader.WithMaxBytes(100)}, loader.ErrTooLarge, "is 120 bytes, over --max-file-size 100 bytes"},
		{"unsupported extension", file("report.xlsx", "PK"), nil, loader.ErrUnsupported, `".xlsx"`},
		{"no extension", file("README", "hello"), nil, loader.ErrUnsupported, "no file extension"},
		{"directory", func(t *testing.T) string {
			dir := filepath.Join(t.TempDir(), "notes.md")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			return dir
		}, nil, loader.ErrUnsupported, "directory"},
		{"missing file", func(t *testing.T) string { return filepath.Join(t.TempDir(), "gone.txt") }, nil, fs.ErrNotExist, "no such file"},
		{"garbage pdf", fixture("garbage.pdf"), nil, loader.ErrMalformedPDF, "header"},
		{"broken xref", fixture("brokenxref.pdf"), nil, loader.ErrMalformedPDF, "offset 999999"},
		{"truncated pdf", fixture("truncated.pdf"), nil, loader.ErrMalformedPDF, "truncated"},
		{"encrypted with user password", fixture("encrypted-user.pdf"), nil, loader.ErrEncryptedPDF, "password"},
		{"encrypted with AES-256", fixture("encrypted-aes256.pdf"), nil, loader.ErrEncryptedPDF, "256-bit"},
		{"pdf without text", fixture("scanned.pdf"), nil, loader.ErrEmpty, "scanned images"},
		{"cyclic page tree", fixture("cyclickids.pdf"), nil, loader.ErrMalformedPDF, "cyclic"},
		{"cyclic parent chain", fixture("cyclicparent.pdf"), nil, loader.ErrMalformedPDF, "cyclic"},
		// Each of these hangs, overflows the stack or exhausts memory in an
		// unguarded pdf library, taking the whole process down.
		{"xref /Prev loop", fixture("prevloop.pdf"), nil, loader.ErrMalformedPDF, "/Prev chain loops"},
		{"huge object number", fixture("hugexref.pdf"), nil, loader.ErrMalformedPDF, "4000000000"},
		{"huge xref stream size", fixture("hugesize.pdf"), nil, loader.ErrMalformedPDF, "/Size 99999999999"},
		// Found by FuzzLoadPDF: our lexer refuses the dictionary (an array
		// closed by ">>"), the library's reads it and sized its table from
		// /Size, which took all memory and killed the process.
		{"huge xref stream size in a garbled dictionary", file("garbled.pdf", garbledXrefPDF), nil, loader.ErrMalformedPDF, "/Size 99999999999"},
		{"object stream inside itself", fixture("objstmcycle.pdf"), nil, loader.ErrMalformedPDF, "inside itself"},
		{"huge predictor rows", fixture("hugecolumns.pdf"), nil, loader.ErrMalformedPDF, "/Columns 100000000000"},
		{"pdf too large", fixture("prose.pdf"), []loader.Option{loader.WithMaxBytes(1000)}, loader.ErrTooLarge, "over --max-file-size 1000 bytes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.path(t)
			doc, err := loader.New(tc.opts...).Load(context.Background(), path)
			if err == nil {
				t.Fatalf("Load = %+v, want error %v", doc, tc.want)
			}
			var fe *loader.FileError
			if !errors.As(err, &fe) || fe.Path != path {
				t.Fatalf("error %v (%T) is not a *FileError for %s", err, err, path)
			}
			if !errors.Is(err, tc.want) {
				t.Errorf("error %q does not wrap %v", err, tc.want)
			}
			if msg := err.Error(); !strings.HasPrefix(msg, "load "+path+": ") || !strings.Contains(msg, tc.wantText) {
				t.Errorf("error %q: want prefix %q and %q in it", msg, "load "+path+": ", tc.wantText)
			}
		})
	}
}

func file(name, data string) func(t *testing.T) string {
	return func(t *testing.T) string { return writeFile(t, name, []byte(data)) }
}

// garbledXrefPDF is FuzzLoadPDF's input 94b702b9514e29be.
const garbledXrefPDF = "%PDF-1.5\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R1 4\nendobj\n2 0bo< j\n< /Type /Pages /Kids [3 0 R] /Count 1 >>\nendobj\n3 0 obj\n<< /Type /Page /Parent 2 0 R /Contents 4 0 R >>\nendobj\n4 0 obj\n<< /Leng[h 38 >>\nstream\nBT /F1 12 Tf 72 700 Td (Hostile) Tj ET\nendstream\nendobj\n5 0 obj\n<< /Type /XRef /Replaced 6 /W [ >> 2] /Root 1 0 R /mength 42 /Size 99999999999 >>\nstream\n\x00\x00\x00\x00\x00\xff\xff\x01\x00\x00\x00\x09\x00\x00\x01\x00\x00\x00:\x00\x00\x01\x00\x00\x00s\x00\x00\x01\x00\x00\x00\xb2\x00\x00\x01\x00\x00\x01\n\x00\x00\nendstream\nendobj\nstartxref\n266\n%%EOF\n"

func fixture(name string) func(t *testing.T) string {
	return func(t *testing.T) string { return filepath.Join(pdfDir, name) }
}

func TestLoadCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, name := range []string{"prose.pdf", "layout.txt"} {
		_, err := loader.New().Load(ctx, filepath.Join(pdfDir, name))
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: Load with canceled ctx = %v, want context.Canceled", name, err)
		}
	}
}

func TestRepairIsTheDefault(t *testing.T) {
	path := writeFile(t, "mixed.md", []byte("# Caf\xE9\n"))
	doc, err := loader.New(loader.WithInvalidUTF8(loader.Repair)).Load(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	def, err := loader.New().Load(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if doc.Text != "# Caf\uFFFD\n" || doc.Title != "Caf\uFFFD" || def.Text != doc.Text {
		t.Errorf("repaired text %q title %q, default %q", doc.Text, doc.Title, def.Text)
	}
	if !utf8.ValidString(doc.Text) {
		t.Error("repaired text is not valid UTF-8")
	}
}

func TestSupported(t *testing.T) {
	for path, want := range map[string]bool{
		"a.txt": true, "dir/b.TEXT": true, "c.md": true, "d.Markdown": true, "e.PDF": true,
		"f.xlsx": false, "g": false, "h.tar.gz": false, ".md/x": false, "md": false,
	} {
		if got := loader.Supported(path); got != want {
			t.Errorf("Supported(%q) = %v, want %v", path, got, want)
		}
	}
}

func TestNewDocument(t *testing.T) {
	a := loader.NewDocument("eval://q1", "txt", "Q1", "The same passage.")
	b := loader.NewDocument("eval://q2", "md", "Q2", "The same passage.")
	c := loader.NewDocument("eval://q1", "txt", "Q1", "A different passage.")
	sum := sha256.Sum256([]byte("The same passage."))
	if a.Hash != hex.EncodeToString(sum[:]) || a.ID != a.Hash[:32] || len(a.ID) != 32 {
		t.Errorf("ID %q Hash %q do not match sha256 of the text", a.ID, a.Hash)
	}
	if a.ID != b.ID || a.ID == c.ID {
		t.Errorf("IDs %s %s %s: want equal for equal text, different otherwise", a.ID, b.ID, c.ID)
	}
	if a.Path != "eval://q1" || a.Format != "txt" || a.Title != "Q1" || a.Text != "The same passage." || a.Size != 17 {
		t.Errorf("fields not kept: %+v", a)
	}
}

func TestFileError(t *testing.T) {
	err := error(&loader.FileError{Path: "docs/a.pdf", Err: loader.ErrEncryptedPDF})
	if err.Error() != "load docs/a.pdf: encrypted PDF" || !errors.Is(err, loader.ErrEncryptedPDF) || errors.Is(err, loader.ErrMalformedPDF) {
		t.Errorf("FileError = %q, Is(Encrypted) = %v", err, errors.Is(err, loader.ErrEncryptedPDF))
	}
}

func TestSizeText(t *testing.T) {
	for n, want := range map[int64]string{
		120: "120 bytes", 1 << 10: "1 KiB", 64 << 20: "64 MiB", 80 << 20: "80 MiB",
		200_000_000: "200 MB", 31458369: "30.0 MiB", 3 << 29: "1.5 GiB", 1 << 40: "1 TiB",
	} {
		if got := loader.SizeText(n); got != want {
			t.Errorf("SizeText(%d) = %q, want %q", n, got, want)
		}
	}
}
