package loader

import (
	"bytes"
	"context"
	"fmt"
	"path"
	"strings"
)

// epub reads the chapters in the order of the package's spine, each as
// XHTML; the title is the package metadata's dc:title.
func (l *Loader) epub(ctx context.Context, data []byte) (*parsed, error) {
	a, err := l.openArchive(data)
	if err != nil {
		return nil, err
	}
	if a.has("META-INF/encryption.xml") {
		if enc, err := a.read("META-INF/encryption.xml"); err != nil {
			return nil, err
		} else if strings.Contains(string(enc), "EncryptedData") && !strings.Contains(string(enc), "obfuscation") {
			// Font obfuscation (IDPF/Adobe) is common and harmless; any
			// other encryption is DRM over the chapters.
			return nil, fmt.Errorf("%w: EPUB with encrypted (DRM) content", ErrEncrypted)
		}
	}
	cb, err := a.read("META-INF/container.xml")
	if err != nil {
		return nil, err
	}
	var container struct {
		Rootfiles []struct {
			Path string `xml:"full-path,attr"`
			Type string `xml:"media-type,attr"`
		} `xml:"rootfiles>rootfile"`
	}
	if err := decodeSafe("META-INF/container.xml", cb, &container); err != nil {
		return nil, err
	}
	opfPath := ""
	for _, r := range container.Rootfiles {
		if opfPath == "" || r.Type == "application/oebps-package+xml" {
			opfPath = r.Path
		}
	}
	if opfPath == "" {
		return nil, fmt.Errorf("%w: META-INF/container.xml names no package document", ErrMalformed)
	}
	ob, err := a.read(opfPath)
	if err != nil {
		return nil, err
	}
	var opf struct {
		Titles []string `xml:"metadata>title"`
		Items  []struct {
			ID   string `xml:"id,attr"`
			Href string `xml:"href,attr"`
			Type string `xml:"media-type,attr"`
		} `xml:"manifest>item"`
		Spine []struct {
			IDRef  string `xml:"idref,attr"`
			Linear string `xml:"linear,attr"`
		} `xml:"spine>itemref"`
	}
	if err := decodeSafe(opfPath, ob, &opf); err != nil {
		return nil, err
	}
	items := map[string]string{}
	for _, it := range opf.Items {
		if strings.Contains(it.Type, "html") {
			items[it.ID] = resolve(opfPath, it.Href)
		}
	}
	p := &parsed{format: "epub"}
	if len(opf.Titles) > 0 {
		p.title = cleanTitle(opf.Titles[0])
	}
	var out bytes.Buffer
	seen := map[string]bool{}
	for _, ref := range opf.Spine {
		member, ok := items[ref.IDRef]
		if !ok || seen[member] {
			continue
		}
		seen[member] = true
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		b, err := a.read(member)
		if err != nil {
			return nil, err
		}
		text, warnings := htmlDecode(b)
		if len(warnings) > 0 {
			p.warnings = append(p.warnings, Warning{Kind: warnings[0].Kind, Count: 1, Message: path.Base(member) + ": " + warnings[0].Message})
		}
		if strings.Contains(text[:min(len(text), 4096)], "<!ENTITY") {
			return nil, fmt.Errorf("%w: part %s declares XML entities (entity expansion refused)", ErrMalformed, member)
		}
		ch, err := htmlText(text)
		if err != nil {
			return nil, fmt.Errorf("part %s: %w", member, err)
		}
		p.headings = append(p.headings, ch.headings...)
		out.WriteString(ch.text)
		out.WriteString("\n\n")
	}
	if len(seen) == 0 {
		return nil, fmt.Errorf("%w: %s has no readable chapters in its spine", ErrMalformed, opfPath)
	}
	p.text = tidy(out.String())
	return p, nil
}

// decodeSafe unmarshals a small XML part, refusing entity declarations
// and deep nesting first.
func decodeSafe(part string, b []byte, v any) error {
	var sink bytes.Buffer
	if _, err := xmlWalk(part, b, &xmlRules{text: map[string]bool{}}, &sink); err != nil {
		return err
	}
	if err := newXMLDecoder(b).Decode(v); err != nil {
		return errXML(part, err)
	}
	return nil
}
