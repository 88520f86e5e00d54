package loader_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/docgraph/docgraph/loader"
)

// inOrder reports the first of want that text lacks, or is out of order.
func inOrder(text string, want []string) string {
	at := 0
	for _, w := range want {
		i := strings.Index(text[at:], w)
		if i < 0 {
			return w
		}
		at += i + len(w)
	}
	return ""
}

func TestLoadFormats(t *testing.T) {
	latin1 := []byte("<html><head><meta charset=\"iso-8859-1\"><title>Caf\xe9 guide</title></head><body><p>Cr\xe8me br\xfbl\xe9e</p></body></html>")
	tests := []struct {
		name, file string
		data       func(t *testing.T) []byte
		format     string
		title      string
		want       []string // in this order
		not        []string
	}{
		{
			name: "html", file: "page.html", format: "html", title: "Harbour Guide",
			data: func(*testing.T) []byte {
				return []byte(`<!DOCTYPE html><html><head><title>Harbour Guide</title><style>p{color:red}</style><script>var secret=1</script></head>
<body><header>Site banner</header><nav><a href="/">Home</a></nav>
<h1>Contents</h1><p>The  harbour
opens at <b>six</b>.</p><ul><li>Boats</li><li>Nets</li></ul>
<table><tr><th>Day</th><th>Hours</th></tr><tr><td>Monday</td><td>6-18</td></tr></table>
<pre>line one
    indented two</pre><article><header><h2>Article Heading</h2></header><p>Story.</p></article><footer>Copyright footer</footer></body></html>`)
			},
			want: []string{"The harbour opens at six.", "- Boats\n- Nets", "Day\tHours\nMonday\t6-18", "line one\n    indented two", "Article Heading\n\nStory."},
			not:  []string{"secret", "color", "Site banner", "Home", "Copyright footer"},
		},
		{
			name: "html generic title falls to heading", file: "x.htm", format: "html", title: "Tide Tables",
			data: func(*testing.T) []byte {
				return []byte(`<html><head><title>Table of Contents</title></head><body><h1>Overview</h1><h2>Tide Tables</h2><p>High water.</p></body></html>`)
			},
			want: []string{"Overview", "Tide Tables", "High water."},
		},
		{
			name: "html declared latin-1", file: "old.html", format: "html", title: "Café guide",
			data: func(*testing.T) []byte { return latin1 },
			want: []string{"Crème brûlée"},
		},
		{
			name: "xhtml with xml declaration", file: "a.xhtml", format: "html", title: "Ünïcode",
			data: func(*testing.T) []byte {
				return []byte(`<?xml version="1.0" encoding="UTF-8"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>Ünïcode</title></head><body><p>Text</p></body></html>`)
			},
			want: []string{"Text"},
		},
		{
			name: "docx", file: "report.docx", format: "docx", title: "Annual Report",
			data: func(t *testing.T) []byte {
				body := wpara("Heading1", "Summary of Work") + wpara("", "First paragraph.") +
					`<w:p><w:r><w:t>Field </w:t></w:r><w:r><w:instrText>PAGE \* MERGEFORMAT</w:instrText></w:r><w:r><w:delText>deleted words</w:delText></w:r><w:r><w:tab/><w:t>after tab</w:t></w:r></w:p>` +
					`<w:tbl><w:tr><w:tc>` + wpara("", "Cell A") + `</w:tc><w:tc>` + wpara("", "Cell B") + `</w:tc></w:tr></w:tbl>`
				return docxOf(t, "Annual Report", body,
					part{"word/footnotes.xml", `<w:footnotes ` + wns + `><w:footnote>` + wpara("", "A footnote.") + `</w:footnote></w:footnotes>`},
					part{"word/comments.xml", `<w:comments ` + wns + `><w:comment>` + wpara("", "A reviewer comment.") + `</w:comment></w:comments>`})
			},
			want: []string{"Summary of Work", "First paragraph.", "Field \tafter tab", "Cell A\tCell B\n", "A footnote.", "A reviewer comment."},
			not:  []string{"MERGEFORMAT", "deleted words"},
		},
		{
			name: "docx lists, headers and footers", file: "manual.docx", format: "docx", title: "Pump Manual",
			data: func(t *testing.T) []byte {
				item := func(num, lvl int, text string) string {
					return fmt.Sprintf(`<w:p><w:pPr><w:numPr><w:ilvl w:val="%d"/><w:numId w:val="%d"/></w:numPr><w:tabs><w:tab w:val="left" w:pos="0"/></w:tabs></w:pPr><w:r><w:t>%s</w:t></w:r></w:p>`, lvl, num, text)
				}
				lvl := func(i int, start, format, text string) string {
					return fmt.Sprintf(`<w:lvl w:ilvl="%d"><w:start w:val="%s"/><w:numFmt w:val="%s"/><w:lvlText w:val="%s"/></w:lvl>`, i, start, format, text)
				}
				numbering := `<w:numbering ` + wns + `><w:abstractNum w:abstractNumId="0">` +
					lvl(0, "1", "decimal", "%1.") + lvl(1, "1", "lowerLetter", "%2)") + lvl(2, "1", "lowerRoman", "%1.%2.%3.") +
					`</w:abstractNum><w:abstractNum w:abstractNumId="1">` + lvl(0, "1", "bullet", "\uf0b7") + lvl(1, "1", "upperRoman", "%2") +
					`</w:abstractNum><w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num><w:num w:numId="2"><w:abstractNumId w:val="1"/></w:num>` +
					`<w:num w:numId="3"><w:abstractNumId w:val="0"/><w:lvlOverride w:ilvl="0"><w:startOverride w:val="7"/></w:lvlOverride></w:num><w:num w:numId="4"><w:abstractNumId w:val="0"/></w:num></w:numbering>`
				styles := `<w:styles ` + wns + `><w:style w:type="paragraph" w:styleId="ListNumber"><w:pPr><w:numPr><w:numId w:val="4"/></w:numPr></w:pPr></w:style></w:styles>`
				body := item(1, 0, "Close the valve.") + item(1, 1, "Check the gasket.") + item(1, 2, "Grease it.") + item(1, 2, "Wipe it.") +
					item(1, 1, "Tighten the bolts.") + item(1, 0, "Open the vent.") + item(2, 0, "Seal kit") + item(2, 1, "Fourth") +
					item(3, 0, "Seventh step") + item(0, 0, "Not numbered") +
					wpara("ListNumber", "Styled one") + wpara("ListNumber", "Styled two") +
					`<w:p><w:pPr><w:pStyle w:val="ListNumber"/><w:numPr><w:ilvl w:val="0"/><w:numId w:val="0"/></w:numPr></w:pPr><w:r><w:t>Style numbering off</w:t></w:r></w:p>` +
					`<w:p><w:pPr><w:numPr><w:ilvl w:val="0"/><w:numId w:val="1"/></w:numPr><w:pPrChange><w:pPr><w:numPr><w:ilvl w:val="0"/><w:numId w:val="1"/></w:numPr></w:pPr></w:pPrChange></w:pPr><w:r><w:t>Revised item.</w:t></w:r></w:p>`
				header := `<w:hdr ` + wns + `>` + wpara("Header", "Quayside handbook") + `</w:hdr>`
				return docxOf(t, "Pump Manual", body,
					part{"word/numbering.xml", numbering},
					part{"word/styles.xml", styles},
					part{"word/header1.xml", header},
					part{"word/header2.xml", header}, // first-page header with the same text: once
					part{"word/header10.xml", `<w:hdr ` + wns + `>` + wpara("", "Even pages") + `</w:hdr>`},
					part{"word/footer1.xml", `<w:ftr ` + wns + `>` + wpara("Footer", "Revision 17") + `</w:ftr>`},
					part{"word/endnotes.xml", `<w:endnotes ` + wns + `><w:endnote>` + wpara("", "An endnote.") + `</w:endnote></w:endnotes>`})
			},
			want: []string{"1. Close the valve.\na) Check the gasket.\n1.a.i. Grease it.\n1.a.ii. Wipe it.\nb) Tighten the bolts.\n2. Open the vent.\n• Seal kit\nI Fourth\n7. Seventh step\nNot numbered\n1. Styled one\n2. Styled two\nStyle numbering off\n3. Revised item.\n\nQuayside handbook\n\nEven pages\n\nRevision 17\n\nAn endnote."},
			not:  []string{"\t", "Quayside handbook\n\nQuayside"},
		},
		{
			name: "docx without metadata title", file: "notes.docx", format: "docx", title: "Fishing Rights",
			data: func(t *testing.T) []byte {
				return docxOf(t, "", wpara("TOCHeading", "Table of Contents")+wpara("Heading1", "Introduction")+wpara("Heading1", "Fishing Rights")+wpara("", "Text."))
			},
			want: []string{"Fishing Rights", "Text."},
		},
		{
			name: "pptx in presentation order with notes", file: "deck.pptx", format: "pptx", title: "Quarterly Results",
			data: func(t *testing.T) []byte { return pptxOf(t) },
			want: []string{"Quarterly Results", "Revenue grew", "Second Slide", "Body of slide one", "Speaker notes here"},
		},
		{
			name: "odt", file: "letter.odt", format: "odt", title: "Letter to the Council",
			data: func(t *testing.T) []byte {
				return odfOf(t, "application/vnd.oasis.opendocument.text", "Letter to the Council", `<office:text><text:h text:outline-level="1">Contents</text:h><text:p>Dear<text:s text:c="2"/>council<text:note><text:note-citation>1</text:note-citation><text:note-body><text:p>See minutes.</text:p></text:note-body></text:note>, hello.</text:p><text:list><text:list-item><text:p>Item one</text:p></text:list-item></text:list><table:table><table:table-row><table:table-cell><text:p>R1</text:p></table:table-cell><table:table-cell><text:p>R2</text:p></table:table-cell></table:table-row></table:table></office:text>`)
			},
			want: []string{"Dear  council, hello.", "- Item one", "R1\tR2", "See minutes."},
			not:  []string{"hidden"},
		},
		{
			name: "odt numbered lists and page headers", file: "steps.odt", format: "odt", title: "Steps",
			data: func(t *testing.T) []byte {
				item := func(text string, start string) string {
					if start != "" {
						start = ` text:start-value="` + start + `"`
					}
					return `<text:list-item` + start + `><text:p>` + text + `</text:p></text:list-item>`
				}
				content := `<?xml version="1.0" encoding="UTF-8"?><office:document-content ` + odfNS + ` xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0"><office:automatic-styles>` +
					`<text:list-style style:name="L1"><text:list-level-style-number text:level="1" style:num-format="1" style:num-suffix="."/><text:list-level-style-number text:level="2" style:num-format="a" style:num-suffix=")"/><text:list-level-style-number text:level="3" style:num-format="I" text:display-levels="3"/></text:list-style>` +
					`</office:automatic-styles><office:body><office:text><text:h text:outline-level="1">Steps</text:h>` +
					`<text:list text:style-name="L1"><text:list-item><text:p>One</text:p><text:list>` + item("Sub a", "") + `<text:list-item><text:p>Sub b</text:p><text:list>` + item("Deep", "") + `</text:list></text:list-item></text:list></text:list-item>` + item("Two", "") + `</text:list>` +
					`<text:p>Between.</text:p>` +
					`<text:list text:style-name="L1" text:continue-numbering="true">` + item("Three", "") + `</text:list>` +
					`<text:list text:style-name="L1">` + item("Restart", "") + item("Jump", "7") + `</text:list>` +
					`<text:list text:style-name="LB">` + item("Bullet", "") + `</text:list>` +
					`</office:text></office:body></office:document-content>`
				styles := `<office:document-styles ` + odfNS + ` xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0"><office:styles><text:list-style style:name="LB"><text:list-level-style-bullet text:level="1" text:bullet-char="•"/></text:list-style></office:styles>` +
					`<office:master-styles><style:master-page style:name="Standard"><style:header><text:p>Harbour office</text:p></style:header><style:footer><text:p>Page <text:page-number>1</text:page-number></text:p></style:footer></style:master-page>` +
					`<style:master-page style:name="Landscape"><style:header><text:p>Harbour office</text:p></style:header></style:master-page></office:master-styles></office:document-styles>`
				return zipOf(t, part{"mimetype", "application/vnd.oasis.opendocument.text"}, part{"content.xml", content}, part{"styles.xml", styles})
			},
			want: []string{"Steps\n1. One\na) Sub a\nb) Sub b\n1.b.I Deep\n2. Two\nBetween.\n3. Three\n1. Restart\n7. Jump\n- Bullet\n\nHarbour office\nPage 1"},
			not:  []string{"Harbour office\nHarbour office"},
		},
		{
			name: "odp slides and notes", file: "talk.odp", format: "odp", title: "Coral Reefs",
			data: func(t *testing.T) []byte {
				return odfOf(t, "application/vnd.oasis.opendocument.presentation", "", `<office:presentation><draw:page draw:name="p1"><draw:frame><draw:text-box><text:h>Coral Reefs</text:h><text:p>Reefs are alive.</text:p></draw:text-box></draw:frame><presentation:notes><draw:frame><draw:text-box><text:p>Mention bleaching.</text:p></draw:text-box></draw:frame></presentation:notes></draw:page></office:presentation>`)
			},
			want: []string{"Coral Reefs", "Reefs are alive.", "Mention bleaching."},
		},
		{
			name: "epub spine order", file: "book.epub", format: "epub", title: "Sea Stories",
			data: func(t *testing.T) []byte { return epubOf(t, "Sea Stories") },
			want: []string{"Chapter list", "The Harbour Town", "Written first.", "The Second Chapter", "Written second."},
		},
		{
			name: "epub title from first real heading", file: "book.epub", format: "epub", title: "The Harbour Town",
			data: func(t *testing.T) []byte { return epubOf(t, "") },
			want: []string{"Written first."},
		},
		{
			name: "rst", file: "guide.rst", format: "rst", title: "Harbour Manual",
			data: func(*testing.T) []byte {
				return []byte(`.. comment that is dropped
   and its continuation

==============
Harbour Manual
==============

.. contents:: Table of Contents

Read the :ref:` + "`mooring rules <mooring>`" + ` and **obey** them, see ` + "`the site <https://x.org>`_" + `.

Mooring
-------

Use ` + "``knot()``" + ` like this::

    tie(knot)

.. code-block:: python
   :linenos:

   print("hi")

.. _mooring:

.. note:: Boats first.
`)
			},
			want: []string{"Harbour Manual", "Read the mooring rules and obey them, see the site.", "Mooring", "Use knot() like this:", "    tie(knot)", `print("hi")`, "Boats first."},
			not:  []string{"comment that", "continuation", "contents::", ":ref:", "_mooring", "=====", "-----"},
		},
		{
			name: "latex", file: "paper.tex", format: "tex", title: "On Tides",
			data: func(*testing.T) []byte {
				return []byte(`\documentclass{article}
\usepackage{amsmath} % packages
\title{On Tides}
\author{A. Author}
\begin{document}
\maketitle
\section{Introduction}
Tides rise \emph{twice} a day\footnote{Mostly.}, see \cite{moon}. Cost is 5\%.
% a comment line
Energy is $E = mc^2$ and
\begin{equation}
  h(t) = A \cos(\omega t)
\end{equation}
\begin{itemize}
\item First \textbf{point}
\end{itemize}
\begin{verbatim}
x = {raw}
\end{verbatim}
\end{document}
`)
			},
			want: []string{"Introduction", "Tides rise twice a day (Mostly.), see . Cost is 5%.", "$E = mc^2$", `h(t) = A \cos(\omega t)`, "- First point", "x = {raw}"},
			not:  []string{"documentclass", "amsmath", "a comment", "A. Author", "moon", `\section`},
		},
		{
			name: "gzipped text", file: "changelog.Debian.gz", format: "txt", title: "001 changelog.Debian",
			data: func(t *testing.T) []byte { return gzipOf(t, []byte("pkg (1.0) unstable; urgency=low\n")) },
			want: []string{"pkg (1.0) unstable"},
		},
		{
			name: "gzipped html", file: "manual.html.gz", format: "html", title: "Gz Manual",
			data: func(t *testing.T) []byte {
				return gzipOf(t, []byte(`<html><head><title>Gz Manual</title></head><body><p>Inside.</p></body></html>`))
			},
			want: []string{"Inside."},
		},
		{
			name: "a .txt that is gzip", file: "notes.txt", format: "txt", title: "notes",
			data: func(t *testing.T) []byte { return gzipOf(t, []byte("really compressed\n")) },
			want: []string{"really compressed"},
		},
		{
			name: "markdown skips a generic first heading", file: "README.md", format: "md", title: "axios",
			data: func(*testing.T) []byte {
				return []byte("# Table of Contents\n\n- a\n\n# axios\n\nPromise based client.\n")
			},
			want: []string{"Promise based client."},
		},
		{
			name: "markdown title without badges and code marks", file: "README.md", format: "md", title: "cssesc for x",
			data: func(*testing.T) []byte {
				return []byte("# cssesc [![Build status](https://travis-ci.org/x.svg)](https://travis-ci.org/x) for [`x`](http://x)\n\nText.\n")
			},
			want: []string{"Text."},
		},
		{
			name: "generic name takes its folder", file: "README.md", format: "md", title: "",
			data: func(*testing.T) []byte { return []byte("# Contents\n\nJust text.\n") },
			want: []string{"Just text."},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, tt.file, tt.data(t))
			doc, err := loader.New().Load(context.Background(), path)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if doc.Format != tt.format {
				t.Errorf("Format = %q, want %q", doc.Format, tt.format)
			}
			wantTitle := tt.title
			if wantTitle == "" { // the temp folder's name, then the file's
				wantTitle = strings.TrimSuffix(strings.TrimSuffix(path, "/"+tt.file), "")
				wantTitle = wantTitle[strings.LastIndex(wantTitle, "/")+1:] + " README"
			}
			if doc.Title != wantTitle {
				t.Errorf("Title = %q, want %q", doc.Title, wantTitle)
			}
			if miss := inOrder(doc.Text, tt.want); miss != "" {
				t.Errorf("text lacks %q (or has it out of order):\n%s", miss, doc.Text)
			}
			for _, n := range tt.not {
				if strings.Contains(doc.Text, n) {
					t.Errorf("text has %q:\n%s", n, doc.Text)
				}
			}
		})
	}
}

func TestLoadBadDocuments(t *testing.T) {
	deep := `<w:document ` + wns + `><w:body>` + strings.Repeat("<w:p>", 2000) + strings.Repeat("</w:p>", 2000) + `</w:body></w:document>`
	lol := `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]><w:document ` + wns + `><w:body><w:p><w:r><w:t>&lol2;</w:t></w:r></w:p></w:body></w:document>`
	good := docxOf(t, "T", wpara("", "words"))
	cfb := append([]byte{0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1}, make([]byte, 500)...)
	encrypted := append(append([]byte{}, cfb...), []byte("E\x00n\x00c\x00r\x00y\x00p\x00t\x00i\x00o\x00n\x00I\x00n\x00f\x00o\x00")...)
	bomb := zipOf(t, part{"[Content_Types].xml", "<Types/>"}, part{"word/document.xml", `<w:document ` + wns + `><w:body><w:p><w:r><w:t>` + strings.Repeat("a", 4<<20) + `</w:t></w:r></w:p></w:body></w:document>`})
	tests := []struct {
		name, file string
		data       []byte
		opts       []loader.Option
		is         error
		msg        string
	}{
		{"broken zip", "cut.docx", good[:len(good)/2], nil, loader.ErrMalformed, "broken zip archive"},
		{"docx that is no zip", "fake.docx", []byte("just some text, not a zip"), nil, loader.ErrMalformed, "not a zip archive, as a .docx file must be"},
		{"encrypted office file", "secret.docx", encrypted, nil, loader.ErrEncrypted, "password-protected Office file"},
		{"legacy doc", "old.docx", cfb, nil, loader.ErrUnsupported, "legacy binary Office file"},
		{"entity expansion", "lol.docx", zipOf(t, part{"word/document.xml", lol}), nil, loader.ErrMalformed, "declares XML entities"},
		{"huge nesting", "deep.docx", zipOf(t, part{"word/document.xml", deep}), nil, loader.ErrMalformed, "nests elements more than 512 deep"},
		{"zip bomb", "bomb.docx", bomb, []loader.Option{loader.WithMaxBytes(1 << 20)}, loader.ErrTooLarge, "inflate to more than --max-file-size 1 MiB"},
		{"missing part", "nopart.pptx", zipOf(t, part{"ppt/presentation.xml", `<p:presentation ` + pns + `><p:sldIdLst><p:sldId r:id="rId1"/></p:sldIdLst></p:presentation>`}, part{"ppt/_rels/presentation.xml.rels", rels("slides/slide1.xml")}), nil, loader.ErrMalformed, "missing part ppt/slides/slide1.xml"},
		{"epub without container", "x.epub", zipOf(t, part{"mimetype", "application/epub+zip"}), nil, loader.ErrMalformed, "missing part META-INF/container.xml"},
		{"bad xml", "bad.odt", odfOf(t, "application/vnd.oasis.opendocument.text", "", "<text:p>unclosed"), nil, loader.ErrMalformed, "part content.xml: XML line 1"},
		{"zip of something else", "x.odt", zipOf(t, part{"a.txt", "hi"}), nil, loader.ErrMalformed, "zip archive without the parts of a .odt file"},
		{"gzip bomb", "big.txt.gz", gzipOf(t, bytes.Repeat([]byte("a"), 3<<20)), []loader.Option{loader.WithMaxBytes(1 << 20)}, loader.ErrTooLarge, "decompresses to more than --max-file-size 1 MiB"},
		{"truncated gzip", "cut.txt.gz", gzipOf(t, []byte("hello world, some text"))[:20], nil, loader.ErrMalformed, "gzip stream cut short"},
		{"gzip in gzip", "two.txt.gz", gzipOf(t, gzipOf(t, []byte("x"))), nil, loader.ErrMalformed, "gzip inside gzip"},
		{"invalid utf-8 rst rejected", "bad.rst", []byte("Title\n=====\n\nbad \xff byte\n"), []loader.Option{loader.WithInvalidUTF8(loader.Reject)}, loader.ErrInvalidUTF8, "invalid UTF-8"},
		{"encrypted odf", "locked.odt", zipOf(t, part{"mimetype", "application/vnd.oasis.opendocument.text"}, part{"META-INF/manifest.xml", `<manifest><file-entry><encryption-data/></file-entry></manifest>`}, part{"content.xml", "xx"}), nil, loader.ErrEncrypted, "password-protected OpenDocument file"},
		{"empty docx", "empty.docx", docxOf(t, "T", ""), nil, loader.ErrEmpty, "no text in the docx file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, tt.file, tt.data)
			_, err := loader.New(tt.opts...).Load(context.Background(), path)
			var fe *loader.FileError
			if !errors.As(err, &fe) || fe.Path != path {
				t.Fatalf("err = %v, want a FileError for %s", err, path)
			}
			if !errors.Is(err, tt.is) {
				t.Errorf("err = %v, want errors.Is %v", err, tt.is)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("err = %q, want it to say %q", err, tt.msg)
			}
		})
	}
}

func TestGenericTitle(t *testing.T) {
	for s, want := range map[string]bool{
		"Table of Contents": true, "1. Introduction": true, "README": true, "Inhaltsverzeichnis": true,
		"Sommaire": true, "目录": true, "Contents:": true, "Overview": true,
		"axios": false, "Express": false, "Introduction to Tides": false,
	} {
		if got := loader.GenericTitle(s); got != want {
			t.Errorf("GenericTitle(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestSupportedFormats(t *testing.T) {
	for p, want := range map[string]bool{
		"a.html": true, "a.DOCX": true, "a.pptx": true, "a.odt": true, "a.odp": true, "a.epub": true,
		"a.rst": true, "a.tex": true, "a.txt.gz": true, "a.pdf.gz": true, "changelog.Debian.gz": true,
		"NEWS.gz": true, "a.tar.gz": false, "a.xlsx": false, "a.gz.gz": false, "a.doc": false,
	} {
		if got := loader.Supported(p); got != want {
			t.Errorf("Supported(%q) = %v, want %v", p, got, want)
		}
	}
}
