package loader

import (
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// checkXref walks a PDF's cross-reference sections the way the pdf library
// will, but with bounds, and rejects the structures on which the library
// would loop forever (a /Prev chain or /Extends chain that cycles), recurse
// until the Go stack overflows (an object stream stored inside itself), or
// allocate without limit (object numbers or /Size far beyond the file).
// Those end the whole process rather than panic, so recover cannot help.
// Anything this walk cannot read is left for the library to reject.
func checkXref(data []byte) error {
	start, ok := startXref(data)
	if !ok {
		return nil
	}
	limit := int64(max(len(data), 1<<20)) // no file holds more objects than bytes
	x := &xrefWalk{data: data, limit: limit, inStream: map[int64]int64{}, offsets: map[int64]int64{}}
	seen := map[int64]bool{}
	for off := start; off >= 0; {
		if seen[off] {
			return errors.New("cross-reference /Prev chain loops")
		}
		if len(seen) >= 1024 {
			return errors.New("too many cross-reference sections")
		}
		seen[off] = true
		next, err := x.section(off)
		if err != nil {
			return err
		}
		off = next
	}
	return x.checkObjectStreams()
}

type xrefWalk struct {
	data     []byte
	limit    int64
	inStream map[int64]int64 // object number -> number of the object stream holding it
	offsets  map[int64]int64 // object number -> byte offset, for objects stored plainly
}

// startXref is the offset after the last "startxref" near the end of the file.
func startXref(data []byte) (int64, bool) {
	tail := data[max(0, len(data)-1024):]
	i := bytes.LastIndex(tail, []byte("startxref"))
	if i < 0 {
		return 0, false
	}
	lx := &lexer{b: tail, pos: i + len("startxref")}
	n, ok := lx.value(0).(int64)
	return n, ok && n >= 0
}

// section reads the section at off and returns its /Prev offset, or -1.
func (x *xrefWalk) section(off int64) (int64, error) {
	if off >= int64(len(x.data)) {
		return -1, nil
	}
	lx := &lexer{b: x.data, pos: int(off)}
	if lx.keyword("xref") {
		return x.table(lx)
	}
	return x.stream(lx)
}

// table skips a classic xref table, checking its subsection ranges.
func (x *xrefWalk) table(lx *lexer) (int64, error) {
	for {
		if lx.keyword("trailer") {
			break
		}
		first, ok1 := lx.value(0).(int64)
		n, ok2 := lx.value(0).(int64)
		if !ok1 || !ok2 {
			return -1, nil
		}
		if first < 0 || n < 0 || first+n > x.limit {
			return -1, fmt.Errorf("xref subsection %d+%d is beyond any real object count", first, n)
		}
		for range 3 * n {
			if lx.value(0) == nil {
				return -1, nil
			}
		}
	}
	trailer, _ := lx.value(0).(pdfDict)
	return prevOffset(trailer), nil
}

// stream decodes a cross-reference stream and records its entries; newer
// sections are read first and win, as in the library.
func (x *xrefWalk) stream(lx *lexer) (int64, error) {
	// The library's lexer accepts dictionaries ours refuses (an array
	// closed by ">>", say) and then sizes its table from /Size all the
	// same, so /Size is also looked for in the object's raw header.
	if size, found := rawSize(x.data[lx.pos:]); found && size > x.limit {
		return -1, fmt.Errorf("xref stream /Size %d is beyond any real object count", size)
	}
	dict, raw, ok := lx.streamObject()
	if dict == nil || dict["Type"] != pdfName("XRef") {
		return -1, nil
	}
	// The library sizes its table from /Size even when it cannot read the
	// stream body (a missing or wrong /Length), so the bound comes first.
	size, _ := dict["Size"].(int64)
	if size < 0 || size > x.limit {
		return -1, fmt.Errorf("xref stream /Size %d is beyond any real object count", size)
	}
	if !ok {
		return -1, nil
	}
	wArr, _ := dict["W"].(pdfArray)
	var w []int
	total := 0
	for _, v := range wArr {
		n, ok := v.(int64)
		if !ok || n < 0 || n > 8 {
			return -1, fmt.Errorf("xref stream /W %v is invalid", wArr)
		}
		w = append(w, int(n))
		total += int(n)
	}
	if len(w) < 3 || total == 0 {
		return -1, nil
	}
	index, _ := dict["Index"].(pdfArray)
	if index == nil {
		index = pdfArray{int64(0), size}
	}
	if err := x.checkPredictor(dict); err != nil {
		return -1, err
	}
	rows, ok := decodeXrefData(dict, raw, total)
	if !ok {
		return -1, nil
	}
	field := func(row []byte, i int) int64 {
		var v int64
		for _, c := range row[:w[i]] {
			v = v<<8 | int64(c)
		}
		return v
	}
	for len(index) >= 2 && len(rows) >= total {
		first, ok1 := index[0].(int64)
		n, ok2 := index[1].(int64)
		index = index[2:]
		if !ok1 || !ok2 {
			break
		}
		if first < 0 || n < 0 || first+n > x.limit {
			return -1, fmt.Errorf("xref stream /Index %d+%d is beyond any real object count", first, n)
		}
		for i := int64(0); i < n && len(rows) >= total; i++ {
			row := rows[:total]
			rows = rows[total:]
			typ := int64(1)
			if w[0] > 0 {
				typ = field(row, 0)
			}
			obj := first + i
			_, done := x.inStream[obj]
			if _, plain := x.offsets[obj]; done || plain {
				continue
			}
			switch typ {
			case 1:
				x.offsets[obj] = field(row[w[0]:], 1)
			case 2:
				x.inStream[obj] = field(row[w[0]:], 1)
			}
		}
	}
	return prevOffset(dict), nil
}

// checkObjectStreams rejects an object stream that, directly or through
// others, is stored inside itself, and /Extends chains that cycle.
func (x *xrefWalk) checkObjectStreams() error {
	for obj, container := range x.inStream {
		c := container
		for steps := 0; ; steps++ {
			next, nested := x.inStream[c]
			if !nested {
				break
			}
			if steps > 64 || next == obj || next == c {
				return fmt.Errorf("object stream %d is stored inside itself", container)
			}
			c = next
		}
	}
	containers := map[int64]bool{}
	for _, c := range x.inStream {
		containers[c] = true
	}
	for c := range containers {
		seen := map[int64]bool{}
		for cur := c; ; {
			if seen[cur] || len(seen) > 64 {
				return fmt.Errorf("object stream %d /Extends chain loops", c)
			}
			seen[cur] = true
			off, ok := x.offsets[cur]
			if !ok || off < 0 || off >= int64(len(x.data)) {
				break
			}
			lx := &lexer{b: x.data, pos: int(off)}
			dict, _, _ := lx.streamObject()
			if err := x.checkPredictor(dict); err != nil {
				return fmt.Errorf("object stream %d: %w", cur, err)
			}
			ext, ok := dict["Extends"].(pdfRef)
			if !ok {
				break
			}
			cur = int64(ext)
		}
	}
	return nil
}

// checkPredictor rejects a stream dictionary whose /DecodeParms ask for
// PNG rows wider than maxColumns: the library allocates a row buffer of
// whatever size it is told. Indirect parameters are followed one step.
func (x *xrefWalk) checkPredictor(dict pdfDict) error {
	parms := x.resolve(dict["DecodeParms"])
	list, ok := parms.(pdfArray)
	if !ok {
		list = pdfArray{parms}
	}
	for _, p := range list {
		d, ok := x.resolve(p).(pdfDict)
		if !ok {
			continue
		}
		switch c := x.resolve(d["Columns"]).(type) {
		case int64:
			if c < 0 || c > maxColumns {
				return fmt.Errorf("predictor /Columns %d is out of range", c)
			}
		case pdfRef:
			return errors.New("predictor /Columns is an unresolvable reference")
		}
	}
	return nil
}

// resolve follows a reference to a plainly stored object; a reference
// into an object stream (or a chain of references) is returned as is.
func (x *xrefWalk) resolve(v any) any {
	ref, ok := v.(pdfRef)
	if !ok {
		return v
	}
	off, ok := x.offsets[int64(ref)]
	if !ok || off < 0 || off >= int64(len(x.data)) {
		if _, packed := x.inStream[int64(ref)]; packed {
			return ref
		}
		return nil // missing objects are null
	}
	lx := &lexer{b: x.data, pos: int(off)}
	if !lx.objHeader() {
		return nil
	}
	return lx.value(0)
}

// decodeXrefData inflates a cross-reference stream and undoes the PNG Up
// predictor, the only one the library supports. ok is false when the
// library could not read the stream either.
func decodeXrefData(dict pdfDict, raw []byte, width int) ([]byte, bool) {
	data := raw
	filter := dict["Filter"]
	if arr, ok := filter.(pdfArray); ok && len(arr) == 1 {
		filter = arr[0]
	}
	switch filter {
	case nil:
	case pdfName("FlateDecode"):
		zr, err := zlib.NewReader(bytes.NewReader(raw))
		if err != nil {
			return nil, false
		}
		// An xref stream has a few bytes per object: cap what we inflate.
		data, err = io.ReadAll(io.LimitReader(zr, 64<<20))
		if err != nil && len(data) == 0 {
			return nil, false
		}
	default:
		return nil, false
	}
	parms, _ := dict["DecodeParms"].(pdfDict)
	if parms == nil {
		if arr, ok := dict["DecodeParms"].(pdfArray); ok && len(arr) > 0 {
			parms, _ = arr[0].(pdfDict)
		}
	}
	if pred, _ := parms["Predictor"].(int64); pred >= 10 {
		cols, _ := parms["Columns"].(int64)
		if cols <= 0 || cols > maxColumns {
			return nil, false
		}
		row := int(cols) + 1
		out := make([]byte, 0, len(data))
		prev := make([]byte, cols)
		for len(data) >= row {
			if data[0] != 2 {
				return nil, false
			}
			for i := range prev {
				prev[i] += data[1+i]
			}
			out = append(out, prev...)
			data = data[row:]
		}
		data = out
	}
	return data, width > 0
}

func prevOffset(d pdfDict) int64 {
	if p, ok := d["Prev"].(int64); ok && p >= 0 {
		return p
	}
	return -1
}

// A minimal PDF object lexer, enough for xref sections and stream headers.
type (
	pdfName  string
	pdfDict  map[string]any
	pdfArray []any
	pdfRef   int64
)

type lexer struct {
	b   []byte
	pos int
}

func (lx *lexer) skipSpace() {
	for lx.pos < len(lx.b) {
		switch c := lx.b[lx.pos]; {
		case c == '%':
			for lx.pos < len(lx.b) && lx.b[lx.pos] != '\n' && lx.b[lx.pos] != '\r' {
				lx.pos++
			}
		case c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f' || c == 0:
			lx.pos++
		default:
			return
		}
	}
}

func isDelim(c byte) bool {
	return strings.IndexByte(" \t\r\n\f\x00()<>[]{}/%", c) >= 0
}

// word reads a run of regular characters.
func (lx *lexer) word() string {
	start := lx.pos
	for lx.pos < len(lx.b) && !isDelim(lx.b[lx.pos]) {
		lx.pos++
	}
	return string(lx.b[start:lx.pos])
}

// keyword consumes kw if it comes next.
func (lx *lexer) keyword(kw string) bool {
	lx.skipSpace()
	save := lx.pos
	if lx.word() == kw {
		return true
	}
	lx.pos = save
	return false
}

// value reads one object; nil means it could not.
func (lx *lexer) value(depth int) any {
	if depth > 32 {
		return nil
	}
	lx.skipSpace()
	if lx.pos >= len(lx.b) {
		return nil
	}
	switch c := lx.b[lx.pos]; c {
	case '/':
		lx.pos++
		return pdfName(lx.word())
	case '(':
		return lx.literal()
	case '[':
		lx.pos++
		var arr pdfArray
		for {
			lx.skipSpace()
			if lx.pos < len(lx.b) && lx.b[lx.pos] == ']' {
				lx.pos++
				return arr
			}
			v := lx.value(depth + 1)
			if v == nil {
				return nil
			}
			arr = append(arr, v)
		}
	case '<':
		if lx.pos+1 < len(lx.b) && lx.b[lx.pos+1] == '<' {
			lx.pos += 2
			d := pdfDict{}
			for {
				lx.skipSpace()
				if lx.pos+1 < len(lx.b) && lx.b[lx.pos] == '>' && lx.b[lx.pos+1] == '>' {
					lx.pos += 2
					return d
				}
				k, ok := lx.value(depth + 1).(pdfName)
				if !ok {
					return nil
				}
				v := lx.value(depth + 1)
				if v == nil {
					return nil
				}
				d[string(k)] = v
			}
		}
		end := bytes.IndexByte(lx.b[lx.pos:], '>')
		if end < 0 {
			return nil
		}
		lx.pos += end + 1
		return "hex"
	}
	w := lx.word()
	if w == "" {
		return nil
	}
	if n, err := strconv.ParseInt(w, 10, 64); err == nil {
		// "N G R" is a reference.
		save := lx.pos
		if _, err := strconv.ParseInt(lx.peekWord(), 10, 64); err == nil {
			lx.skipSpace()
			lx.word()
			if lx.keyword("R") {
				return pdfRef(n)
			}
		}
		lx.pos = save
		return n
	}
	if f, err := strconv.ParseFloat(w, 64); err == nil {
		return f
	}
	return pdfName("keyword:" + w)
}

func (lx *lexer) peekWord() string {
	save := lx.pos
	lx.skipSpace()
	w := lx.word()
	lx.pos = save
	return w
}

// literal skips a (string), with nesting and escapes.
func (lx *lexer) literal() any {
	depth := 0
	for lx.pos < len(lx.b) {
		switch lx.b[lx.pos] {
		case '\\':
			lx.pos++
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				lx.pos++
				return "string"
			}
		}
		lx.pos++
	}
	return nil
}

// objHeader consumes "N G obj".
func (lx *lexer) objHeader() bool {
	if _, ok := lx.value(0).(int64); !ok {
		return false
	}
	if _, ok := lx.value(0).(int64); !ok {
		return false
	}
	return lx.keyword("obj")
}

// streamObject reads "N G obj << dict >> stream ... " and returns the
// dictionary and, when /Length is a direct integer, the stream's bytes.
func (lx *lexer) streamObject() (pdfDict, []byte, bool) {
	if !lx.objHeader() {
		return nil, nil, false
	}
	dict, ok := lx.value(0).(pdfDict)
	if !ok {
		return nil, nil, false
	}
	if !lx.keyword("stream") {
		return dict, nil, true
	}
	if lx.pos < len(lx.b) && lx.b[lx.pos] == '\r' {
		lx.pos++
	}
	if lx.pos < len(lx.b) && lx.b[lx.pos] == '\n' {
		lx.pos++
	}
	n, ok := dict["Length"].(int64)
	if !ok || n < 0 || int64(lx.pos)+n > int64(len(lx.b)) {
		return dict, nil, false
	}
	return dict, lx.b[lx.pos : lx.pos+int(n)], true
}

// rawSize is the largest value after a /Size key in the header of the
// object b starts with (up to its "stream" keyword, at most 4 KB), read
// from the bytes alone; a value too long for int64 counts as the largest.
func rawSize(b []byte) (size int64, found bool) {
	b = b[:min(len(b), 4096)]
	if i := bytes.Index(b, []byte("stream")); i >= 0 {
		b = b[:i]
	}
	for {
		i := bytes.Index(b, []byte("/Size"))
		if i < 0 {
			return size, found
		}
		b = b[i+len("/Size"):]
		j := 0
		for j < len(b) && (b[j] == ' ' || b[j] == '\t' || b[j] == '\r' || b[j] == '\n') {
			j++
		}
		k := j
		for k < len(b) && b[k] >= '0' && b[k] <= '9' {
			k++
		}
		if k == j {
			continue
		}
		n, err := strconv.ParseInt(string(b[j:k]), 10, 64)
		if err != nil {
			n = math.MaxInt64
		}
		size, found = max(size, n), true
	}
}
