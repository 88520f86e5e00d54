package loader

import (
	"bytes"
	"strconv"
)

// The content streams of pages and forms, CMaps and the clear-text part
// of Type 1 fonts share PostScript's token syntax. psLexer reads it from
// bytes already decoded, tolerating what real files contain: unknown
// escapes in strings, odd hex digits, stray delimiters. It never fails; a
// byte it cannot use is skipped and counted in bad.

// psKind is the type of a psObj.
type psKind uint8

const (
	psNull psKind = iota
	psBool
	psNum
	psStr  // str holds the decoded bytes
	psName // str holds the name without the slash, #xx decoded
	psArray
	psDict // arr holds keys and values alternately
	psOp   // str holds an operator or other bare keyword
)

type psObj struct {
	kind psKind
	num  float64
	str  string
	arr  []psObj
}

// key returns the value stored under name in a psDict, if any.
func (o psObj) key(name string) (psObj, bool) {
	if o.kind != psDict {
		return psObj{}, false
	}
	for i := 0; i+1 < len(o.arr); i += 2 {
		if o.arr[i].kind == psName && o.arr[i].str == name {
			return o.arr[i+1], true
		}
	}
	return psObj{}, false
}

// maxPSDepth bounds the nesting of arrays and dictionaries.
const maxPSDepth = 64

type psLexer struct {
	b   []byte
	pos int
	bad int // bytes or tokens skipped as unusable
}

func isPSSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f' || c == 0
}

func isPSDelim(c byte) bool {
	switch c {
	case '(', ')', '<', '>', '[', ']', '{', '}', '/', '%':
		return true
	}
	return false
}

func (lx *psLexer) skipSpace() {
	for lx.pos < len(lx.b) {
		c := lx.b[lx.pos]
		if isPSSpace(c) {
			lx.pos++
			continue
		}
		if c == '%' {
			for lx.pos < len(lx.b) && lx.b[lx.pos] != '\n' && lx.b[lx.pos] != '\r' {
				lx.pos++
			}
			continue
		}
		return
	}
}

// next reads one object or operator. ok is false at the end of the input.
func (lx *psLexer) next() (psObj, bool) {
	return lx.object(0)
}

func (lx *psLexer) object(depth int) (psObj, bool) {
	for {
		lx.skipSpace()
		if lx.pos >= len(lx.b) {
			return psObj{}, false
		}
		c := lx.b[lx.pos]
		switch c {
		case '/':
			lx.pos++
			return psObj{kind: psName, str: lx.name()}, true
		case '(':
			lx.pos++
			return psObj{kind: psStr, str: lx.literal()}, true
		case '<':
			if lx.pos+1 < len(lx.b) && lx.b[lx.pos+1] == '<' {
				lx.pos += 2
				return lx.container(depth, psDict, '>'), true
			}
			lx.pos++
			return psObj{kind: psStr, str: lx.hex()}, true
		case '[':
			lx.pos++
			return lx.container(depth, psArray, ']'), true
		case '{', '}':
			lx.pos++
			return psObj{kind: psOp, str: string(c)}, true
		case ']', ')', '>':
			// A closer with no opener: skip it.
			lx.pos++
			lx.bad++
			continue
		}
		start := lx.pos
		for lx.pos < len(lx.b) && !isPSSpace(lx.b[lx.pos]) && !isPSDelim(lx.b[lx.pos]) {
			lx.pos++
		}
		return bareWord(lx.b[start:lx.pos]), true
	}
}

// container reads array or dictionary elements up to the closer.
func (lx *psLexer) container(depth int, kind psKind, closer byte) psObj {
	o := psObj{kind: kind}
	if depth >= maxPSDepth {
		lx.bad++
		return o
	}
	for {
		lx.skipSpace()
		if lx.pos >= len(lx.b) {
			lx.bad++
			return o
		}
		if c := lx.b[lx.pos]; c == closer {
			lx.pos++
			if closer == '>' {
				if lx.pos < len(lx.b) && lx.b[lx.pos] == '>' {
					lx.pos++
				} else {
					lx.bad++
				}
			}
			return o
		}
		if c := lx.b[lx.pos]; c == ']' || c == '>' || c == '}' {
			// The other kind of closer: the container ends here, damaged.
			lx.bad++
			return o
		}
		v, ok := lx.object(depth + 1)
		if !ok {
			return o
		}
		o.arr = append(o.arr, v)
	}
}

// bareWord classifies a run of regular characters: number, boolean,
// null or operator.
func bareWord(w []byte) psObj {
	if len(w) > 0 && (w[0] >= '0' && w[0] <= '9' || w[0] == '-' || w[0] == '+' || w[0] == '.') {
		if n, ok := parseNumber(w); ok {
			return psObj{kind: psNum, num: n}
		}
	}
	switch string(w) {
	case "true":
		return psObj{kind: psBool, num: 1}
	case "false":
		return psObj{kind: psBool}
	case "null":
		return psObj{kind: psNull}
	}
	return psObj{kind: psOp, str: opName(w)}
}

// parseNumber reads integers and reals as PDF writes them, including the
// forms strconv rejects or misreads: "4.", "-.5", "--5", "1-2" (junk after
// a number is ignored, as Acrobat does).
func parseNumber(w []byte) (float64, bool) {
	// Fast path: plain integers, the common case in content streams.
	neg := false
	i := 0
	for i < len(w) && (w[i] == '-' || w[i] == '+') {
		neg = neg != (w[i] == '-')
		i++
	}
	var v float64
	digits := 0
	for i < len(w) && w[i] >= '0' && w[i] <= '9' {
		v = v*10 + float64(w[i]-'0')
		i++
		digits++
	}
	if i < len(w) && w[i] == '.' {
		i++
		scale := 0.1
		for i < len(w) && w[i] >= '0' && w[i] <= '9' {
			v += float64(w[i]-'0') * scale
			scale /= 10
			i++
			digits++
		}
	}
	if digits == 0 {
		return 0, false
	}
	if i < len(w) && (w[i] == 'e' || w[i] == 'E') {
		// Exponents appear in CMaps and fonts, never in PDF content.
		if f, err := strconv.ParseFloat(string(w), 64); err == nil {
			return f, true
		}
	}
	if neg {
		v = -v
	}
	return v, true
}

// opName returns the operator as a string, without allocating for the
// operators content streams are made of.
func opName(w []byte) string {
	switch string(w) {
	case "q":
		return "q"
	case "Q":
		return "Q"
	case "cm":
		return "cm"
	case "BT":
		return "BT"
	case "ET":
		return "ET"
	case "Tf":
		return "Tf"
	case "Tj":
		return "Tj"
	case "TJ":
		return "TJ"
	case "Td":
		return "Td"
	case "TD":
		return "TD"
	case "Tm":
		return "Tm"
	case "T*":
		return "T*"
	case "Tc":
		return "Tc"
	case "Tw":
		return "Tw"
	case "Tz":
		return "Tz"
	case "TL":
		return "TL"
	case "Ts":
		return "Ts"
	case "Tr":
		return "Tr"
	case "'":
		return "'"
	case "\"":
		return "\""
	case "Do":
		return "Do"
	case "BDC":
		return "BDC"
	case "BMC":
		return "BMC"
	case "EMC":
		return "EMC"
	case "re", "m", "l", "c", "v", "y", "h", "f", "F", "f*", "S", "s", "B", "B*", "b", "b*", "n", "W", "W*",
		"g", "G", "rg", "RG", "k", "K", "cs", "CS", "sc", "SC", "scn", "SCN", "w", "J", "j", "M", "d", "i", "ri", "gs", "sh":
		return "drawing" // all the same to text extraction
	}
	return string(w)
}

// name reads a name after its slash.
func (lx *psLexer) name() string {
	start := lx.pos
	hasHash := false
	for lx.pos < len(lx.b) && !isPSSpace(lx.b[lx.pos]) && !isPSDelim(lx.b[lx.pos]) {
		if lx.b[lx.pos] == '#' {
			hasHash = true
		}
		lx.pos++
	}
	raw := lx.b[start:lx.pos]
	if !hasHash {
		return string(raw)
	}
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); i++ {
		if raw[i] == '#' && i+2 < len(raw) && unhex(raw[i+1]) >= 0 && unhex(raw[i+2]) >= 0 {
			out = append(out, byte(unhex(raw[i+1])<<4|unhex(raw[i+2])))
			i += 2
			continue
		}
		out = append(out, raw[i])
	}
	return string(out)
}

// literal reads a (string) after its opening parenthesis. An escape the
// spec does not define stands for the character itself (the backslash is
// dropped), as PDF 32000-1 §7.3.4.2 says.
func (lx *psLexer) literal() string {
	var out []byte
	depth := 1
	for lx.pos < len(lx.b) {
		c := lx.b[lx.pos]
		lx.pos++
		switch c {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return string(out)
			}
		case '\r':
			// An end of line in a string is a \n whatever its bytes.
			if lx.pos < len(lx.b) && lx.b[lx.pos] == '\n' {
				lx.pos++
			}
			c = '\n'
		case '\\':
			if lx.pos >= len(lx.b) {
				return string(out)
			}
			e := lx.b[lx.pos]
			lx.pos++
			switch e {
			case 'n':
				c = '\n'
			case 'r':
				c = '\r'
			case 't':
				c = '\t'
			case 'b':
				c = '\b'
			case 'f':
				c = '\f'
			case '\r':
				if lx.pos < len(lx.b) && lx.b[lx.pos] == '\n' {
					lx.pos++
				}
				continue
			case '\n':
				continue
			case '0', '1', '2', '3', '4', '5', '6', '7':
				v := int(e - '0')
				for k := 0; k < 2 && lx.pos < len(lx.b) && lx.b[lx.pos] >= '0' && lx.b[lx.pos] <= '7'; k++ {
					v = v*8 + int(lx.b[lx.pos]-'0')
					lx.pos++
				}
				c = byte(v) // high-order overflow is ignored, per the spec
			default:
				c = e
			}
		}
		out = append(out, c)
	}
	lx.bad++
	return string(out)
}

// hex reads a <hex string> after its opening bracket; white space is
// ignored, an odd final digit is followed by an implicit 0, and a
// non-hex byte is skipped.
func (lx *psLexer) hex() string {
	out := make([]byte, 0, 8)
	hi := -1
	for lx.pos < len(lx.b) {
		c := lx.b[lx.pos]
		lx.pos++
		if c == '>' {
			break
		}
		v := unhex(c)
		if v < 0 {
			if !isPSSpace(c) {
				lx.bad++
			}
			continue
		}
		if hi < 0 {
			hi = v
		} else {
			out = append(out, byte(hi<<4|v))
			hi = -1
		}
	}
	if hi >= 0 {
		out = append(out, byte(hi<<4))
	}
	return string(out)
}

func unhex(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// skipInlineImage moves past the data of an inline image, whose "ID"
// operator has just been read, to just after its "EI". The data has no
// length, so EI is recognised as the keyword between white space (or the
// end) on both sides, as readers do.
func (lx *psLexer) skipInlineImage() {
	if lx.pos < len(lx.b) && isPSSpace(lx.b[lx.pos]) {
		lx.pos++
	}
	for {
		i := bytes.Index(lx.b[lx.pos:], []byte("EI"))
		if i < 0 {
			lx.pos = len(lx.b)
			return
		}
		at := lx.pos + i
		before := at == 0 || isPSSpace(lx.b[at-1])
		after := at+2 >= len(lx.b) || isPSSpace(lx.b[at+2]) || isPSDelim(lx.b[at+2])
		lx.pos = at + 2
		if before && after {
			return
		}
	}
}
