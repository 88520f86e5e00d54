// Command genfixtures writes the loader's PDF test fixtures to testdata/pdf.
//
// The generated files come from package pdfgen and are reproducible. With
// -external it also makes fixtures with Debian tools when they are installed:
// encrypted copies (qpdf), a word-processor PDF (LibreOffice) and poppler's
// pdftotext reading of it, used as reference lines. Tests only read the
// committed files; they never run these tools.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/docgraph/docgraph/loader/internal/pdfgen"
)

func main() {
	out := flag.String("out", "../testdata/pdf", "directory to write fixtures to")
	external := flag.Bool("external", false, "also make fixtures with qpdf, LibreOffice and pdftotext")
	flag.Parse()
	if err := os.MkdirAll(*out, 0o755); err != nil {
		log.Fatal(err)
	}
	files := pdfgen.Fixtures()
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := os.WriteFile(filepath.Join(*out, name), files[name], 0o644); err != nil {
			log.Fatal(err)
		}
		fmt.Println("wrote", name)
	}
	if *external {
		if err := makeExternal(*out); err != nil {
			log.Fatal(err)
		}
	}
}

func run(dir, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	if out, err := cmd.Output(); err != nil {
		return fmt.Errorf("%s %s: %w (%s)", name, strings.Join(args, " "), err, out)
	}
	return nil
}

func makeExternal(dir string) error {
	// qpdf: RC4 with a user password, AES-256 (which the pdf library does not
	// implement at all), and AES-128 with an empty user password, which any
	// reader opens without asking.
	for _, c := range []struct{ name, user, owner, bits string }{
		{"encrypted-user.pdf", "reader-pw", "owner-pw", "128"},
		{"encrypted-aes256.pdf", "reader-pw", "owner-pw", "256"},
		{"encrypted-owner.pdf", "", "owner-pw", "128"},
	} {
		args := []string{"--static-id", "--allow-weak-crypto", "--encrypt", c.user, c.owner, c.bits}
		if c.bits == "128" && c.user != "" {
			args = append(args, "--use-aes=n")
		} else if c.bits == "128" {
			args = append(args, "--use-aes=y")
		}
		args = append(args, "--", "prose.pdf", c.name)
		if err := run(dir, "qpdf", args...); err != nil {
			return err
		}
		fmt.Println("wrote", c.name)
	}

	// Object streams and a cross-reference stream (PDF 1.5), as most
	// current producers write them.
	if err := run(dir, "qpdf", "--static-id", "--object-streams=generate", "--", "prose.pdf", "objstreams.pdf"); err != nil {
		return err
	}
	fmt.Println("wrote objstreams.pdf")
	// Linearized ("fast web view"): two cross-reference sections, the first
	// at the start of the file, chained by /Prev.
	if err := run(dir, "qpdf", "--static-id", "--linearize", "--", "prose.pdf", "linearized.pdf"); err != nil {
		return err
	}
	fmt.Println("wrote linearized.pdf")

	// LibreOffice typesets HTML the way a word processor does: embedded
	// subset TrueType fonts, justified lines, real paragraph spacing.
	html, text := officeDoc()
	tmp, err := os.MkdirTemp("", "genfixtures")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := os.WriteFile(filepath.Join(tmp, "office.html"), []byte(html), 0o644); err != nil {
		return err
	}
	if err := run(tmp, "soffice", "--headless", "-env:UserInstallation=file://"+tmp+"/profile",
		"--infilter=HTML (StarWriter)", "--convert-to", "pdf:writer_pdf_Export", "office.html"); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "office.txt"), []byte(text), 0o644); err != nil {
		return err
	}
	if err := keepPDF(tmp, dir, "office"); err != nil {
		return err
	}
	fmt.Println("wrote office.pdf office.txt office.pdftotext.txt")

	// Chromium prints the same HTML with CID fonts (Identity-H) and places
	// every glyph with its own Td: widths come only from the fonts' /W.
	if err := run(tmp, "chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-pdf-header-footer",
		"--user-data-dir="+tmp+"/chromium", "--print-to-pdf="+filepath.Join(tmp, "chrome.pdf"), "file://"+filepath.Join(tmp, "office.html")); err != nil {
		return err
	}
	if err := keepPDF(tmp, dir, "chrome"); err != nil {
		return err
	}
	fmt.Println("wrote chrome.pdf chrome.pdftotext.txt")
	return nil
}

// keepPDF copies name.pdf from tmp to dir and writes poppler's reading of
// it beside it, name.pdftotext.txt, for the tests' reference lines.
func keepPDF(tmp, dir, name string) error {
	data, err := os.ReadFile(filepath.Join(tmp, name+".pdf"))
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, name+".pdf"), data, 0o644); err != nil {
		return err
	}
	return run(dir, "pdftotext", "-enc", "UTF-8", name+".pdf", name+".pdftotext.txt")
}
