package loader

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/ledongthuc/pdf"
)

// Limits on walking a PDF's object graph. The pdf library follows page-tree
// and /Parent links without cycle checks, so a crafted file could loop it
// forever; we walk those links ourselves first, within these bounds.
const (
	maxTreeDepth = 64
	maxTreeNodes = 200_000
)

// extractPDF returns a PDF's text, its metadata title and warnings. The pdf
// library reports much of what it dislikes by panicking, so all of it runs
// under recover; one bad page is skipped with a warning, not the whole file.
func extractPDF(ctx context.Context, data []byte) (text, title string, warnings []string, err error) {
	defer func() {
		if r := recover(); r != nil {
			text, title, warnings = "", "", nil
			err = fmt.Errorf("%w: %s", ErrMalformedPDF, libMessage(r))
		}
	}()
	data, err = checkFrame(data)
	if err != nil {
		return "", "", nil, err
	}
	r, err := pdf.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		if errors.Is(err, pdf.ErrInvalidPassword) || strings.Contains(err.Error(), "encrypt") || bytes.Contains(data, []byte("/Encrypt")) {
			return "", "", nil, fmt.Errorf("%w: %s", ErrEncryptedPDF, libMessage(err))
		}
		return "", "", nil, fmt.Errorf("%w: %s", ErrMalformedPDF, libMessage(err))
	}
	if !r.Trailer().Key("Encrypt").IsNull() {
		warnings = append(warnings, "PDF is encrypted with an empty user password; decrypted")
	}
	title = cleanTitle(r.Trailer().Key("Info").Key("Title").Text())

	pages, err := pageList(r)
	if err != nil {
		return "", "", nil, fmt.Errorf("%w: %v", ErrMalformedPDF, err)
	}
	var b strings.Builder
	var glyphs, unmapped, failed int
	var firstFailure error
	for i, p := range pages {
		if err := ctx.Err(); err != nil {
			return "", "", nil, err
		}
		pageText, st, err := extractPage(p)
		if err != nil {
			failed++
			if firstFailure == nil {
				firstFailure = fmt.Errorf("page %d: %v", i+1, err)
			}
			warnings = append(warnings, fmt.Sprintf("page %d skipped: %v", i+1, err))
			continue
		}
		glyphs += st.glyphs
		unmapped += st.unmapped
		if pageText == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(pageText)
	}
	if unmapped > 0 && unmapped*4 > glyphs {
		warnings = append(warnings, fmt.Sprintf("%d of %d glyphs have no Unicode mapping and were dropped", unmapped, glyphs))
	}
	text = strings.ToValidUTF8(b.String(), "\uFFFD")
	if strings.TrimSpace(text) == "" {
		switch {
		case failed > 0 && failed == len(pages):
			return "", "", nil, fmt.Errorf("%w: no readable page: %v", ErrMalformedPDF, firstFailure)
		case unmapped > 0:
			return "", "", nil, fmt.Errorf("%w: no extractable text in %s: %d glyphs have no Unicode mapping", ErrEmpty, pageCount(len(pages)), unmapped)
		default:
			return "", "", nil, fmt.Errorf("%w: no extractable text in %s (it may be scanned images)", ErrEmpty, pageCount(len(pages)))
		}
	}
	return text, title, warnings, nil
}

// extractPage lays out one page, turning a library panic into an error.
func extractPage(p pdf.Page) (text string, st pageStats, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = errors.New(libMessage(r))
		}
	}()
	if !parentChainEnds(p.V) {
		return "", st, errors.New("/Parent chain too deep or cyclic")
	}
	texts := p.Content().Text
	if mask := tjMarkers(p, len(texts)); mask != nil {
		kept := texts[:0]
		for i, t := range texts {
			if !mask[i] {
				kept = append(kept, t)
			}
		}
		texts = kept
	}
	text, st = layoutPage(texts)
	return text, st, nil
}

// checkFrame checks the header and trailer marker the library insists on,
// forgiving what readers forgive: a PDF 2.0 or odd header line (the library
// only knows 1.0-1.7) and a little junk after %%EOF. A file whose end has
// no %%EOF was cut short.
func checkFrame(data []byte) ([]byte, error) {
	if !bytes.HasPrefix(data, []byte("%PDF-")) {
		return nil, fmt.Errorf("%w: no %%PDF- header", ErrMalformedPDF)
	}
	tail := bytes.TrimRight(data, "\x00\r\n\t\f ")
	if !bytes.HasSuffix(tail, []byte("%%EOF")) {
		i := bytes.LastIndex(data, []byte("%%EOF"))
		if i < 0 || len(data)-i > 1024 {
			return nil, fmt.Errorf("%w: truncated (no %%%%EOF at the end)", ErrMalformedPDF)
		}
		tail = data[:i+len("%%EOF")]
	}
	data = tail
	if len(data) >= 9 && !(data[5] == '1' && data[6] == '.' && data[7] >= '0' && data[7] <= '7' && (data[8] == '\r' || data[8] == '\n')) {
		// Rewrite the header in a copy: "%PDF-2.0 " and friends become "%PDF-1.7\n".
		// Byte offsets stay the same, and the rest of the line is a comment.
		digit := func(c byte) bool { return c >= '0' && c <= '9' }
		if len(data) < 16 || !digit(data[5]) || data[6] != '.' || !digit(data[7]) {
			return nil, fmt.Errorf("%w: bad header %q", ErrMalformedPDF, firstLine(data))
		}
		fixed := bytes.Clone(data)
		copy(fixed[5:9], "1.7\n")
		data = fixed
	}
	return data, nil
}

// libMessage is a pdf library error or panic value as text, without the
// library's own "malformed PDF: " style prefix that our sentinel repeats.
func libMessage(v any) string {
	s := fmt.Sprint(v)
	for _, p := range []string{"malformed PDF: ", "malformed PDF file: ", "encrypted PDF: ", "not a PDF file: "} {
		s = strings.TrimPrefix(s, p)
	}
	return s
}

func pageCount(n int) string {
	return fmt.Sprintf("%d %s", n, plural(n, "page", "pages"))
}

func firstLine(b []byte) string {
	if i := bytes.IndexAny(b, "\r\n"); i >= 0 {
		b = b[:i]
	}
	return string(b[:min(len(b), 32)])
}

// pageList walks the page tree itself, bounded, rather than calling the
// library's Page(i), which loops forever on a cyclic /Kids.
func pageList(r *pdf.Reader) ([]pdf.Page, error) {
	var pages []pdf.Page
	nodes := 0
	var walk func(v pdf.Value, depth int) error
	walk = func(v pdf.Value, depth int) error {
		nodes++
		if depth > maxTreeDepth || nodes > maxTreeNodes {
			return errors.New("page tree too deep or cyclic")
		}
		kids := v.Key("Kids")
		switch {
		case v.Key("Type").Name() == "Page" || (kids.Kind() != pdf.Array && v.Kind() == pdf.Dict):
			pages = append(pages, pdf.Page{V: v})
		case kids.Kind() == pdf.Array:
			for i := 0; i < kids.Len(); i++ {
				if err := walk(kids.Index(i), depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	root := r.Trailer().Key("Root").Key("Pages")
	if root.Kind() != pdf.Dict {
		return nil, errors.New("no page tree")
	}
	if err := walk(root, 0); err != nil {
		return nil, err
	}
	return pages, nil
}

// parentChainEnds reports whether following /Parent from v ends, or finds
// /Resources (where the library's own walk stops), within maxTreeDepth steps.
func parentChainEnds(v pdf.Value) bool {
	for range maxTreeDepth {
		if v.IsNull() || !v.Key("Resources").IsNull() {
			return true
		}
		v = v.Key("Parent")
	}
	return false
}

// cleanTitle makes a metadata title safe to show: valid UTF-8, no control
// characters, single spaces, at most 200 runes.
func cleanTitle(s string) string {
	s = strings.ToValidUTF8(s, "")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '\uFFFD' {
			return ' '
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200])
	}
	return s
}

// tjMarkers finds the glyphs that are not in the PDF at all: after every TJ
// the library shows an extra "\n" through the current font, which decodes to
// a real letter in subset fonts that use code 10 (LibreOffice puts a 'p'
// there). It replays the content stream exactly as the library does and
// returns which of its total glyphs are such markers, or nil if the replay
// does not agree with the library's glyph count.
func tjMarkers(p pdf.Page, total int) (mask []bool) {
	defer func() {
		if recover() != nil {
			mask = nil
		}
	}()
	fonts := make(map[string]pdf.TextEncoding)
	var enc pdf.TextEncoding = rawEncoding{}
	mask = make([]bool, 0, total)
	show := func(s string, marker bool) {
		for range enc.Decode(s) {
			mask = append(mask, marker)
		}
	}
	pdf.Interpret(p.V.Key("Contents"), func(stk *pdf.Stack, op string) {
		args := make([]pdf.Value, stk.Len())
		for i := len(args) - 1; i >= 0; i-- {
			args[i] = stk.Pop()
		}
		switch op {
		case "Tf":
			if len(args) != 2 {
				panic("bad Tf")
			}
			name := args[0].Name()
			e, ok := fonts[name]
			if !ok {
				f := p.Font(name)
				e = f.Encoder()
				if e == nil {
					e = rawEncoding{}
				}
				fonts[name] = e
			}
			enc = e
		case "\"":
			if len(args) != 3 {
				panic("bad \"")
			}
			args = args[2:]
			fallthrough
		case "'", "Tj":
			if len(args) != 1 {
				panic("bad " + op)
			}
			show(args[0].RawString(), false)
		case "TJ":
			if len(args) < 1 {
				panic("bad TJ")
			}
			v := args[0]
			for i := 0; i < v.Len(); i++ {
				if x := v.Index(i); x.Kind() == pdf.String {
					show(x.RawString(), false)
				}
			}
			show("\n", true)
		}
	})
	if len(mask) != total {
		return nil
	}
	return mask
}

// rawEncoding passes codes through, as the library does before any Tf.
type rawEncoding struct{}

func (rawEncoding) Decode(raw string) string { return raw }
