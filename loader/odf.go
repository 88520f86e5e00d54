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
		return nil, fmt.Errorf("%w: password-protected OpenDocument file; docgraph reads no passwords: save a copy without one to read it", ErrEncrypted)
	}
	b, err := a.read("content.xml")
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// List styles live in both parts: automatic ones in content.xml,
	// named ones in styles.xml.
	lists := &odfLists{styles: map[string]*[10]odfLevel{}}
	if sb, err := a.optional("styles.xml"); err != nil {
		return nil, err
	} else if sb != nil {
		if err := lists.readListStyles("styles.xml", sb); err != nil {
			return nil, err
		}
	}
	if err := lists.readListStyles("content.xml", b); err != nil {
		return nil, err
	}
	rules := *odfRules
	rules.onStart, rules.onEnd = lists.onStart, lists.onEnd
	p := &parsed{}
	var out bytes.Buffer
	if p.headings, err = xmlWalk("content.xml", b, &rules, &out); err != nil {
		return nil, err
	}
	p.text = tidy(out.String())
	if hf, err := l.odfHeaders(a); err != nil {
		return nil, err
	} else if hf != "" {
		p.text += "\n\n" + hf
	}
	if m, err := a.optional("meta.xml"); err != nil {
		return nil, err
	} else if m != nil {
		if p.title, err = metaTitle("meta.xml", m); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// odfPageRules take the text of page headers and footers only, which an
// OpenDocument text keeps in styles.xml with its master pages.
var odfPageRules = func() *xmlRules {
	r := *odfRules
	r.text = set("header", "footer", "header-left", "footer-left", "header-first", "footer-first")
	r.heading = nil
	return &r
}()

// odfHeaders returns the page headers and footers of a text document, each
// line once, for the reasons given at docx: printed on every page, they
// are worth finding but not worth weighing by page count.
func (l *Loader) odfHeaders(a *archive) (string, error) {
	b, err := a.optional("styles.xml")
	if err != nil || b == nil {
		return "", err
	}
	var out bytes.Buffer
	if _, err := xmlWalk("styles.xml", b, odfPageRules, &out); err != nil {
		return "", err
	}
	seen := map[string]bool{}
	var lines []string
	for _, line := range strings.Split(tidy(out.String()), "\n") {
		if line = strings.TrimSpace(line); line != "" && !seen[line] {
			seen[line] = true
			lines = append(lines, line)
		}
	}
	return strings.Join(lines, "\n"), nil
}
