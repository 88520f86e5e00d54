package loader

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"path"
	"sort"
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

// docx reads the body, then footnotes, endnotes and comments, each part
// after the one before; the title comes from docProps/core.xml.
func (l *Loader) docx(ctx context.Context, data []byte) (*parsed, error) {
	a, err := l.openArchive(data)
	if err != nil {
		return nil, err
	}
	if a.has("EncryptedPackage") {
		return nil, fmt.Errorf("%w: password-protected Office file", ErrEncrypted)
	}
	p := &parsed{format: "docx"}
	var out bytes.Buffer
	for i, part := range []string{"word/document.xml", "word/footnotes.xml", "word/endnotes.xml", "word/comments.xml"} {
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
		out.WriteString("\n")
		h, err := xmlWalk(part, b, wordRules, &out)
		if err != nil {
			return nil, err
		}
		p.headings = append(p.headings, h...)
	}
	p.text = tidy(out.String())
	if p.title, err = coreTitle(a); err != nil {
		return nil, err
	}
	return p, nil
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
		return nil, fmt.Errorf("%w: password-protected Office file", ErrEncrypted)
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
		tok, err := d.Token()
		if err == io.EOF {
			return ids, nil
		}
		if err != nil {
			return nil, errXML("ppt/presentation.xml", err)
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
		case xml.Directive:
			if strings.Contains(string(t), "ENTITY") {
				return nil, fmt.Errorf("%w: part ppt/presentation.xml declares XML entities (entity expansion refused)", ErrMalformed)
			}
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
