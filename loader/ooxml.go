package loader

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"path"
	"sort"
	"strconv"
	"strings"
)

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// wordRules render WordprocessingML: text is in w:t only (so field codes
// and deleted revisions drop out), paragraphs end lines, table cells are
// separated by tabs and rows end lines.
var wordRules = &xmlRules{
	block: set("p", "tr"),
	text:  set("t"),
	tab:   set("tab", "ptab"),
	brk:   set("br", "cr"),
	cell:  set("tc"),
	// A revision's record of the paragraph's former properties would
	// number the paragraph twice; w:tabs holds tab stops, not tabs.
	skip: set("pPrChange", "tabs"),
	heading: func(se xml.StartElement) bool {
		if se.Name.Local != "pStyle" {
			return false
		}
		v := strings.ToLower(attr(se, "val"))
		return v == "title" || strings.HasPrefix(v, "heading")
	},
}

func attr(se xml.StartElement, local string) string {
	for _, a := range se.Attr {
		if a.Name.Local == local {
			return a.Value
		}
	}
	return ""
}

// docx reads the body, then the page headers and footers, then
// footnotes, endnotes and comments, each part after the one before; the
// title comes from docProps/core.xml. List paragraphs get the labels
// numbering.xml defines ("1.", "a)", "•").
//
// Each header and footer part is read once, however many pages it is
// printed on: its words (a document's name, version or owner) should be
// findable, but repeating them per page would weigh them by page count in
// chunks and the graph, and a DOCX has no pages to count anyway. Parts
// with the same text (a first-page header like the default one) are read
// once too.
func (l *Loader) docx(ctx context.Context, data []byte) (*parsed, error) {
	a, err := l.openArchive(data)
	if err != nil {
		return nil, err
	}
	if a.has("EncryptedPackage") {
		return nil, fmt.Errorf("%w: password-protected Office file; docgraph reads no passwords: save a copy without one to read it", ErrEncrypted)
	}
	rules := *wordRules
	nb, err := a.optional("word/numbering.xml")
	if err != nil {
		return nil, err
	}
	if nb != nil {
		num, err := parseNumbering(nb)
		if err != nil {
			return nil, err
		}
		sb, err := a.optional("word/styles.xml")
		if err != nil {
			return nil, err
		}
		if sb != nil {
			if err := num.readStyles(sb); err != nil {
				return nil, err
			}
		}
		rules.onStart, rules.onEnd = num.onStart, num.onEnd
	}
	parts := []string{"word/document.xml"}
	parts = append(parts, numbered(a, "word/header")...)
	parts = append(parts, numbered(a, "word/footer")...)
	parts = append(parts, "word/footnotes.xml", "word/endnotes.xml", "word/comments.xml")
	p := &parsed{format: "docx"}
	var out bytes.Buffer
	seen := map[string]bool{}
	for i, part := range parts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var b []byte
		if i == 0 {
			b, err = a.read(part)
		} else {
			b, err = a.optional(part)
		}
		if err != nil {
			return nil, err
		}
		if b == nil {
			continue
		}
		var one bytes.Buffer
		h, err := xmlWalk(part, b, &rules, &one)
		if err != nil {
			return nil, err
		}
		text := tidy(one.String())
		if i > 0 && (text == "" || seen[text]) {
			continue
		}
		seen[text] = true
		out.WriteString("\n\n")
		out.WriteString(text)
		if i == 0 {
			p.headings = append(p.headings, h...)
		}
	}
	p.text = tidy(out.String())
	if p.title, err = coreTitle(a); err != nil {
		return nil, err
	}
	return p, nil
}

// numbered lists the members prefix1.xml, prefix2.xml, ... in number order.
func numbered(a *archive, prefix string) []string {
	var names []string
	for name := range a.files {
		if n, ok := strings.CutPrefix(name, prefix); ok && strings.HasSuffix(n, ".xml") {
			if _, err := strconv.Atoi(strings.TrimSuffix(n, ".xml")); err == nil {
				names = append(names, name)
			}
		}
	}
	sort.Slice(names, func(i, j int) bool {
		if len(names[i]) != len(names[j]) {
			return len(names[i]) < len(names[j])
		}
		return names[i] < names[j]
	})
	return names
}

func coreTitle(a *archive) (string, error) {
	b, err := a.optional("docProps/core.xml")
	if err != nil || b == nil {
		return "", err
	}
	return metaTitle("docProps/core.xml", b)
}

// slideRules render DrawingML text: a:p paragraphs, a:t runs, a:br breaks;
// a shape whose placeholder is a title is a heading.
var slideRules = &xmlRules{
	block: set("p", "sp", "tr"),
	text:  set("t"),
	brk:   set("br"),
	cell:  set("tc"),
	heading: func(se xml.StartElement) bool {
		if se.Name.Local != "ph" {
			return false
		}
		t := attr(se, "type")
		return t == "title" || t == "ctrTitle"
	},
}

// pptx reads slides in presentation order (the sldIdLst and its
// relationships), each followed by its speaker notes.
func (l *Loader) pptx(ctx context.Context, data []byte) (*parsed, error) {
	a, err := l.openArchive(data)
	if err != nil {
		return nil, err
	}
	if a.has("EncryptedPackage") {
		return nil, fmt.Errorf("%w: password-protected Office file; docgraph reads no passwords: save a copy without one to read it", ErrEncrypted)
	}
	pres, err := a.read("ppt/presentation.xml")
	if err != nil {
		return nil, err
	}
	ids, err := slideOrder(pres)
	if err != nil {
		return nil, err
	}
	rels, err := relations(a, "ppt/presentation.xml")
	if err != nil {
		return nil, err
	}
	var slides []string
	for _, id := range ids {
		if t, ok := rels[id]; ok {
			slides = append(slides, t)
		}
	}
	if len(slides) == 0 { // no usable order: the slide parts by number
		for name := range a.files {
			if strings.HasPrefix(name, "ppt/slides/slide") && strings.HasSuffix(name, ".xml") {
				slides = append(slides, name)
			}
		}
		sort.Slice(slides, func(i, j int) bool {
			if len(slides[i]) != len(slides[j]) {
				return len(slides[i]) < len(slides[j])
			}
			return slides[i] < slides[j]
		})
	}
	p := &parsed{format: "pptx"}
	var out bytes.Buffer
	for _, s := range slides {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		b, err := a.read(s)
		if err != nil {
			return nil, err
		}
		h, err := xmlWalk(s, b, slideRules, &out)
		if err != nil {
			return nil, err
		}
		p.headings = append(p.headings, h...)
		srels, err := relations(a, s)
		if err != nil {
			return nil, err
		}
		for _, target := range srels {
			if strings.Contains(target, "notesSlides/") {
				nb, err := a.read(target)
				if err != nil {
					return nil, err
				}
				// The notes page repeats the slide image and number; its
				// body text is in shapes like any other.
				if _, err := xmlWalk(target, nb, slideRules, &out); err != nil {
					return nil, err
				}
			}
		}
		out.WriteString("\n\n")
	}
	p.text = tidy(out.String())
	if p.title, err = coreTitle(a); err != nil {
		return nil, err
	}
	return p, nil
}

// slideOrder returns the relationship ids of the sldIdLst, in order.
func slideOrder(b []byte) ([]string, error) {
	d := newXMLDecoder(b)
	var ids []string
	depth := 0
	for {
		tok, err := xmlToken(d, "ppt/presentation.xml")
		if err == io.EOF {
			return ids, nil
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if depth++; depth > maxXMLDepth {
				return nil, fmt.Errorf("%w: part ppt/presentation.xml nests elements more than %d deep", ErrMalformed, maxXMLDepth)
			}
			if t.Name.Local == "sldId" {
				ids = append(ids, attr(t, "id"))
				// r:id and the numeric id share a local name; keep the r: one.
				for _, at := range t.Attr {
					if at.Name.Local == "id" && at.Name.Space != "" {
						ids[len(ids)-1] = at.Value
					}
				}
			}
		case xml.EndElement:
			depth--
		}
	}
}

// relations maps a part's relationship ids to the members they target
// (internal targets only).
func relations(a *archive, part string) (map[string]string, error) {
	name := path.Join(path.Dir(part), "_rels", path.Base(part)+".rels")
	b, err := a.optional(name)
	if err != nil || b == nil {
		return nil, err
	}
	var rels struct {
		Rel []struct {
			ID     string `xml:"Id,attr"`
			Target string `xml:"Target,attr"`
			Mode   string `xml:"TargetMode,attr"`
		} `xml:"Relationship"`
	}
	if err := decodeSafe(name, b, &rels); err != nil {
		return nil, err
	}
	m := map[string]string{}
	for _, r := range rels.Rel {
		if r.Mode == "External" {
			continue
		}
		m[r.ID] = resolve(part, r.Target)
	}
	return m, nil
}
