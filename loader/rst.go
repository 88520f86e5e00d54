package loader

import (
	"regexp"
	"strings"
	"unicode"
)

// rst reads reStructuredText as text: section titles kept on their own
// lines (adornment lines dropped), directives and comments removed, code
// and literal blocks kept, roles and inline markup reduced to their text.
func (l *Loader) rst(data []byte) (*parsed, error) {
	text, warnings, err := decodeText(data, l.utf8)
	if err != nil {
		return nil, err
	}
	out, headings, title := rstText(text)
	return &parsed{text: out, headings: headings, title: title, warnings: warnings}, nil
}

// rstKeepBody are directives whose indented content is document text.
var rstKeepBody = set("code", "code-block", "sourcecode", "note", "warning", "tip", "important",
	"caution", "danger", "attention", "hint", "error", "admonition", "seealso", "topic",
	"sidebar", "rubric", "epigraph", "highlights", "pull-quote", "container", "table",
	"csv-table", "list-table", "versionadded", "versionchanged", "deprecated", "literalinclude-text",
	"parsed-literal", "line-block", "compound", "glossary", "centered", "hlist", "only", "math")

// rstArgNotText are kept directives whose argument is no text (a language, a condition).
var rstArgNotText = set("code", "code-block", "sourcecode", "only", "container", "highlight")

func rstText(text string) (string, []string, string) {
	lines := strings.Split(text, "\n")
	var out []string
	var headings []string
	title := ""
	skipIndent := -1 // dropping an indented block deeper than this
	for i := 0; i < len(lines); i++ {
		line := strings.TrimRight(lines[i], " \t")
		indent := len(line) - len(strings.TrimLeft(line, " \t"))
		if skipIndent >= 0 {
			if line == "" || indent > skipIndent {
				continue
			}
			skipIndent = -1
		}
		trimmed := strings.TrimSpace(line)
		// Section titles: text with an underline (and maybe overline) of one
		// punctuation character at least as long.
		if isRSTAdornment(trimmed) && i+2 < len(lines) && isRSTAdornment(strings.TrimSpace(lines[i+2])) && strings.TrimSpace(lines[i+1]) != "" {
			h := strings.TrimSpace(lines[i+1])
			out = append(out, "", rstInline(h), "")
			headings = append(headings, rstInline(h))
			i += 2
			continue
		}
		if trimmed != "" && indent == 0 && i+1 < len(lines) && isRSTAdornment(strings.TrimSpace(lines[i+1])) &&
			len(strings.TrimSpace(lines[i+1])) >= len([]rune(trimmed)) && !isRSTAdornment(trimmed) {
			out = append(out, "", rstInline(trimmed), "")
			headings = append(headings, rstInline(trimmed))
			i++
			continue
		}
		if isRSTAdornment(trimmed) && len(trimmed) >= 4 { // a transition
			out = append(out, "")
			continue
		}
		if rest, ok := strings.CutPrefix(trimmed, ".. "); ok || trimmed == ".." {
			switch {
			case strings.HasPrefix(rest, "_") || strings.HasPrefix(rest, "|"):
				// A hyperlink target or substitution definition.
				skipIndent = indent
			case strings.HasPrefix(rest, "["):
				// A footnote or citation: its text stays.
				if j := strings.Index(rest, "]"); j >= 0 {
					out = append(out, rstInline(strings.TrimSpace(rest[j+1:])))
				}
			case strings.Contains(rest, "::"):
				name, arg, _ := strings.Cut(rest, "::")
				name = strings.TrimSpace(name)
				if k := strings.LastIndexByte(name, ':'); k >= 0 { // "py:function"
					name = name[k+1:]
				}
				arg = strings.TrimSpace(arg)
				if name == "title" && title == "" {
					title = arg
				}
				if rstKeepBody[name] {
					if arg != "" && !rstArgNotText[name] {
						out = append(out, rstInline(arg))
					}
					// Options (":linenos:") then the body, kept as written.
					for i+1 < len(lines) {
						n := strings.TrimSpace(lines[i+1])
						if n != "" && strings.HasPrefix(n, ":") && indentOf(lines[i+1]) > indent {
							i++
							continue
						}
						break
					}
					continue
				}
				if name == "function" || name == "class" || name == "method" || name == "attribute" ||
					name == "data" || name == "option" || name == "envvar" || name == "describe" {
					// API description: the signature is text, the body follows.
					if arg != "" {
						out = append(out, arg)
					}
					continue
				}
				skipIndent = indent
			default:
				// A comment, with its indented continuation.
				skipIndent = indent
			}
			continue
		}
		if strings.HasSuffix(trimmed, "::") && trimmed != "::" {
			// "Paragraph::" introduces a literal block and reads as "Paragraph:".
			line = strings.TrimSuffix(line, ":")
			out = append(out, rstInline(line))
			for i+1 < len(lines) && (strings.TrimSpace(lines[i+1]) == "" || indentOf(lines[i+1]) > indent) {
				i++
				out = append(out, strings.TrimRight(lines[i], " \t"))
			}
			continue
		}
		if trimmed == "::" {
			continue
		}
		if isRSTTableBorder(trimmed) {
			continue
		}
		if strings.HasPrefix(trimmed, "|") && strings.HasSuffix(trimmed, "|") && len(trimmed) > 1 {
			// A grid table row: cells tab separated.
			cells := strings.Split(strings.Trim(trimmed, "|"), "|")
			for k := range cells {
				cells[k] = rstInline(strings.TrimSpace(cells[k]))
			}
			out = append(out, strings.Join(cells, "\t"))
			continue
		}
		out = append(out, rstInline(line))
	}
	return tidy(strings.Join(out, "\n")), headings, title
}

func indentOf(s string) int { return len(s) - len(strings.TrimLeft(s, " \t")) }

// isRSTAdornment: a line of one repeated punctuation character, 3 or more.
func isRSTAdornment(s string) bool {
	if len(s) < 3 {
		return false
	}
	c := rune(s[0])
	if !strings.ContainsRune("=-`:'\"~^_*+#<>.", c) {
		return false
	}
	for _, r := range s {
		if r != c {
			return false
		}
	}
	return true
}

// isRSTTableBorder: "+----+----+" or "==== ====" lines of tables.
func isRSTTableBorder(s string) bool {
	if len(s) < 3 {
		return false
	}
	return strings.Trim(s, "+-=: ") == "" && strings.ContainsAny(s, "+") || strings.Trim(s, "= ") == "" && strings.Contains(s, " ")
}

var (
	rstRole      = regexp.MustCompile("(?::[A-Za-z0-9_.+:-]+:)?`([^`]+)`(?::[A-Za-z0-9_.+:-]+:)?(?:__?)?")
	rstLiteral   = regexp.MustCompile("``([^`]+)``")
	rstStrong    = regexp.MustCompile(`\*\*([^*]+)\*\*`)
	rstEmphasis  = regexp.MustCompile(`(^|[\s(])\*([^*\s][^*]*)\*`)
	rstSubstRef  = regexp.MustCompile(`\|([^|\s][^|]*)\|_{0,2}`)
	rstFootRef   = regexp.MustCompile(`\s?\[(?:#?[A-Za-z0-9_-]*|\*)\]_`)
	rstLinkURL   = regexp.MustCompile(`^(.*?)\s*<[^<>]+>$`)
	rstRoleNoTxt = regexp.MustCompile(`^[~!]`)
)

// rstInline reduces inline markup to its text: “code“, `link <url>`_,
// :role:`text <target>`, **strong**, *emphasis*, |subst|, footnote refs.
func rstInline(s string) string {
	if !strings.ContainsAny(s, "`*|[_") {
		return s
	}
	s = rstLiteral.ReplaceAllString(s, "\x00$1\x00")
	s = rstRole.ReplaceAllStringFunc(s, func(m string) string {
		sub := rstRole.FindStringSubmatch(m)
		t := sub[1]
		if mm := rstLinkURL.FindStringSubmatch(t); mm != nil && mm[1] != "" {
			t = mm[1]
		}
		return rstRoleNoTxt.ReplaceAllString(t, "")
	})
	s = strings.ReplaceAll(s, "\x00", "")
	s = rstStrong.ReplaceAllString(s, "$1")
	s = rstEmphasis.ReplaceAllString(s, "$1$2")
	s = rstFootRef.ReplaceAllString(s, "")
	s = rstSubstRef.ReplaceAllString(s, "$1")
	return strings.TrimRightFunc(s, unicode.IsSpace)
}
