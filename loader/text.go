package loader

import (
	"bytes"
	"fmt"
	"html"
	"regexp"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

var (
	bomUTF8    = []byte{0xEF, 0xBB, 0xBF}
	bomUTF16LE = []byte{0xFF, 0xFE}
	bomUTF16BE = []byte{0xFE, 0xFF}
)

// binarySample is how much of a file the binary sniffing looks at.
const binarySample = 8 << 10

// decodeText turns the bytes of a .txt or .md file into normalised UTF-8 text:
// BOM stripped, UTF-16 (with a BOM) decoded, CRLF and lone CR turned into LF.
func decodeText(data []byte, policy UTF8Policy) (string, []Warning, error) {
	var warnings []Warning
	offset := 0 // bytes dropped from the front, so error offsets match the file
	switch {
	case bytes.HasPrefix(data, bomUTF8):
		data, offset = data[len(bomUTF8):], len(bomUTF8)
	case bytes.HasPrefix(data, bomUTF16LE), bytes.HasPrefix(data, bomUTF16BE):
		// Notepad's "Unicode" files; without this they would look binary (NUL bytes).
		var order string
		data, order = decodeUTF16(data)
		warnings = append(warnings, newWarning(WarnUTF16, 1, "decoded from %s", order))
	}
	if why := binaryReason(data); why != "" {
		return "", nil, fmt.Errorf("%w: %s", ErrBinary, why)
	}
	if !utf8.Valid(data) {
		var n, first int
		data, n, first = repairUTF8(data)
		if policy == Reject {
			return "", nil, fmt.Errorf("%w: %d bad %s, first at byte %d", ErrInvalidUTF8, n, plural(n, "byte", "bytes"), offset+first)
		}
		warnings = append(warnings, newWarning(WarnInvalidUTF8, n, "invalid UTF-8 repaired: %s %s replaced with U+FFFD", thousands(n), plural(n, "byte", "bytes")))
	}
	text := normaliseNewlines(string(data))
	if strings.TrimSpace(text) == "" {
		return "", nil, fmt.Errorf("%w: only whitespace", ErrEmpty)
	}
	return text, warnings, nil
}

// binaryReason says why data looks binary, or "" if it looks like text.
// Text never contains NUL; a few control characters (form feeds, ANSI
// colour escapes in logs) are normal, a tenth of the sample is not.
func binaryReason(data []byte) string {
	sample := data[:min(len(data), binarySample)]
	if i := bytes.IndexByte(sample, 0); i >= 0 {
		return fmt.Sprintf("NUL byte at offset %d", i)
	}
	controls := 0
	for _, b := range sample {
		if (b < 0x20 && b != '\t' && b != '\n' && b != '\r' && b != '\f' && b != '\v') || b == 0x7F {
			controls++
		}
	}
	if len(sample) > 0 && controls*10 > len(sample) {
		return fmt.Sprintf("%d of the first %d bytes are control characters", controls, len(sample))
	}
	return ""
}

// repairUTF8 replaces each invalid byte (not each invalid run, so the count
// in the warning is a byte count) with U+FFFD. It returns the repaired text,
// the number of bad bytes and the offset of the first one.
func repairUTF8(data []byte) (out []byte, bad, first int) {
	out = make([]byte, 0, len(data)+16)
	first = -1
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size == 1 {
			out = utf8.AppendRune(out, utf8.RuneError)
			if first < 0 {
				first = i
			}
			bad++
		} else {
			out = append(out, data[i:i+size]...)
		}
		i += size
	}
	return out, bad, first
}

func decodeUTF16(data []byte) ([]byte, string) {
	order := "UTF-16LE"
	hi, lo := 1, 0
	if bytes.HasPrefix(data, bomUTF16BE) {
		order, hi, lo = "UTF-16BE", 0, 1
	}
	data = data[2:]
	units := make([]uint16, 0, len(data)/2)
	for i := 0; i+1 < len(data); i += 2 {
		units = append(units, uint16(data[i+hi])<<8|uint16(data[i+lo]))
	}
	return []byte(string(utf16.Decode(units))), order
}

func normaliseNewlines(s string) string {
	if !strings.Contains(s, "\r") {
		return s
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.ReplaceAll(s, "\r", "\n")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// markdownTitle returns a Markdown file's title: its first level-1 heading
// (ATX "# Title", setext "Title\n=====", or an HTML <h1> as READMEs write
// their banner, whose image's alt text counts when it has no text) that is
// not generic, else its first heading when that is not generic, else front
// matter's title:. YAML front matter and fenced code, whose '#' lines are
// comments, are skipped. A README's "## Installation" or "## Features" is a
// section, not the document's name, so a later level-2 heading is no title
// (the file name, "axios README", is better).
func markdownTitle(text string) string {
	lines := strings.Split(text, "\n")
	frontTitle := ""
	start := 0
	if len(lines) > 0 && strings.TrimSpace(lines[0]) == "---" {
		for i := 1; i < len(lines); i++ {
			l := strings.TrimSpace(lines[i])
			if l == "---" || l == "..." {
				start = i + 1
				break
			}
			if v, ok := strings.CutPrefix(l, "title:"); ok && frontTitle == "" {
				frontTitle = strings.Trim(strings.TrimSpace(v), `"'`)
			}
		}
		if start == 0 { // unterminated: it was not front matter after all
			frontTitle = ""
		}
	}
	first, seen := "", false
	// heading weighs one heading; done when it is the title.
	heading := func(t string, level int) bool {
		if t == "" {
			return false
		}
		if level == 1 && !GenericTitle(t) {
			return true
		}
		if !seen {
			seen = true
			if !GenericTitle(t) {
				first = t
			}
		}
		return false
	}
	var fence string
	var para []string
	for i := start; i < len(lines); i++ {
		line := lines[i]
		trimmed := strings.TrimLeft(line, " ")
		indent := len(line) - len(trimmed)
		if fence != "" {
			if indent < 4 && strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		if indent < 4 && (strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")) {
			fence = trimmed[:3]
			para = nil
			continue
		}
		if indent < 4 {
			if t, level, ok := atxHeading(trimmed); ok {
				if t = markdownInline(t); heading(t, level) {
					return t
				}
				para = nil
				continue
			}
			if len(para) > 0 && isSetextUnderline(trimmed) {
				level := 1
				if strings.HasPrefix(trimmed, "-") {
					level = 2
				}
				if t := markdownInline(strings.Join(para, " ")); heading(t, level) {
					return t
				}
				para = nil
				continue
			}
			// (In an HTML block a heading may follow other tags directly.)
			if (len(para) == 0 || strings.HasPrefix(para[0], "<")) && len(trimmed) > 3 && strings.EqualFold(trimmed[:3], "<h1") && (trimmed[3] == '>' || trimmed[3] == ' ') {
				// An HTML heading, perhaps over several lines: up to </h1>
				// or a blank line, as an HTML block ends.
				block := trimmed
				for j := i + 1; j < len(lines) && j < i+20 && !strings.Contains(strings.ToLower(block), "</h1>"); j++ {
					if strings.TrimSpace(lines[j]) == "" {
						break
					}
					block += "\n" + lines[j]
					i = j
				}
				if heading(htmlHeadingText(block), 1) {
					return htmlHeadingText(block)
				}
				para = nil
				continue
			}
		}
		if strings.TrimSpace(line) == "" {
			para = nil
			continue
		}
		para = append(para, strings.TrimSpace(line))
	}
	if first != "" {
		return first
	}
	return frontTitle
}

var mdImgAlt = regexp.MustCompile(`(?i)<img\b[^>]*\balt\s*=\s*["']([^"']*)["']`)

// htmlHeadingText is the text of an HTML heading block, else its image's
// alt text (a logo standing for the name).
func htmlHeadingText(block string) string {
	lower := strings.ToLower(block)
	if i := strings.Index(lower, "</h1>"); i >= 0 {
		block = block[:i]
	}
	if t := titleLine(html.UnescapeString(markdownInline(mdTag.ReplaceAllString(block, " ")))); t != "" {
		return t
	}
	if m := mdImgAlt.FindStringSubmatch(block); m != nil {
		return titleLine(html.UnescapeString(m[1]))
	}
	return ""
}

// atxHeading parses "## Heading ##" (already left-trimmed) and its level.
func atxHeading(s string) (string, int, bool) {
	n := 0
	for n < len(s) && s[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || (n < len(s) && s[n] != ' ' && s[n] != '\t') {
		return "", 0, false
	}
	t := strings.TrimSpace(s[n:])
	// A closing run of '#' is decoration only when a space precedes it.
	if stripped := strings.TrimRight(t, "#"); stripped != t && (stripped == "" || strings.HasSuffix(stripped, " ") || strings.HasSuffix(stripped, "\t")) {
		t = strings.TrimSpace(stripped)
	}
	return t, n, true
}

func isSetextUnderline(s string) bool {
	s = strings.TrimRight(s, " \t")
	if s == "" {
		return false
	}
	return strings.Trim(s, "=") == "" || strings.Trim(s, "-") == ""
}
