package loader_test

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"fmt"
	"strings"
	"testing"
)

// part is one member of a zip fixture.
type part struct{ name, body string }

// zipOf builds a zip archive; "mimetype" goes first and stored, as ODF and
// EPUB require.
func zipOf(tb testing.TB, parts ...part) []byte {
	tb.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, p := range parts {
		method := zip.Deflate
		if p.name == "mimetype" {
			method = zip.Store
		}
		w, err := zw.CreateHeader(&zip.FileHeader{Name: p.name, Method: method})
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := w.Write([]byte(p.body)); err != nil {
			tb.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

func gzipOf(tb testing.TB, data []byte) []byte {
	tb.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(data); err != nil {
		tb.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

const wns = `xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"`

func wpara(style, text string) string {
	ppr := ""
	if style != "" {
		ppr = `<w:pPr><w:pStyle w:val="` + style + `"/></w:pPr>`
	}
	return `<w:p>` + ppr + `<w:r><w:t xml:space="preserve">` + text + `</w:t></w:r></w:p>`
}

func coreXML(title string) string {
	return `<?xml version="1.0" encoding="UTF-8"?><cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>` + title + `</dc:title><dc:creator>Ann</dc:creator></cp:coreProperties>`
}

// docxOf makes a DOCX with the given body XML, and docProps/core.xml when
// title is not "".
func docxOf(tb testing.TB, title, body string, extra ...part) []byte {
	parts := []part{
		{"[Content_Types].xml", `<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>`},
		{"word/document.xml", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document ` + wns + `><w:body>` + body + `</w:body></w:document>`},
	}
	if title != "" {
		parts = append(parts, part{"docProps/core.xml", coreXML(title)})
	}
	return zipOf(tb, append(parts, extra...)...)
}

const pns = `xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"`

func slideXML(title string, body ...string) string {
	var b strings.Builder
	b.WriteString(`<p:sld ` + pns + `><p:cSld><p:spTree>`)
	b.WriteString(`<p:sp><p:nvSpPr><p:nvPr><p:ph type="title"/></p:nvPr></p:nvSpPr><p:txBody><a:p><a:r><a:t>` + title + `</a:t></a:r></a:p></p:txBody></p:sp>`)
	for _, s := range body {
		b.WriteString(`<p:sp><p:txBody><a:p><a:r><a:t>` + s + `</a:t></a:r></a:p></p:txBody></p:sp>`)
	}
	b.WriteString(`</p:spTree></p:cSld></p:sld>`)
	return b.String()
}

func rels(targets ...string) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">`)
	for i, t := range targets {
		typ := "slide"
		if strings.Contains(t, "notesSlide") {
			typ = "notesSlide"
		}
		fmt.Fprintf(&b, `<Relationship Id="rId%d" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/%s" Target="%s"/>`, i+1, typ, t)
	}
	b.WriteString(`</Relationships>`)
	return b.String()
}

// pptxOf makes a two-slide deck whose presentation order (slide2 first)
// differs from the part numbers, with notes on slide 1.
func pptxOf(tb testing.TB) []byte {
	return zipOf(tb,
		part{"[Content_Types].xml", `<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>`},
		part{"ppt/presentation.xml", `<p:presentation ` + pns + `><p:sldIdLst><p:sldId id="257" r:id="rId2"/><p:sldId id="256" r:id="rId1"/></p:sldIdLst></p:presentation>`},
		part{"ppt/_rels/presentation.xml.rels", rels("slides/slide1.xml", "slides/slide2.xml")},
		part{"ppt/slides/slide1.xml", slideXML("Second Slide", "Body of slide one")},
		part{"ppt/slides/_rels/slide1.xml.rels", rels("../notesSlides/notesSlide1.xml")},
		part{"ppt/notesSlides/notesSlide1.xml", `<p:notes ` + pns + `><p:cSld><p:spTree><p:sp><p:txBody><a:p><a:r><a:t>Speaker notes here</a:t></a:r></a:p></p:txBody></p:sp></p:spTree></p:cSld></p:notes>`},
		part{"ppt/slides/slide2.xml", slideXML("Quarterly Results", "Revenue grew")},
		part{"docProps/core.xml", coreXML("")},
	)
}

const odfNS = `xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" xmlns:presentation="urn:oasis:names:tc:opendocument:xmlns:presentation:1.0" xmlns:dc="http://purl.org/dc/elements/1.1/"`

func odfOf(tb testing.TB, mime, title, body string) []byte {
	parts := []part{
		{"mimetype", mime},
		{"META-INF/manifest.xml", `<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"><manifest:file-entry manifest:full-path="/" manifest:media-type="` + mime + `"/></manifest:manifest>`},
		{"content.xml", `<?xml version="1.0" encoding="UTF-8"?><office:document-content ` + odfNS + `><office:automatic-styles><style>hidden</style></office:automatic-styles><office:body>` + body + `</office:body></office:document-content>`},
	}
	if title != "" {
		parts = append(parts, part{"meta.xml", `<office:document-meta ` + odfNS + `><office:meta><dc:title>` + title + `</dc:title></office:meta></office:document-meta>`})
	}
	return zipOf(tb, parts...)
}

func epubOf(tb testing.TB, title string) []byte {
	chapter := func(h, p string) string {
		return `<?xml version="1.0" encoding="UTF-8"?><!DOCTYPE html><html xmlns="http://www.w3.org/1999/xhtml"><head><title>` + h + `</title></head><body><h1>` + h + `</h1><p>` + p + `</p></body></html>`
	}
	meta := ""
	if title != "" {
		meta = `<dc:title>` + title + `</dc:title>`
	}
	return zipOf(tb,
		part{"mimetype", "application/epub+zip"},
		part{"META-INF/container.xml", `<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>`},
		part{"OEBPS/content.opf", `<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/">` + meta + `</metadata><manifest><item id="toc" href="toc.xhtml" media-type="application/xhtml+xml"/><item id="c1" href="text/ch%201.xhtml" media-type="application/xhtml+xml"/><item id="c2" href="text/ch2.xhtml" media-type="application/xhtml+xml"/><item id="css" href="style.css" media-type="text/css"/></manifest><spine><itemref idref="toc"/><itemref idref="c2"/><itemref idref="c1"/></spine></package>`},
		part{"OEBPS/toc.xhtml", chapter("Contents", "Chapter list")},
		part{"OEBPS/text/ch 1.xhtml", chapter("The Second Chapter", "Written second.")},
		part{"OEBPS/text/ch2.xhtml", chapter("The Harbour Town", "Written first.")},
		part{"OEBPS/style.css", "body{}"},
	)
}
