package loader

import (
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/docgraph/docgraph/loader/internal/glyphs"
)

// cmap is a parsed CMap: how a string of bytes splits into character
// codes, and what each code maps to, Unicode text (a ToUnicode CMap) or
// a CID (a Type 0 font's encoding CMap).
type cmap struct {
	space    [4][][2]uint32 // codespace ranges by code length - 1
	text     map[uint64]string
	ranges   []textRange // bfranges too large to expand into text
	cids     map[uint64]uint32
	cidRange []cidRange
	vertical bool   // WMode 1
	base     string // usecmap name, for encoding CMaps built on a predefined one
}

type textRange struct {
	n      int
	lo, hi uint32
	dst    string // first destination, UTF-8
}

type cidRange struct {
	n      int
	lo, hi uint32
	cid    uint32
}

// Limits on what one CMap may define: real ones stay far below.
const (
	maxCMapEntries = 1 << 17 // expanded codes kept in maps
	maxCMapRanges  = 1 << 14
)

func codeKey(n int, code uint32) uint64 { return uint64(n)<<32 | uint64(code) }

// parseCMap reads a CMap program.
func parseCMap(data []byte) *cmap {
	m := &cmap{text: map[uint64]string{}, cids: map[uint64]uint32{}}
	lx := psLexer{b: data}
	var stk []psObj
	entries := 0
	for {
		o, ok := lx.next()
		if !ok {
			break
		}
		if o.kind != psOp {
			if len(stk) < 3*maxCMapRanges {
				stk = append(stk, o)
			}
			continue
		}
		switch o.str {
		case "endcodespacerange":
			for i := 0; i+1 < len(stk); i += 2 {
				if !codeRange(stk[i], stk[i+1]) {
					continue
				}
				lo, hi := stk[i].str, stk[i+1].str
				m.space[len(lo)-1] = append(m.space[len(lo)-1], [2]uint32{beUint(lo), beUint(hi)})
			}
		case "endbfchar":
			for i := 0; i+1 < len(stk) && entries < maxCMapEntries; i += 2 {
				if !isCode(stk[i]) {
					continue
				}
				src := stk[i].str
				if dst, ok := m.destination(stk[i+1]); ok {
					m.text[codeKey(len(src), beUint(src))] = dst
					entries++
				}
			}
		case "endbfrange":
			for i := 0; i+2 < len(stk); i += 3 {
				if !codeRange(stk[i], stk[i+1]) {
					continue
				}
				lo, hi := stk[i].str, stk[i+1].str
				n, a, b := len(lo), beUint(lo), beUint(hi)
				if b < a {
					continue
				}
				dst := stk[i+2]
				if dst.kind == psArray {
					for k, d := range dst.arr {
						if a+uint32(k) > b || entries >= maxCMapEntries {
							break
						}
						if s, ok := m.destination(d); ok {
							m.text[codeKey(n, a+uint32(k))] = s
							entries++
						}
					}
					continue
				}
				first, ok := m.destination(dst)
				if !ok {
					continue
				}
				if int(b-a) < maxCMapEntries-entries {
					for c := a; ; c++ {
						m.text[codeKey(n, c)] = offsetText(first, c-a)
						entries++
						if c == b {
							break
						}
					}
				} else if len(m.ranges) < maxCMapRanges {
					m.ranges = append(m.ranges, textRange{n, a, b, first})
				}
			}
		case "endcidchar":
			for i := 0; i+1 < len(stk) && entries < maxCMapEntries; i += 2 {
				if !isCode(stk[i]) || stk[i+1].kind != psNum {
					continue
				}
				src := stk[i].str
				m.cids[codeKey(len(src), beUint(src))] = uint32(max(stk[i+1].num, 0))
				entries++
			}
		case "endcidrange":
			for i := 0; i+2 < len(stk); i += 3 {
				if !codeRange(stk[i], stk[i+1]) || stk[i+2].kind != psNum {
					continue
				}
				lo, hi := stk[i].str, stk[i+1].str
				if len(m.cidRange) < maxCMapRanges {
					m.cidRange = append(m.cidRange, cidRange{len(lo), beUint(lo), beUint(hi), uint32(max(stk[i+2].num, 0))})
				}
			}
		case "usecmap":
			if len(stk) > 0 && stk[len(stk)-1].kind == psName {
				m.base = stk[len(stk)-1].str
			}
		case "def":
			if len(stk) >= 2 && stk[len(stk)-2].kind == psName && stk[len(stk)-2].str == "WMode" && stk[len(stk)-1].num == 1 {
				m.vertical = true
			}
		}
		stk = stk[:0]
	}
	return m
}

// isCode reports whether o is a character code: a string of one to four bytes.
func isCode(o psObj) bool { return o.kind == psStr && len(o.str) >= 1 && len(o.str) <= 4 }

// codeRange reports whether lo and hi bound a range of codes: codes of one length.
func codeRange(lo, hi psObj) bool { return isCode(lo) && len(lo.str) == len(hi.str) }

// destination decodes a bfchar or bfrange destination: UTF-16BE bytes,
// or (rarely) a glyph name. A one-byte destination is taken as a Latin-1
// character, and an odd trailing byte is dropped (the pdf library indexed
// past it and gave up on the whole file).
func (m *cmap) destination(o psObj) (string, bool) {
	switch o.kind {
	case psName:
		return glyphs.Name(o.str)
	case psStr:
	default:
		return "", false
	}
	s := o.str
	if len(s) == 1 {
		return string(rune(s[0])), true
	}
	if len(s)%2 == 1 {
		s = s[:len(s)-1]
	}
	return utf16BE(s), true
}

// utf16BE decodes big-endian UTF-16 (an even number of bytes).
func utf16BE(s string) string {
	if len(s) == 2 && s[0] == 0 && s[1] < 0x80 {
		return asciiStrings[s[1]]
	}
	u := make([]uint16, len(s)/2)
	for i := range u {
		u[i] = uint16(s[2*i])<<8 | uint16(s[2*i+1])
	}
	return string(utf16.Decode(u))
}

// asciiStrings avoids allocating for the common one-character mappings.
var asciiStrings = func() (t [128]string) {
	for i := range t {
		t[i] = string(rune(i))
	}
	return t
}()

// offsetText is the destination of the code k places into a bfrange that
// starts at first: the last character is incremented by k.
func offsetText(first string, k uint32) string {
	if k == 0 {
		return first
	}
	r, size := utf8.DecodeLastRuneInString(first)
	if size == 0 {
		return first
	}
	return first[:len(first)-size] + string(r+rune(k))
}

func beUint(s string) uint32 {
	var v uint32
	for i := 0; i < len(s) && i < 4; i++ {
		v = v<<8 | uint32(s[i])
	}
	return v
}

// hasSpace reports whether the CMap declares any codespace range.
func (m *cmap) hasSpace() bool {
	for _, s := range m.space {
		if len(s) > 0 {
			return true
		}
	}
	return false
}

// nextCode splits the first code off s by the codespace ranges: the
// shortest prefix that lies in a range of its length. Bytes that fit no
// range are taken as a code of the shortest length declared (the spec's
// recovery), or of def bytes when none is.
func (m *cmap) nextCode(s string, def int) (code uint32, n int) {
	shortest := 0
	for n := 1; n <= 4 && n <= len(s); n++ {
		ranges := m.space[n-1]
		if len(ranges) == 0 {
			continue
		}
		if shortest == 0 {
			shortest = n
		}
		c := beUint(s[:n])
		for _, r := range ranges {
			if c >= r[0] && c <= r[1] && bytewiseIn(c, r, n) {
				return c, n
			}
		}
	}
	if shortest == 0 {
		shortest = def
	}
	n = min(shortest, len(s))
	return beUint(s[:n]), n
}

// bytewiseIn checks each byte of the code against the range's bytes, as
// codespace ranges are defined (a range <8140> <9FFC> does not contain 0x8200).
func bytewiseIn(c uint32, r [2]uint32, n int) bool {
	for i := 0; i < n; i++ {
		shift := uint(8 * (n - 1 - i))
		b, lo, hi := byte(c>>shift), byte(r[0]>>shift), byte(r[1]>>shift)
		if b < lo || b > hi {
			return false
		}
	}
	return true
}

// lookupText is the Unicode text the CMap gives a code.
func (m *cmap) lookupText(n int, code uint32) (string, bool) {
	if s, ok := m.text[codeKey(n, code)]; ok {
		return s, true
	}
	for _, r := range m.ranges {
		if r.n == n && code >= r.lo && code <= r.hi {
			return offsetText(r.dst, code-r.lo), true
		}
	}
	return "", false
}

// lookupCID is the CID the CMap gives a code.
func (m *cmap) lookupCID(n int, code uint32) (uint32, bool) {
	if c, ok := m.cids[codeKey(n, code)]; ok {
		return c, true
	}
	for _, r := range m.cidRange {
		if r.n == n && code >= r.lo && code <= r.hi {
			return r.cid + code - r.lo, true
		}
	}
	return 0, false
}

// predefinedUnicode reports whether a predefined CMap name maps codes
// straight to Unicode (UCS-2 or UTF-16).
func predefinedUnicode(name string) bool {
	return strings.HasPrefix(name, "Uni") && (strings.Contains(name, "-UCS2-") || strings.Contains(name, "-UTF16-"))
}
