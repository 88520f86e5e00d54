package loader

import (
	"fmt"
	"strings"
	"testing"
)

// tokens lists what psLexer reads, one token a word: strings quoted,
// names with their slash, containers flattened with brackets.
func tokens(src string) string {
	lx := psLexer{b: []byte(src)}
	var out []string
	for {
		o, ok := lx.next()
		if !ok {
			break
		}
		out = append(out, show1(o))
	}
	return strings.Join(out, " ")
}

func show1(o psObj) string {
	switch o.kind {
	case psNum:
		return fmt.Sprint(o.num)
	case psStr:
		return fmt.Sprintf("%q", o.str)
	case psName:
		return "/" + o.str
	case psArray, psDict:
		var parts []string
		for _, e := range o.arr {
			parts = append(parts, show1(e))
		}
		if o.kind == psArray {
			return "[" + strings.Join(parts, " ") + "]"
		}
		return "<<" + strings.Join(parts, " ") + ">>"
	case psBool:
		return fmt.Sprint(o.num == 1)
	case psNull:
		return "null"
	}
	return o.str
}

func TestPSLexer(t *testing.T) {
	tests := []struct{ src, want string }{
		{`(a\)b\(c) (nest (ed)) (\101\7\0123)`, `"a)b(c" "nest (ed)" "A\a\n3"`},
		{`(\protect >) (line\
joined) (\q)`, `"protect >" "linejoined" "q"`},
		{`<48 65 6c6C 6> <>`, `"Hel` + "l`" + `" ""`},
		{`/A#20B /C /`, `/A B /C /`},
		{`4. -.5 --5 +3 1e2 0.5.5`, `4 -0.5 5 3 100 0.5`},
		{`<</Span <</ActualText (\protect >) /K [1 (\050) <</C 2>>]>>>> BDC`, `<</Span <</ActualText "protect >" /K [1 "(" <</C 2>>]>>>> BDC`},
		{`] ) > Tj % comment (x)
true false null`, `Tj true false null`},
		{`[1 2 >> 3`, `[1 2] 3`},
	}
	for _, tc := range tests {
		if got := tokens(tc.src); got != tc.want {
			t.Errorf("tokens(%q)\n got %s\nwant %s", tc.src, got, tc.want)
		}
	}
}

func TestParseCMap(t *testing.T) {
	m := parseCMap([]byte(`begincmap
2 begincodespacerange <00> <80> <8140> <9FFC> endcodespacerange
3 beginbfchar <01> <00660069> <02> /f_f_l <03> <004100> endbfchar
2 beginbfrange <20> <22> <0041> <8140> <8142> [<0031> <0032> <0033>] endbfrange
1 begincidrange <8140> <817E> 633 endcidrange
endcmap`))
	for _, c := range []struct {
		n    int
		code uint32
		want string
	}{{1, 1, "fi"}, {1, 2, "ffl"}, {1, 3, "A"}, {1, 0x21, "B"}, {2, 0x8142, "3"}} {
		if got, ok := m.lookupText(c.n, c.code); !ok || got != c.want {
			t.Errorf("code %d/%#x: %q, %v; want %q", c.n, c.code, got, ok, c.want)
		}
	}
	if cid, ok := m.lookupCID(2, 0x8141); !ok || cid != 634 {
		t.Errorf("cid = %d, %v", cid, ok)
	}
	// Codes split by the codespace: one byte below 0x81, two from 0x8140.
	s := "\x41\x81\x40\x42"
	var got []uint32
	for len(s) > 0 {
		code, n := m.nextCode(s, 2)
		got = append(got, code)
		s = s[n:]
	}
	if fmt.Sprint(got) != fmt.Sprint([]uint32{0x41, 0x8140, 0x42}) {
		t.Errorf("codes = %x", got)
	}
}
