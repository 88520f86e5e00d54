package loader

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"strings"
)

// odfRules render OpenDocument text and presentations: text:p and text:h
// end lines, list items get a dash, table cells are tab separated, and
// notes, annotations and speaker notes stay where they are anchored.
var odfRules = &xmlRules{
	block: set("p", "h", "table-row", "page", "notes", "note-body", "annotation"),
	aside: set("note", "annotation"),
	tab:   set("tab"),
	brk:   set("line-break"),
	space: set("s"),
	cell:  set("table-cell"),
	item:  set("list-item"),
	skip:  set("font-face-decls", "automatic-styles", "scripts", "note-citation", "forms", "creator", "date", "sequence-decls", "tracked-changes"),
	heading: func(se xml.StartElement) bool {
		return se.Name.Local == "h"
	},
}

// odf reads content.xml; the title comes from meta.xml.
func (l *Loader) odf(ctx context.Context, data []byte) (*parsed, error) {
	a, err := l.openArchive(data)
	if err != nil {
		return nil, err
	}
	if m, err := a.optional("META-INF/manifest.xml"); err != nil {
		return nil, err
	} else if strings.Contains(string(m), "encryption-data") {
		return nil, fmt.Errorf("%w: password-protected OpenDocument file", ErrEncrypted)
	}
	b, err := a.read("content.xml")
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p := &parsed{}
	var out bytes.Buffer
	if p.headings, err = xmlWalk("content.xml", b, odfRules, &out); err != nil {
		return nil, err
	}
	p.text = tidy(out.String())
	if m, err := a.optional("meta.xml"); err != nil {
		return nil, err
	} else if m != nil {
		if p.title, err = metaTitle("meta.xml", m); err != nil {
			return nil, err
		}
	}
	return p, nil
}
