package loader

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ledongthuc/pdf"
)

// Limits on walking a PDF's object graph. The pdf library follows page-tree
// and /Parent links without cycle checks, so a crafted file could loop it
// forever; we walk those links ourselves first, within these bounds.
const (
	maxTreeDepth = 64
	maxTreeNodes = 200_000
	// maxContentBytes caps a page's decompressed content stream. Real pages
	// of text are far smaller; a flate bomb is not, and the library would
	// keep every glyph of it in memory.
	maxContentBytes = 32 << 20
	// maxColumns bounds PNG predictor rows; see checkStreamParams.
	maxColumns = 1 << 16
)

// extractPDF returns a PDF's text, its metadata title and warnings. The pdf
// library reports much of what it dislikes by panicking, so all of it runs
// under recover; one bad page is skipped with a warning, not the whole file.
// Pages are read in parallel; the fonts and forms they share are loaded
// once per document.
func extractPDF(ctx context.Context, data []byte) (text, title string, warnings []Warning, err error) {
	defer func() {
		if r := recover(); r != nil {
			text, title, warnings = "", "", nil
			err = fmt.Errorf("%w: %s", ErrMalformedPDF, oneLine(libMessage(r), maxCauseLen))
		}
	}()
	data, err = checkFrame(data)
	if err != nil {
		return "", "", nil, err
	}
	if err := checkXref(data); err != nil {
		return "", "", nil, fmt.Errorf("%w: %v", ErrMalformedPDF, err)
	}
	r, err := pdf.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		msg := oneLine(libMessage(err), maxCauseLen)
		if errors.Is(err, pdf.ErrInvalidPassword) {
			// The empty user password was tried and refused.
			return "", "", nil, fmt.Errorf("%w: password-protected; docgraph reads no passwords: save a copy without one (qpdf --decrypt --password=...) to read it", ErrEncryptedPDF)
		}
		if strings.Contains(err.Error(), "encrypt") || bytes.Contains(data, []byte("/Encrypt")) {
			// AES-256 (PDF 2.0 and qpdf's default) is beyond the PDF
			// library, so whether a password is needed cannot be told.
			return "", "", nil, fmt.Errorf("%w: encrypted in a way docgraph cannot decrypt (%s), perhaps password-protected; save a decrypted copy (qpdf --decrypt) to read it", ErrEncryptedPDF, msg)
		}
		return "", "", nil, fmt.Errorf("%w: %s", ErrMalformedPDF, msg)
	}
	if !r.Trailer().Key("Encrypt").IsNull() {
		warnings = append(warnings, newWarning(WarnEncrypted, 1, "PDF is encrypted with an empty user password; decrypted"))
	}
	title = infoTitle(r)

	pages, err := pageList(r)
	if err != nil {
		return "", "", nil, fmt.Errorf("%w: %v", ErrMalformedPDF, err)
	}
	doc := newPDFDoc()
	results := make([]pageResult, len(pages))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(pages), maxPageWorkers) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(pages) || ctx.Err() != nil {
					return
				}
				results[i] = doc.extractPage(pages[i])
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return "", "", nil, err
	}

	var b strings.Builder
	for _, res := range results {
		if res.text == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(res.text)
	}
	text = strings.ToValidUTF8(b.String(), "\uFFFD")
	warnings = append(warnings, pageWarnings(results)...)
	if strings.TrimSpace(text) == "" {
		failed, unmapped, firstFailure := 0, 0, ""
		for i, res := range results {
			unmapped += res.st.unmapped
			if res.err != nil {
				failed++
				if firstFailure == "" {
					firstFailure = fmt.Sprintf("page %d: %v", i+1, res.err)
				}
			}
		}
		switch {
		case failed > 0 && failed == len(pages):
			return "", "", nil, fmt.Errorf("%w: no readable page: %s", ErrMalformedPDF, oneLine(firstFailure, maxCauseLen))
		case unmapped > 0:
			return "", "", nil, fmt.Errorf("%w: no extractable text in %s: %s glyphs have no Unicode mapping (%s)",
				ErrEmpty, pageCount(len(pages)), thousands(unmapped), unmappedFonts(results))
		default:
			return "", "", nil, fmt.Errorf("%w: no extractable text in %s (it may be scanned images)", ErrEmpty, pageCount(len(pages)))
		}
	}
	return text, title, warnings, nil
}

// infoTitle is the document's metadata title; an Info dictionary the
// library cannot parse (an escape it rejects in another entry) means none.
func infoTitle(r *pdf.Reader) (title string) {
	defer func() {
		if recover() != nil {
			title = ""
		}
	}()
	return cleanTitle(r.Trailer().Key("Info").Key("Title").Text())
}

// maxPageWorkers bounds the goroutines one document uses.
const maxPageWorkers = 8

// maxCauseLen bounds the library's words quoted in an error or warning.
const maxCauseLen = 120

// pageResult is one page's text, or why it has none.
type pageResult struct {
	text string
	st   pageStats
	err  error
}

// extractPage reads one page, turning a library panic into an error.
func (d *pdfDoc) extractPage(p pdf.Page) (res pageResult) {
	defer func() {
		if r := recover(); r != nil {
			res = pageResult{err: errors.New(libMessage(r))}
		}
	}()
	if !parentChainEnds(p.V) {
		return pageResult{err: errors.New("/Parent chain too deep or cyclic")}
	}
	content, damaged, err := readStream(p.V.Key("Contents"), maxContentBytes)
	if err != nil {
		return pageResult{err: err}
	}
	in := newInterp(d)
	if damaged {
		in.st.damaged++
	}
	in.run(content, newScope(d, p.Resources()), gstate{ctm: identity, th: 1})
	in.closeSpans()
	return pageResult{text: layoutPage(in.glyphs), st: in.st}
}

// pageWarnings sums what pages lost into one warning of each kind.
func pageWarnings(results []pageResult) []Warning {
	var out []Warning
	var skipped []string
	failed := 0
	glyphs, unmapped := 0, 0
	var lossPages []int
	var lossWhy []string
	for i, res := range results {
		if res.err != nil {
			failed++
			if len(skipped) < 3 {
				skipped = append(skipped, fmt.Sprintf("page %d: %s", i+1, oneLine(res.err.Error(), 60)))
			}
			continue
		}
		st := res.st
		glyphs += st.glyphs
		unmapped += st.unmapped
		if st.damaged > 0 || st.formLoops > 0 || st.truncated || st.formErrs > 0 {
			lossPages = append(lossPages, i+1)
			switch {
			case st.truncated:
				lossWhy = appendOnce(lossWhy, "page over the work limit")
			case st.damaged > 0:
				lossWhy = appendOnce(lossWhy, "damaged content stream")
			case st.formErrs > 0:
				lossWhy = appendOnce(lossWhy, "unreadable form")
			default:
				lossWhy = appendOnce(lossWhy, "forms nested in a loop")
			}
		}
	}
	if failed > 0 {
		more := ""
		if failed > len(skipped) {
			more = fmt.Sprintf("; and %d more", failed-len(skipped))
		}
		out = append(out, newWarning(WarnPagesSkipped, failed, "%d of %s skipped: %s%s", failed, pageCount(len(results)), strings.Join(skipped, "; "), more))
	}
	if unmapped > 0 && unmapped*100 >= glyphs {
		out = append(out, newWarning(WarnUnmappedGlyphs, unmapped, "%s of %s glyphs dropped: no Unicode mapping in %s",
			thousands(unmapped), thousands(glyphs), unmappedFonts(results)))
	}
	if len(lossPages) > 0 {
		var list []string
		for _, p := range lossPages[:min(5, len(lossPages))] {
			list = append(list, fmt.Sprint(p))
		}
		if len(lossPages) > 5 {
			list = append(list, "…")
		}
		out = append(out, newWarning(WarnTextLoss, len(lossPages), "text recovered with loss on %s (%s): %s",
			pageCount(len(lossPages)), strings.Join(list, ", "), strings.Join(lossWhy, ", ")))
	}
	return out
}

// unmappedFonts names the fonts whose glyphs had no Unicode, most first:
// "font CMEX10 (800)", "fonts A (3), B (2), 4 more".
func unmappedFonts(results []pageResult) string {
	byFont := map[string]int{}
	for _, res := range results {
		for f, n := range res.st.byFont {
			byFont[f] += n
		}
	}
	type fc struct {
		name string
		n    int
	}
	var fonts []fc
	for f, n := range byFont {
		fonts = append(fonts, fc{f, n})
	}
	sort.Slice(fonts, func(i, j int) bool {
		return fonts[i].n > fonts[j].n || fonts[i].n == fonts[j].n && fonts[i].name < fonts[j].name
	})
	var names []string
	for _, f := range fonts[:min(3, len(fonts))] {
		names = append(names, fmt.Sprintf("%s (%s)", oneLine(f.name, 40), thousands(f.n)))
	}
	if len(fonts) > 3 {
		names = append(names, fmt.Sprintf("%d more", len(fonts)-3))
	}
	return plural(len(fonts), "font ", "fonts ") + strings.Join(names, ", ")
}

func appendOnce(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
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
	s = printable(s)
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200])
	}
	return s
}

// checkStreamParams rejects a stream whose predictor /Columns would make
// the library allocate a row buffer of any size the file asks for; a huge
// one kills the process instead of panicking.
func checkStreamParams(v pdf.Value) error {
	if v.Kind() != pdf.Stream {
		return nil
	}
	for _, p := range items(v.Key("DecodeParms")) {
		if c := p.Key("Columns"); c.Kind() == pdf.Integer && (c.Int64() < 0 || c.Int64() > maxColumns) {
			return fmt.Errorf("stream predictor /Columns %d is out of range", c.Int64())
		}
	}
	return nil
}

// items is v's elements if v is an array, else v alone: the forms /Contents
// and /DecodeParms may take.
func items(v pdf.Value) []pdf.Value {
	if v.Kind() != pdf.Array {
		return []pdf.Value{v}
	}
	out := make([]pdf.Value, v.Len())
	for i := range out {
		out[i] = v.Index(i)
	}
	return out
}
