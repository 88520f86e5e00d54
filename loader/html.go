package loader

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/net/html/charset"
)

// looksHTML reports whether text starts like an HTML document.
func looksHTML(data []byte) bool {
	head := bytes.ToLower(bytes.TrimSpace(data[:min(len(data), 512)]))
	head = bytes.TrimPrefix(head, bomUTF8)
	return bytes.HasPrefix(head, []byte("<!doctype html")) || bytes.HasPrefix(head, []byte("<html")) ||
		bytes.HasPrefix(head, []byte("<?xml")) && bytes.Contains(head, []byte("<html"))
}

// htmlDecode returns data as UTF-8: by its BOM or declared charset (a
// meta tag or XML declaration), else UTF-8 when valid, else windows-1252
// as browsers do.
func htmlDecode(data []byte) (string, []Warning) {
	enc, name, certain := charset.DetermineEncoding(data, "")
	if !certain {
		if m := xmlDeclEncoding(data); m != "" {
			if e, n := charset.Lookup(m); e != nil {
				enc, name, certain = e, n, true
			}
		}
	}
	if !certain && utf8.Valid(data) || name == "utf-8" {
		s := string(bytes.TrimPrefix(data, bomUTF8))
		if !utf8.ValidString(s) {
			return strings.ToValidUTF8(s, "\uFFFD"), []Warning{{Kind: WarnInvalidUTF8, Count: 1, Message: "invalid UTF-8 in a page declared UTF-8 replaced with U+FFFD"}}
		}
		return s, nil
	}
	out, err := enc.NewDecoder().Bytes(data)
	if err != nil {
		return strings.ToValidUTF8(string(data), "\uFFFD"), []Warning{{Kind: WarnInvalidUTF8, Count: 1, Message: fmt.Sprintf("could not decode as %s: %v; invalid bytes replaced", name, err)}}
	}
	return string(out), nil
}

// xmlDeclEncoding returns the encoding an XHTML file's XML declaration names.
func xmlDeclEncoding(data []byte) string {
	head := data[:min(len(data), 200)]
	if !bytes.HasPrefix(head, []byte("<?xml")) {
		return ""
	}
	end := bytes.Index(head, []byte("?>"))
	if end < 0 {
		return ""
	}
	decl := string(head[:end])
	i := strings.Index(decl, "encoding=")
	if i < 0 {
		return ""
	}
	v := decl[i+len("encoding="):]
	if len(v) < 2 {
		return ""
	}
	q := v[0]
	v = v[1:]
	if j := strings.IndexByte(v, q); j >= 0 {
		return v[:j]
	}
	return ""
}

func (l *Loader) html(data []byte) (*parsed, error) {
	text, warnings := htmlDecode(data)
	if l.utf8 == Reject && len(warnings) > 0 {
		return nil, fmt.Errorf("%w: %s", ErrInvalidUTF8, warnings[0].Message)
	}
	p, err := htmlText(text)
	if err != nil {
		return nil, err
	}
	p.warnings = warnings
	return p, nil
}

// htmlText renders a page's visible text in reading order: blocks end
// lines, list items get a dash, table cells are tab separated and rows end
// lines, <pre> keeps its spacing, and script, style, navigation and the
// page header and footer are dropped. The <title> is the metadata title.
func htmlText(src string) (*parsed, error) {
	doc, err := html.ParseWithOptions(strings.NewReader(src), html.ParseOptionEnableScripting(false))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	w := &htmlWriter{}
	w.walk(doc, 0)
	return &parsed{text: tidy(w.out.String()), title: cleanTitle(w.title), headings: w.headings}, nil
}

type htmlWriter struct {
	out      bytes.Buffer
	title    string
	headings []string
	pre      int
	space    bool // a space is due before the next word
}

var htmlSkip = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Noscript: true, atom.Template: true,
	atom.Nav: true, atom.Header: true, atom.Footer: true, atom.Head: true,
	atom.Svg: true, atom.Math: false, atom.Iframe: true, atom.Object: true,
	atom.Select: true, atom.Button: true, atom.Canvas: true,
}

var htmlBlock = map[atom.Atom]bool{
	atom.P: true, atom.Div: true, atom.Section: true, atom.Article: true, atom.Main: true,
	atom.Aside: true, atom.Blockquote: true, atom.Ul: true, atom.Ol: true, atom.Dl: true,
	atom.Dt: true, atom.Dd: true, atom.Li: true, atom.Table: true, atom.Tr: true,
	atom.Pre: true, atom.H1: true, atom.H2: true, atom.H3: true, atom.H4: true, atom.H5: true,
	atom.H6: true, atom.Hr: true, atom.Figure: true, atom.Figcaption: true, atom.Caption: true,
	atom.Address: true, atom.Details: true, atom.Summary: true, atom.Form: true, atom.Fieldset: true,
	atom.Center: true, atom.Body: true, atom.Tbody: true, atom.Thead: true, atom.Tfoot: true,
}

// maxHTMLDepth bounds the walk; the parser itself caps open elements.
const maxHTMLDepth = 1024

// newline ends the current line unless it is ended already.
func (w *htmlWriter) newline() {
	trimTrailingSpace(&w.out)
	if b := w.out.Bytes(); len(b) > 0 && b[len(b)-1] != '\n' {
		w.out.WriteByte('\n')
	}
	w.space = false
}

// paragraph leaves one blank line before what follows.
func (w *htmlWriter) paragraph() {
	w.newline()
	if b := w.out.Bytes(); len(b) > 1 && b[len(b)-2] != '\n' {
		w.out.WriteByte('\n')
	}
}

// htmlLine are blocks that end a line but not a paragraph.
var htmlLine = map[atom.Atom]bool{atom.Li: true, atom.Tr: true, atom.Dt: true, atom.Dd: true, atom.Br: true, atom.Tbody: true, atom.Thead: true, atom.Tfoot: true}

func (w *htmlWriter) walk(n *html.Node, depth int) {
	if depth > maxHTMLDepth {
		return
	}
	switch n.Type {
	case html.TextNode:
		w.text(n.Data)
		return
	case html.ElementNode:
		if n.DataAtom == atom.Title && w.title == "" {
			w.title = textOf(n)
			return
		}
		if n.DataAtom == atom.Head {
			// Only the title matters in the head.
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				if c.Type == html.ElementNode && c.DataAtom == atom.Title && w.title == "" {
					w.title = textOf(c)
				}
			}
			return
		}
		if htmlSkip[n.DataAtom] && !inContent(n) || hasAttr(n, "hidden") || strings.EqualFold(attrOf(n, "aria-hidden"), "true") {
			return
		}
	case html.DocumentNode:
	default:
		return
	}
	a := n.DataAtom
	start := w.out.Len()
	block := n.Type == html.ElementNode && htmlBlock[a]
	end := w.paragraph
	if htmlLine[a] {
		end = w.newline
	}
	if block {
		end()
	}
	switch a {
	case atom.Br:
		w.newline()
	case atom.Li:
		w.out.WriteString("- ")
	case atom.Td, atom.Th:
		if n.PrevSibling != nil {
			w.out.WriteByte('\t')
			w.space = false
		}
	case atom.Img:
		if alt := strings.TrimSpace(attrOf(n, "alt")); alt != "" {
			w.text(alt)
		}
	case atom.Pre, atom.Textarea:
		w.pre++
		defer func() { w.pre-- }()
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		w.walk(c, depth+1)
	}
	switch a {
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		if h := cleanTitle(string(w.out.Bytes()[start:])); h != "" {
			w.headings = append(w.headings, h)
		}
	}
	if block {
		end()
	}
}

func (w *htmlWriter) text(s string) {
	if w.pre > 0 {
		w.out.WriteString(s)
		return
	}
	if s == "" {
		return
	}
	lead := strings.IndexFunc(s[:1], isHTMLSpace) == 0
	fields := strings.FieldsFunc(s, isHTMLSpace)
	if len(fields) == 0 {
		if w.out.Len() > 0 {
			w.space = true
		}
		return
	}
	if (lead || w.space) && w.out.Len() > 0 {
		last := w.out.Bytes()[w.out.Len()-1]
		if last != '\n' && last != '\t' && last != ' ' {
			w.out.WriteByte(' ')
		}
	}
	w.out.WriteString(strings.Join(fields, " "))
	w.space = isHTMLSpace(rune(s[len(s)-1]))
}

// inContent reports whether a header or footer belongs to an article or
// section (its heading, its byline) rather than to the page's frame.
func inContent(n *html.Node) bool {
	if n.DataAtom != atom.Header && n.DataAtom != atom.Footer {
		return false
	}
	for p := n.Parent; p != nil; p = p.Parent {
		switch p.DataAtom {
		case atom.Article, atom.Main, atom.Section:
			return true
		}
	}
	return false
}

func isHTMLSpace(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\f'
}

func textOf(n *html.Node) string {
	var b strings.Builder
	var f func(*html.Node)
	f = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			f(c)
		}
	}
	f(n)
	return b.String()
}

func attrOf(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func hasAttr(n *html.Node, key string) bool {
	for _, a := range n.Attr {
		if a.Key == key {
			return true
		}
	}
	return false
}
