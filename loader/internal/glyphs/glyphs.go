// Package glyphs maps PDF glyph names and the standard single-byte font encodings to Unicode,
// for fonts that say what their codes draw only by glyph name.
package glyphs

import (
	_ "embed"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// glyphlist.txt is the Adobe Glyph List 2.0 (Apache License 2.0, header
// kept in the file), as TeX Live ships it.
//
//go:embed glyphlist.txt
var glyphList string

var (
	aglOnce sync.Once
	agl     map[string]string
)

// overrides replaces AGL values that are compatibility or private-use code
// points with what a reader searching the text types, and adds names TeX
// fonts use that the AGL lacks.
var overrides = map[string]string{
	"Omega":           "Ω", // AGL: U+2126 OHM SIGN
	"Delta":           "Δ", // AGL: U+2206 INCREMENT
	"dotlessj":        "ȷ", // AGL: private use
	"compwordmark":    "",  // TeX's zero-width word boundary
	"visiblespace":    "␣",
	"cwm":             "",
	"nbspace":         " ",
	"sfthyphen":       "-",
	"softhyphen":      "-",
	"Germandbls":      "SS",
	"SS":              "SS",
	"ng":              "ŋ",
	"Ng":              "Ŋ",
	"perthousandzero": "0",
	// TeX math fonts (cmsy, cmmi, cmex, msam, msbm) use names the AGL lacks.
	"angbracketleft":  "⟨",
	"angbracketright": "⟩",
	"star":            "⋆",
	"prime":           "′",
	"floorleft":       "⌊",
	"floorright":      "⌋",
	"ceilingleft":     "⌈",
	"ceilingright":    "⌉",
	"epsilon1":        "ϵ",
	"bardbl":          "‖",
	"mapsto":          "↦",
	"diamondmath":     "⋄",
	"subsetsqequal":   "⊑",
	"supersetsqequal": "⊒",
	"lscript":         "ℓ",
	"lessmuch":        "≪",
	"greatermuch":     "≫",
	"summation":       "∑",
	"product":         "∏",
	"coproduct":       "∐",
	"contintegral":    "∮",
	"unionsq":         "⊔",
	"intersectionsq":  "⊓",
	"circledot":       "⊙",
	"circleplus":      "⊕",
	"circlemultiply":  "⊗",
	"logicaland":      "∧",
	"logicalor":       "∨",
	"radical":         "√",
	"turnstileleft":   "⊢",
	"turnstileright":  "⊣",
	"latticetop":      "⊤",
	"perpendicular":   "⊥",
	"similarequal":    "≃",
	"follows":         "≻",
	"precedes":        "≺",
	"followsequal":    "⪰",
	"precedesequal":   "⪯",
	"owner":           "∋",
	"negationslash":   "",
	"vextendsingle":   "",
	"vextenddouble":   "",
}

// texSizes are the suffixes TeX's extension font gives one symbol in
// several sizes: "parenleftbigg", "summationdisplay".
var texSizes = []string{"Bigg", "bigg", "Big", "big", "display", "text"}

func loadAGL() {
	agl = make(map[string]string, 4400)
	for line := range strings.SplitSeq(glyphList, "\n") {
		name, codes, ok := strings.Cut(strings.TrimSpace(line), ";")
		if !ok || strings.HasPrefix(name, "#") {
			continue
		}
		var b strings.Builder
		for _, c := range strings.Fields(codes) {
			r, err := strconv.ParseUint(c, 16, 32)
			if err != nil {
				b.Reset()
				break
			}
			b.WriteRune(rune(r))
		}
		if b.Len() > 0 {
			agl[name] = b.String()
		}
	}
	for k, v := range overrides {
		agl[k] = v
	}
}

// Name returns the Unicode text a glyph name stands for, following the
// AGL specification: a suffix after the first period is ignored
// ("a.sc"), underscores join components ("f_f_i"), and uniXXXX… and
// uXXXX[XX] spell code points. Small capitals ("Asmall") map to their
// lower-case letters rather than the AGL's private-use code points. ok is
// false for names that mean nothing in Unicode; the caller decides whether
// a name like "g41" is a code.
func Name(name string) (string, bool) {
	aglOnce.Do(loadAGL)
	if i := strings.IndexByte(name, '.'); i > 0 {
		name = name[:i]
	} else if i == 0 {
		return "", false // ".notdef" and friends
	}
	if s, ok := agl[name]; ok {
		return smallCaps(name, s), true
	}
	if strings.Contains(name, "_") {
		var b strings.Builder
		for part := range strings.SplitSeq(name, "_") {
			s, ok := component(part)
			if !ok {
				return "", false
			}
			b.WriteString(s)
		}
		return b.String(), b.Len() > 0
	}
	return component(name)
}

func component(name string) (string, bool) {
	if s, ok := agl[name]; ok {
		return smallCaps(name, s), true
	}
	if hex, ok := strings.CutPrefix(name, "uni"); ok && len(hex) >= 4 && len(hex)%4 == 0 {
		var b strings.Builder
		for i := 0; i < len(hex); i += 4 {
			v, err := strconv.ParseUint(hex[i:i+4], 16, 16)
			if err != nil || !isUpperHex(hex[i:i+4]) || (v >= 0xD800 && v <= 0xDFFF) {
				return "", false
			}
			b.WriteRune(rune(v))
		}
		return b.String(), true
	}
	if hex, ok := strings.CutPrefix(name, "u"); ok && len(hex) >= 4 && len(hex) <= 6 && isUpperHex(hex) {
		v, err := strconv.ParseUint(hex, 16, 32)
		if err == nil && utf8.ValidRune(rune(v)) {
			return string(rune(v)), true
		}
	}
	if base, ok := strings.CutSuffix(name, "small"); ok && base != "" {
		if s, ok := agl[base]; ok {
			return strings.ToLower(s), true
		}
	}
	for _, suffix := range texSizes {
		if base, ok := strings.CutSuffix(name, suffix); ok && base != "" {
			if s, ok := agl[base]; ok {
				return s, true
			}
		}
	}
	return "", false
}

// smallCaps lower-cases the AGL's private-use small capitals (U+F7xx).
func smallCaps(name, s string) string {
	r, _ := utf8.DecodeRuneInString(s)
	if r < 0xF700 || r > 0xF7FF {
		return s
	}
	if base, ok := strings.CutSuffix(name, "small"); ok {
		if b, ok := agl[base]; ok {
			return strings.ToLower(b)
		}
	}
	if r >= 0xF721 && r <= 0xF77E { // ASCII shapes in the Adobe private range
		return strings.ToLower(string(r - 0xF700))
	}
	return s
}

func isUpperHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// CodeName interprets names that some producers give glyphs in place of
// real ones: a letter or two followed by a decimal code ("a65", "g41",
// "cid65", "index65") or two hex digits ("G41", "2e"). It returns the
// character the number names when that is a printable ASCII or Latin-1
// character. Only fonts whose names are all of this kind should use it.
func CodeName(name string) (rune, bool) {
	i := 0
	for i < len(name) && i < 5 && (name[i] >= 'a' && name[i] <= 'z' || name[i] >= 'A' && name[i] <= 'Z') {
		i++
	}
	digits := name[i:]
	if len(digits) < 2 || len(digits) > 4 {
		return 0, false
	}
	v, err := strconv.ParseUint(digits, 10, 32)
	if err != nil {
		if i > 2 || len(digits) != 2 {
			return 0, false
		}
		if v, err = strconv.ParseUint(digits, 16, 8); err != nil {
			return 0, false
		}
	}
	r := rune(v)
	if r >= 0x20 && r < 0x7F || r >= 0xA0 && r <= 0xFF && unicode.IsPrint(r) {
		return r, true
	}
	return 0, false
}
