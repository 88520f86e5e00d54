package loader

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path"
	"strings"

	"golang.org/x/net/html/charset"
)

// sniff names the format data's first bytes show, "" when they show none
// (plain text and markup, whose name decides). byName is the format the
// file's name claims; a claim the content contradicts is an error rather
// than a guess, so a .docx that is not a zip says so.
func sniff(data []byte, byName string) (string, error) {
	switch {
	case bytes.HasPrefix(data, []byte{0x1f, 0x8b}):
		return "gzip", nil
	case bytes.HasPrefix(data, []byte("%PDF-")) || byName == "pdf" && bytes.Contains(data[:min(len(data), 1024)], []byte("%PDF-")):
		return "pdf", nil
	case bytes.HasPrefix(data, []byte("PK\x03\x04")) || bytes.HasPrefix(data, []byte("PK\x05\x06")):
		return zipFormat(data, byName)
	case bytes.HasPrefix(data, []byte{0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1}):
		// An OLE compound file: a password-protected OOXML file is stored
		// in one (with an EncryptionInfo stream), as are legacy .doc/.ppt.
		if bytes.Contains(data, utf16le("EncryptionInfo")) {
			return "", fmt.Errorf("%w: password-protected Office file; docgraph reads no passwords: save a copy without one to read it", ErrEncrypted)
		}
		return "", fmt.Errorf("%w: legacy binary Office file (.doc, .ppt, .xls); save it as .docx, .pptx or .odt", ErrUnsupported)
	}
	switch byName {
	case "docx", "pptx", "odt", "odp", "epub":
		return "", fmt.Errorf("%w: not a zip archive, as a .%s file must be (starts with %q)", ErrMalformed, byName, data[:min(len(data), 8)])
	}
	return "", nil
}

func utf16le(s string) []byte {
	b := make([]byte, 0, 2*len(s))
	for i := 0; i < len(s); i++ {
		b = append(b, s[i], 0)
	}
	return b
}

// zipFormat tells the zip-based formats apart by their members: the ODF and
// EPUB mimetype member, else the OOXML main part.
func zipFormat(data []byte, byName string) (string, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return "", fmt.Errorf("%w: broken zip archive: %w", ErrMalformed, err)
	}
	return zipReaderFormat(zr, byName)
}

func zipReaderFormat(zr *zip.Reader, byName string) (string, error) {
	names := map[string]*zip.File{}
	for _, f := range zr.File {
		names[f.Name] = f
	}
	if f := names["mimetype"]; f != nil && f.UncompressedSize64 < 256 {
		if rc, err := f.Open(); err == nil {
			b, _ := io.ReadAll(io.LimitReader(rc, 256))
			rc.Close()
			switch strings.TrimSpace(string(b)) {
			case "application/vnd.oasis.opendocument.text", "application/vnd.oasis.opendocument.text-template",
				// What LibreOffice writes for an .odt made from an HTML page.
				"application/vnd.oasis.opendocument.text-web":
				return "odt", nil
			case "application/vnd.oasis.opendocument.presentation", "application/vnd.oasis.opendocument.presentation-template":
				return "odp", nil
			case "application/epub+zip":
				return "epub", nil
			}
		}
	}
	switch {
	case names["word/document.xml"] != nil:
		return "docx", nil
	case names["ppt/presentation.xml"] != nil:
		return "pptx", nil
	case names["META-INF/container.xml"] != nil:
		return "epub", nil
	case names["content.xml"] != nil && (byName == "odt" || byName == "odp"):
		return byName, nil
	}
	switch byName {
	case "docx", "pptx", "odt", "odp", "epub":
		return "", fmt.Errorf("%w: zip archive without the parts of a .%s file", ErrMalformed, byName)
	}
	return "", fmt.Errorf("%w: zip archive that is no DOCX, PPTX, ODT, ODP or EPUB", ErrUnsupported)
}

// archive reads members of a zip file, all of them together no larger
// than the loader's size limit: a zip bomb is refused by what it inflates
// to, counted while reading, whatever its headers claim.
type archive struct {
	zr     *zip.Reader
	files  map[string]*zip.File
	budget int64 // bytes still allowed
	limit  int64
}

func (l *Loader) openArchive(data []byte) (*archive, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, fmt.Errorf("%w: broken zip archive: %w", ErrMalformed, err)
	}
	a := &archive{zr: zr, files: map[string]*zip.File{}, budget: l.maxBytes, limit: l.maxBytes}
	for _, f := range zr.File {
		a.files[f.Name] = f
	}
	return a, nil
}

func (a *archive) has(name string) bool { return a.files[name] != nil }

// read returns a member's bytes; a missing member is ErrMalformed.
func (a *archive) read(name string) ([]byte, error) {
	f := a.files[name]
	if f == nil {
		return nil, fmt.Errorf("%w: missing part %s", ErrMalformed, name)
	}
	if f.Flags&1 != 0 {
		return nil, fmt.Errorf("%w: part %s is encrypted", ErrEncrypted, name)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("%w: part %s: %w", ErrMalformed, name, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, a.budget+1))
	if int64(len(b)) > a.budget {
		return nil, fmt.Errorf("%w: zip parts inflate to more than --max-file-size %s (a zip bomb?)", ErrTooLarge, SizeText(a.limit))
	}
	a.budget -= int64(len(b))
	if err != nil {
		return nil, fmt.Errorf("%w: part %s: %w", ErrMalformed, name, err)
	}
	return b, nil
}

// optional reads a member that may be absent ("" and no error then).
func (a *archive) optional(name string) ([]byte, error) {
	if !a.has(name) {
		return nil, nil
	}
	return a.read(name)
}

// resolve joins a relative reference inside a zip to the member it names.
func resolve(base, ref string) string {
	if i := strings.IndexAny(ref, "#?"); i >= 0 {
		ref = ref[:i]
	}
	ref = unescapePath(ref)
	if strings.HasPrefix(ref, "/") {
		return strings.TrimPrefix(path.Clean(ref), "/")
	}
	return strings.TrimPrefix(path.Join(path.Dir(base), ref), "/")
}

func unescapePath(s string) string {
	if u, err := url.PathUnescape(s); err == nil {
		return u
	}
	return s
}

// maxXMLDepth bounds element nesting; real documents stay far below it,
// and deeper input is refused rather than walked.
const maxXMLDepth = 512

// newXMLDecoder makes a strict decoder for a document part. Declared
// charsets are decoded (golang.org/x/net/html/charset); encoding/xml never
// expands entities a DOCTYPE declares, and xmlWalk refuses such DOCTYPEs
// outright, so a "billion laughs" part fails at once with a clear cause.
func newXMLDecoder(b []byte) *xml.Decoder {
	d := xml.NewDecoder(bytes.NewReader(b))
	d.CharsetReader = charset.NewReaderLabel
	return d
}

// errXML wraps an XML error of a part as ErrMalformed.
func errXML(part string, err error) error {
	var se *xml.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("%w: part %s: XML line %d: %s", ErrMalformed, part, se.Line, se.Msg)
	}
	return fmt.Errorf("%w: part %s: %w", ErrMalformed, part, err)
}

// xmlToken is d's next token of part: io.EOF at its end, the syntax error
// as errXML wraps it, or ErrMalformed for an entity declaration, which no
// document part needs (the "billion laughs" guard of the parts' readers).
func xmlToken(d *xml.Decoder, part string) (xml.Token, error) {
	tok, err := d.Token()
	switch {
	case err == io.EOF:
		return nil, err
	case err != nil:
		return nil, errXML(part, err)
	}
	if dir, ok := tok.(xml.Directive); ok && bytes.Contains(dir, []byte("ENTITY")) {
		return nil, fmt.Errorf("%w: part %s declares XML entities (entity expansion refused)", ErrMalformed, part)
	}
	return tok, nil
}

// xmlRules say how a vocabulary's elements become text. Elements are
// named by local name; namespaces are ignored.
type xmlRules struct {
	block   map[string]bool // ends a line
	text    map[string]bool // only these elements' character data counts (nil: all)
	tab     map[string]bool // a tab
	brk     map[string]bool // a line break
	space   map[string]bool // a space; attribute "c" repeats it (ODF text:s)
	cell    map[string]bool // table cell: text then a tab
	skip    map[string]bool // subtree dropped
	item    map[string]bool // list item: "- " in front
	aside   map[string]bool // notes and comments: moved to the end of the part
	heading func(xml.StartElement) bool
	// onStart, when set, sees every element outside skipped subtrees and
	// returns text to write at that point (DOCX list labels).
	onStart func(xml.StartElement) string
	// onEnd, when set, sees the end of every element outside skipped
	// subtrees and returns text to write there.
	onEnd func(local string) string
}

// xmlWalk renders a part's XML as text by rules into out, returning the
// headings found. A heading is the text of the innermost open block when
// rules.heading marks it.
func xmlWalk(part string, b []byte, r *xmlRules, out *bytes.Buffer) ([]string, error) {
	d := newXMLDecoder(b)
	type open struct {
		name    string
		start   int
		block   bool
		heading bool
	}
	var stack []open
	var headings []string
	skipDepth := 0
	textDepth := 0
	cellDepth := 0
	asideDepth, asideStart := 0, 0
	var notes bytes.Buffer
	for {
		tok, err := xmlToken(d, part)
		if err == io.EOF {
			break
		}
		if err != nil {
			return headings, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if len(stack) >= maxXMLDepth {
				return headings, fmt.Errorf("%w: part %s nests elements more than %d deep", ErrMalformed, part, maxXMLDepth)
			}
			n := t.Name.Local
			o := open{name: n, start: out.Len(), block: r.block[n] || r.cell[n] || r.item[n]}
			stack = append(stack, o)
			if skipDepth > 0 || r.skip[n] {
				skipDepth++
				continue
			}
			if r.text[n] {
				textDepth++
			}
			if r.cell[n] {
				cellDepth++
			}
			if r.aside[n] {
				if asideDepth == 0 {
					asideStart = out.Len()
				}
				asideDepth++
			}
			switch {
			case r.tab[n]:
				out.WriteByte('\t')
			case r.brk[n]:
				out.WriteByte('\n')
			case r.space[n]:
				c := 1
				for _, a := range t.Attr {
					if a.Name.Local == "c" {
						fmt.Sscan(a.Value, &c)
					}
				}
				out.WriteString(strings.Repeat(" ", max(1, min(c, 64))))
			}
			label := ""
			if r.onStart != nil {
				label = r.onStart(t)
			}
			if r.item[n] && label == "" {
				label = "- "
			}
			out.WriteString(label)
			if r.heading != nil && r.heading(t) {
				for i := len(stack) - 1; i >= 0; i-- {
					if stack[i].block {
						stack[i].heading = true
						break
					}
				}
			}
		case xml.EndElement:
			if len(stack) == 0 {
				continue
			}
			o := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if skipDepth > 0 {
				skipDepth--
				continue
			}
			if r.onEnd != nil {
				out.WriteString(r.onEnd(o.name))
			}
			if r.text[o.name] {
				textDepth--
			}
			if r.cell[o.name] {
				cellDepth--
			}
			if o.heading {
				if h := cleanTitle(string(out.Bytes()[o.start:])); h != "" {
					headings = append(headings, h)
				}
			}
			switch {
			case r.cell[o.name]:
				trimTrailingSpace(out)
				out.WriteByte('\t')
			case o.block && cellDepth > 0 && asideDepth == 0:
				// Paragraphs inside a table cell stay on the row's line.
				trimTrailingSpace(out)
				out.WriteByte(' ')
			case o.block:
				endLine(out)
			}
			if r.aside[o.name] {
				if asideDepth--; asideDepth == 0 {
					notes.Write(out.Bytes()[asideStart:])
					endLine(&notes)
					out.Truncate(asideStart)
				}
			}
		case xml.CharData:
			if skipDepth == 0 && (r.text == nil || textDepth > 0) {
				out.Write(t)
			}
		}
	}
	if notes.Len() > 0 {
		endLine(out)
		out.WriteByte('\n')
		out.Write(notes.Bytes())
	}
	return headings, nil
}

// endLine ends the line in b unless it is ended already.
func endLine(b *bytes.Buffer) {
	trimTrailingSpace(b)
	if s := b.Bytes(); len(s) > 0 && s[len(s)-1] != '\n' {
		b.WriteByte('\n')
	}
}

func trimTrailingSpace(b *bytes.Buffer) {
	b.Truncate(len(bytes.TrimRight(b.Bytes(), " \t")))
}

// tidy collapses runs of blank lines and trailing spaces in rendered text.
func tidy(s string) string {
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	out := make([]string, 0, len(lines))
	blank := true
	for _, l := range lines {
		l = strings.TrimRight(l, " \t\u00a0")
		if strings.TrimSpace(l) == "" {
			if !blank {
				out = append(out, "")
			}
			blank = true
			continue
		}
		out = append(out, l)
		blank = false
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

// metaTitle returns the first dc:title (or any element named title) of an
// XML metadata part: docProps/core.xml, meta.xml.
func metaTitle(part string, b []byte) (string, error) {
	d := newXMLDecoder(b)
	depth := 0
	in := false
	var t strings.Builder
	for {
		tok, err := xmlToken(d, part)
		if err == io.EOF {
			return "", nil
		}
		if err != nil {
			return "", err
		}
		switch x := tok.(type) {
		case xml.StartElement:
			depth++
			if depth > maxXMLDepth {
				return "", fmt.Errorf("%w: part %s nests elements more than %d deep", ErrMalformed, part, maxXMLDepth)
			}
			in = x.Name.Local == "title"
		case xml.EndElement:
			depth--
			if in {
				return cleanTitle(t.String()), nil
			}
		case xml.CharData:
			if in {
				t.Write(x)
			}
		}
	}
}
