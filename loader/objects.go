package loader

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ledongthuc/pdf"
)

// The pdf library resolves an indirect object again, from the file (or by
// inflating its whole object stream), each time it is reached, and its
// Values carry no public identity. Fonts and forms are the objects many
// pages share, so they are cached per document under their object number,
// which refNames reads from a dictionary without resolving anything.

// refNames maps each key of the dictionary d whose value is an indirect
// reference to that reference ("12 0"). It reads the library's printed
// form of d, in which references appear as "N G R"; keys with direct
// values are absent.
func refNames(d pdf.Value) map[string]string {
	if d.Kind() != pdf.Dict {
		return nil
	}
	lx := psLexer{b: []byte(d.String())}
	o, ok := lx.next()
	if !ok || o.kind != psDict {
		return nil
	}
	out := make(map[string]string)
	a := o.arr
	for i := 0; i+3 < len(a); i++ {
		if a[i].kind == psName && a[i+1].kind == psNum && a[i+2].kind == psNum && a[i+3].kind == psOp && a[i+3].str == "R" {
			out[a[i].str] = strconv.FormatFloat(a[i+1].num, 'f', -1, 64) + " " + strconv.FormatFloat(a[i+2].num, 'f', -1, 64)
			i += 3
		}
	}
	return out
}

// errContentTooBig: a page's decoded content is over maxContentBytes.
var errContentTooBig = fmt.Errorf("content stream over %d MiB", maxContentBytes>>20)

// readStream decodes a stream, or the concatenation of an array of
// streams (a page's /Contents may be either), reading at most limit bytes.
// A stream that breaks off (a damaged deflate stream) yields what was
// decoded before the break, with damaged set.
func readStream(v pdf.Value, limit int64) (data []byte, damaged bool, err error) {
	var firstErr error
	parts := 0
	for _, s := range items(v) {
		if s.Kind() != pdf.Stream {
			continue
		}
		parts++
		part, broken, err := readOne(s, limit-int64(len(data)))
		if err == errContentTooBig {
			return nil, false, err
		}
		if err != nil {
			// One bad stream of an array loses its part of the page only.
			if firstErr == nil {
				firstErr = err
			}
			damaged = true
			continue
		}
		damaged = damaged || broken
		if len(data) > 0 {
			data = append(data, '\n') // streams of an array are split between tokens
		}
		data = append(data, part...)
	}
	if firstErr != nil && len(data) == 0 {
		return nil, false, firstErr
	}
	return data, damaged, nil
}

func readOne(s pdf.Value, limit int64) (data []byte, damaged bool, err error) {
	defer func() {
		// The library panics on filters it does not know.
		if r := recover(); r != nil {
			data, damaged, err = nil, false, errors.New(libMessage(r))
		}
	}()
	if err := checkStreamParams(s); err != nil {
		return nil, false, err
	}
	rc := s.Reader()
	defer rc.Close()
	data, rerr := io.ReadAll(io.LimitReader(rc, limit+1))
	if int64(len(data)) > limit {
		return nil, false, errContentTooBig
	}
	if rerr != nil && !errors.Is(rerr, io.EOF) {
		if len(data) == 0 {
			return nil, false, fmt.Errorf("stream cannot be decoded: %s", libMessage(rerr))
		}
		damaged = true
	}
	return data, damaged, nil
}

// textString decodes a PDF text string (an /ActualText, say): UTF-16BE
// with a byte order mark, UTF-8 with one (PDF 2.0), else PDFDocEncoding.
func textString(s string) string {
	switch {
	case strings.HasPrefix(s, "\xFE\xFF"):
		return utf16BE(s[2:])
	case strings.HasPrefix(s, "\xEF\xBB\xBF"):
		return strings.ToValidUTF8(s[3:], "")
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 0x80 && c <= 0xA0:
			if r := pdfDocHigh[c-0x80]; r != 0 {
				b.WriteRune(r)
			}
		case c >= 0x18 && c < 0x20:
			b.WriteRune(pdfDocLow[c-0x18])
		default:
			b.WriteRune(rune(c))
		}
	}
	return b.String()
}

// PDFDocEncoding where it differs from Latin-1 (PDF 32000-1 Table D.2).
var (
	pdfDocLow  = [8]rune{0x02d8, 0x02c7, 0x02c6, 0x02d9, 0x02dd, 0x02db, 0x02da, 0x02dc}
	pdfDocHigh = [33]rune{
		0x2022, 0x2020, 0x2021, 0x2026, 0x2014, 0x2013, 0x0192, 0x2044, 0x2039, 0x203a, 0x2212, 0x2030, 0x201e, 0x201c, 0x201d, 0x2018,
		0x2019, 0x201a, 0x2122, 0xfb01, 0xfb02, 0x0141, 0x0152, 0x0160, 0x0178, 0x017d, 0x0131, 0x0142, 0x0153, 0x0161, 0x017e, 0,
		0x20ac,
	}
)

// numbers reads an array of numbers (a /Matrix, /FontMatrix, /Widths).
func numbers(v pdf.Value, limit int) []float64 {
	if v.Kind() != pdf.Array {
		return nil
	}
	n := min(v.Len(), limit)
	out := make([]float64, n)
	for i := range out {
		out[i] = v.Index(i).Float64()
	}
	return out
}
