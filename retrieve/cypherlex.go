package retrieve

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// cypherTokenKind says what a Cypher token is; the checker reasons about
// tokens, never about raw text, so nothing hides in a comment or a string.
type cypherTokenKind int

const (
	tokWord   cypherTokenKind = iota // keyword, variable, label, function name
	tokQuoted                        // `escaped identifier`
	tokString                        // 'string' or "string"
	tokNumber
	tokParam // $name
	tokPunct // one character of punctuation
)

type cypherToken struct {
	kind       cypherTokenKind
	text       string // the name (unescaped for quoted ones) or the punctuation
	start, end int    // byte offsets in the query
}

// upper is the token's text as a keyword, "" for anything that cannot be
// one: quoted names are never keywords to Neo4j.
func (t cypherToken) upper() string {
	if t.kind != tokWord {
		return ""
	}
	return strings.ToUpper(t.text)
}

func (t cypherToken) is(punct string) bool { return t.kind == tokPunct && t.text == punct }

// lineEnds are the characters that end a // comment. Neo4j ends one at \r
// as well as \n; ending it at every line separator Unicode has means a
// comment is never longer here than on the server, so code the server runs
// is always code the checker sees.
func lineEnd(r rune) bool {
	switch r {
	case '\n', '\r', '\v', '\f', 0x85, 0x2028, 0x2029:
		return true
	}
	return false
}

// cypherPunct is the punctuation read queries are written with. Anything
// else outside names, numbers, strings and comments is refused rather than
// guessed at: a character the server reads differently from the checker
// is how a check is talked past.
const cypherPunct = "()[]{},.:;|&!%*+-/<>=^"

// lexCypher splits a query into tokens the way Neo4j's lexer does for the
// read subset the checker accepts, and refuses what it cannot read.
func lexCypher(q string) ([]cypherToken, error) {
	if !utf8.ValidString(q) {
		return nil, fmt.Errorf("%w: not valid UTF-8", ErrUnsafeCypher)
	}
	var toks []cypherToken
	for i := 0; i < len(q); {
		r, size := utf8.DecodeRuneInString(q[i:])
		switch {
		case unicode.IsSpace(r) || lineEnd(r):
			i += size
		case strings.HasPrefix(q[i:], "//"):
			j := i + 2
			for j < len(q) {
				r, size := utf8.DecodeRuneInString(q[j:])
				if lineEnd(r) {
					break
				}
				j += size
			}
			i = j
		case strings.HasPrefix(q[i:], "/*"):
			end := strings.Index(q[i+2:], "*/")
			if end < 0 {
				return nil, fmt.Errorf("%w: unterminated comment", ErrUnsafeCypher)
			}
			i += 2 + end + 2
		case r == '\'' || r == '"':
			j := i + 1
			for ; j < len(q) && q[j] != byte(r); j++ {
				if q[j] == '\\' {
					j++ // the escaped character, whatever it is
				}
			}
			if j >= len(q) {
				return nil, fmt.Errorf("%w: unterminated %c", ErrUnsafeCypher, r)
			}
			toks = append(toks, cypherToken{kind: tokString, text: q[i+1 : j], start: i, end: j + 1})
			i = j + 1
		case r == '`':
			name, end, err := lexQuoted(q, i)
			if err != nil {
				return nil, err
			}
			toks = append(toks, cypherToken{kind: tokQuoted, text: name, start: i, end: end})
			i = end
		case r == '$':
			j := i + 1
			if j < len(q) && q[j] == '`' {
				_, end, err := lexQuoted(q, j)
				if err != nil {
					return nil, err
				}
				j = end
			} else {
				j = scanWord(q, j)
			}
			if j == i+1 {
				return nil, fmt.Errorf("%w: $ without a parameter name", ErrUnsafeCypher)
			}
			toks = append(toks, cypherToken{kind: tokParam, text: q[i:j], start: i, end: j})
			i = j
		case unicode.IsDigit(r):
			j := scanNumber(q, i)
			toks = append(toks, cypherToken{kind: tokNumber, text: q[i:j], start: i, end: j})
			i = j
		case unicode.IsLetter(r) || r == '_':
			j := scanWord(q, i)
			toks = append(toks, cypherToken{kind: tokWord, text: q[i:j], start: i, end: j})
			i = j
		case r < utf8.RuneSelf && strings.IndexByte(cypherPunct, byte(r)) >= 0:
			toks = append(toks, cypherToken{kind: tokPunct, text: q[i : i+1], start: i, end: i + 1})
			i++
		default:
			return nil, fmt.Errorf("%w: unexpected character %q", ErrUnsafeCypher, r)
		}
	}
	return toks, nil
}

// lexQuoted reads a backquoted name starting at q[i] == '`'; a doubled
// backquote stands for one.
func lexQuoted(q string, i int) (name string, end int, err error) {
	var b strings.Builder
	for j := i + 1; j < len(q); j++ {
		if q[j] != '`' {
			b.WriteByte(q[j])
			continue
		}
		if j+1 < len(q) && q[j+1] == '`' {
			b.WriteByte('`')
			j++
			continue
		}
		if b.Len() == 0 {
			return "", 0, fmt.Errorf("%w: empty backquoted name", ErrUnsafeCypher)
		}
		return b.String(), j + 1, nil
	}
	return "", 0, fmt.Errorf("%w: unterminated `", ErrUnsafeCypher)
}

func scanWord(q string, i int) int {
	for i < len(q) {
		r, size := utf8.DecodeRuneInString(q[i:])
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_') {
			break
		}
		i += size
	}
	return i
}

// scanNumber reads 12, 1.5, 1e3, 0x1F; "1..3" (a path length) stays two
// numbers around "..".
func scanNumber(q string, i int) int {
	for i < len(q) {
		c := q[i]
		switch {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_':
			i++
		case c == '.' && i+1 < len(q) && q[i+1] >= '0' && q[i+1] <= '9':
			i++
		default:
			return i
		}
	}
	return i
}
