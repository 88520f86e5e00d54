package loader_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/docgraph/docgraph/loader"
)

// fuzzLoad checks that no input under the given file name makes Load
// panic or hang, and that every result is a document with valid,
// non-empty UTF-8 text and an ID and hash of that text, or a *FileError
// for the file.
func fuzzLoad(f *testing.F, name string, seeds ...[]byte) {
	for _, s := range seeds {
		f.Add(s)
	}
	l := loader.New(loader.WithMaxBytes(1 << 20))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		doc, err := l.Load(context.Background(), path)
		if err != nil {
			var fe *loader.FileError
			if !errors.As(err, &fe) || fe.Path != path {
				t.Fatalf("error %v (%T) is not a *FileError for the file", err, err)
			}
			return
		}
		if !utf8.ValidString(doc.Text) || !utf8.ValidString(doc.Title) {
			t.Fatalf("invalid UTF-8 in text %q or title %q", doc.Text, doc.Title)
		}
		if strings.TrimSpace(doc.Text) == "" {
			t.Fatal("document with no text returned without ErrEmpty")
		}
		if want := loader.NewDocument(path, doc.Format, doc.Title, doc.Text); doc.ID != want.ID || doc.Hash != want.Hash {
			t.Fatalf("ID/Hash %s/%s not derived from the text", doc.ID, doc.Hash)
		}
	})
}

func FuzzLoadDOCX(f *testing.F) {
	fuzzLoad(f, "fuzz.docx",
		docxOf(f, "Title", wpara("Heading1", "Head")+wpara("", "Body")+`<w:tbl><w:tr><w:tc>`+wpara("", "c")+`</w:tc></w:tr></w:tbl>`),
		docxOf(f, "", wpara("", "x"), part{"word/footnotes.xml", `<w:footnotes ` + wns + `>` + wpara("", "n") + `</w:footnotes>`}),
		docxOf(f, "", `<w:p><w:pPr><w:numPr><w:ilvl w:val="1"/><w:numId w:val="1"/></w:numPr></w:pPr><w:r><w:t>i</w:t></w:r></w:p>`,
			part{"word/numbering.xml", `<w:numbering ` + wns + `><w:abstractNum w:abstractNumId="0"><w:lvl w:ilvl="1"><w:start w:val="3"/><w:numFmt w:val="lowerRoman"/><w:lvlText w:val="%1.%2)"/></w:lvl></w:abstractNum><w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num></w:numbering>`},
			part{"word/header1.xml", `<w:hdr ` + wns + `>` + wpara("", "h") + `</w:hdr>`}))
}

func FuzzLoadPPTX(f *testing.F) { fuzzLoad(f, "fuzz.pptx", pptxOf(f)) }

func FuzzLoadODF(f *testing.F) {
	fuzzLoad(f, "fuzz.odt",
		odfOf(f, "application/vnd.oasis.opendocument.text", "T", `<office:text><text:h>H</text:h><text:p>a<text:s text:c="3"/>b<text:note><text:note-body><text:p>n</text:p></text:note-body></text:note></text:p></office:text>`),
		odfOf(f, "application/vnd.oasis.opendocument.presentation", "", `<office:presentation><draw:page><text:p>s</text:p></draw:page></office:presentation>`),
		zipOf(f, part{"mimetype", "application/vnd.oasis.opendocument.text"},
			part{"content.xml", `<office:document-content ` + odfNS + ` xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0"><office:automatic-styles><text:list-style style:name="L1"><text:list-level-style-number text:level="1" style:num-format="i" style:num-suffix="."/><text:list-level-style-number text:level="2" style:num-format="A" text:display-levels="2"/></text:list-style></office:automatic-styles><office:body><office:text><text:list text:style-name="L1"><text:list-item><text:p>a</text:p><text:list><text:list-item text:start-value="4"><text:p>b</text:p></text:list-item></text:list></text:list-item></text:list></office:text></office:body></office:document-content>`},
			part{"styles.xml", `<office:document-styles ` + odfNS + ` xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0"><office:master-styles><style:master-page><style:header><text:p>h</text:p></style:header></style:master-page></office:master-styles></office:document-styles>`}))
}

func FuzzLoadEPUB(f *testing.F) { fuzzLoad(f, "fuzz.epub", epubOf(f, "T"), epubOf(f, "")) }

func FuzzLoadHTML(f *testing.F) {
	fuzzLoad(f, "fuzz.html",
		[]byte(`<!DOCTYPE html><html><head><meta charset="iso-8859-1"><title>T</title></head><body><h1>H</h1><p>a <b>b</b></p><table><tr><td>1</td><td>2</td></tr></table><pre> x
 y</pre></body></html>`),
		[]byte(`<?xml version="1.0" encoding="UTF-8"?><html xmlns="http://www.w3.org/1999/xhtml"><body><p>x</p></body></html>`))
}

func FuzzLoadGzip(f *testing.F) {
	fuzzLoad(f, "fuzz.txt.gz", gzipOf(f, []byte("hello\n")), gzipOf(f, docxOf(f, "T", wpara("", "x"))))
}

func FuzzLoadLaTeX(f *testing.F) {
	fuzzLoad(f, "fuzz.tex",
		[]byte(`\documentclass{article}\newcommand{\x}{ex}\def\y{why}\title{T \x}\begin{document}\section{S}\x{} and \y $a^2$ \input{fuzz} \include{other}\end{document}`),
		[]byte(`\newcommand{\a}{\b\b}\newcommand{\b}{\a}\a \input ../x`))
}

// FuzzLoadUnknownName: a name that says nothing, so the first bytes decide
// whether and how the file is read (Readable, then Load).
func FuzzLoadUnknownName(f *testing.F) {
	fuzzLoad(f, "fuzz.bin",
		docxOf(f, "T", wpara("", "x")),
		gzipOf(f, []byte("# notes\n\ntext\n")),
		[]byte("<!DOCTYPE html><html><body><p>p</p></body></html>"),
		[]byte("%PDF-1.4\n%%EOF\n"),
		odfOf(f, "application/vnd.oasis.opendocument.text-web", "", `<office:text><text:p>w</text:p></office:text>`))
}
