package loader

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// WarningKind names a kind of problem that loading repaired or worked
// around instead of failing. The values are stable: store and filter by them.
type WarningKind string

const (
	// WarnPagesSkipped: pages whose content could not be read at all;
	// Count is the number of pages.
	WarnPagesSkipped WarningKind = "pages-skipped"
	// WarnUnmappedGlyphs: glyphs whose font gives no Unicode meaning
	// (no ToUnicode map, no usable encoding), dropped from the text;
	// Count is the number of glyphs. The message names the fonts.
	WarnUnmappedGlyphs WarningKind = "unmapped-glyphs"
	// WarnTextLoss: text recovered with loss: content streams cut short or
	// partly unreadable, forms nested in a loop, a page over the work
	// limit; Count is the number of pages affected.
	WarnTextLoss WarningKind = "text-loss"
	// WarnEncrypted: a PDF encrypted with an empty user password, opened
	// and decrypted. Count is 1.
	WarnEncrypted WarningKind = "encrypted"
	// WarnInvalidUTF8: bytes of a text file that were not UTF-8, replaced
	// with U+FFFD; Count is the number of bytes.
	WarnInvalidUTF8 WarningKind = "invalid-utf8"
	// WarnUTF16: a text file decoded from UTF-16 (by its byte order mark).
	// Count is 1.
	WarnUTF16 WarningKind = "utf16"
	// WarnInputSkipped: a LaTeX \input or \include left out (missing, outside
	// the file's folder, including itself, nested too deep).
	WarnInputSkipped WarningKind = "input-skipped"
)

// Warning is one kind of problem met while loading a document, counted.
// Message is a single line for people, at most MaxWarningLen bytes, that
// never quotes file content beyond short names.
type Warning struct {
	Kind    WarningKind `json:"kind"`
	Count   int         `json:"count"`
	Message string      `json:"message"`
}

func (w Warning) String() string { return w.Message }

// MaxWarningLen bounds a warning message.
const MaxWarningLen = 200

// newWarning makes a Warning with its message cleaned to one line.
func newWarning(kind WarningKind, count int, format string, args ...any) Warning {
	return Warning{Kind: kind, Count: count, Message: oneLine(fmt.Sprintf(format, args...), MaxWarningLen)}
}

// oneLine makes s safe to print on one line: valid UTF-8, control
// characters as spaces, runs of space collapsed, cut to at most n bytes at
// a rune boundary with an ellipsis.
func oneLine(s string, n int) string {
	s = printable(s)
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strings.TrimSpace(s[:cut]) + "…"
}

// printable is s as valid UTF-8 without control characters, its runs of
// white space collapsed to single spaces.
func printable(s string) string {
	s = strings.ToValidUTF8(s, "")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '\uFFFD' {
			return ' '
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), " ")
}

// messages is the Message of each warning, for Document.Warnings.
func messages(ws []Warning) []string {
	if len(ws) == 0 {
		return nil
	}
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.Message
	}
	return out
}

// thousands formats n with thousands separators: 52,311.
func thousands(n int) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + thousands(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
