package termtext

import (
	"fmt"
	"io"
	"unicode/utf8"
)

// EscapeText makes s, text of many lines (a stored document, a model's
// answer), safe to print on a terminal: what Escape escapes is escaped
// the same way (ESC and every other control character, bidirectional
// overrides, invalid UTF-8) except the newlines and tabs that lay the text
// out, and CR LF line ends. Printable text in any script is kept as it is.
func EscapeText(s string) string {
	b := appendText(nil, []byte(s), true)
	return string(b)
}

// TextWriter escapes text as EscapeText does on its way to a terminal,
// for text written in pieces (an answer streamed token by token): a
// character or a CR LF split between two writes is seen whole, and an
// escape sequence split between writes is caught, since its ESC is
// escaped wherever it falls. Call Flush when the text ends, so that an
// unfinished character or a CR at the very end is written (escaped). Not
// safe for concurrent use.
type TextWriter struct {
	w       io.Writer
	pending []byte // an unfinished character or a CR, held for the next write
	buf     []byte
}

// NewTextWriter is a TextWriter writing to w.
func NewTextWriter(w io.Writer) *TextWriter { return &TextWriter{w: w} }

// Write escapes p and writes it on, holding back at most 3 bytes (the
// start of a character, or a CR) until the next Write or Flush. It
// reports p as written whole when the escaped text was.
func (t *TextWriter) Write(p []byte) (int, error) {
	in := p
	if len(t.pending) > 0 {
		in = append(t.pending, p...)
	}
	out := appendText(t.buf[:0], in, false)
	held := in[len(in)-heldBack(in):]
	t.pending = append(t.pending[:0:0], held...)
	t.buf = out[:0]
	if _, err := t.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes what Write held back, escaped: an unfinished character is
// invalid UTF-8 at the end of the text, a lone CR a control character.
func (t *TextWriter) Flush() error {
	if len(t.pending) == 0 {
		return nil
	}
	out := appendText(nil, t.pending, true)
	t.pending = t.pending[:0]
	_, err := t.w.Write(out)
	return err
}

// heldBack is how many bytes at the end of p appendText leaves for the
// next piece when p is not the end of the text: the start of a character
// whose other bytes may follow, or a CR whose LF may.
func heldBack(p []byte) int {
	if len(p) == 0 {
		return 0
	}
	if p[len(p)-1] == '\r' {
		return 1
	}
	// A character is at most 4 bytes: look at the last 3 for its start.
	for n := 1; n <= 3 && n <= len(p); n++ {
		c := p[len(p)-n]
		if c < utf8.RuneSelf {
			return 0 // ASCII: nothing started
		}
		if utf8.RuneStart(c) {
			if utf8.FullRune(p[len(p)-n:]) {
				return 0
			}
			return n
		}
	}
	return 0
}

// appendText appends p to dst escaped for a terminal. Unless final, the
// bytes heldBack counts are left out, for the caller to prepend to the
// next piece.
func appendText(dst, p []byte, final bool) []byte {
	end := len(p)
	if !final {
		end -= heldBack(p)
	}
	for i := 0; i < end; {
		r, n := utf8.DecodeRune(p[i:end])
		switch {
		case r == utf8.RuneError && n == 1:
			dst = fmt.Appendf(dst, `\x%02x`, p[i])
		case r == '\n', r == '\t':
			dst = append(dst, p[i])
		case r == '\r' && i+1 < len(p) && p[i+1] == '\n':
			dst = append(dst, '\r') // a CR LF line end; the LF follows
		case r == '\r':
			dst = append(dst, `\r`...)
		case unsafeRune(r):
			if r < 0x100 {
				dst = fmt.Appendf(dst, `\x%02x`, r)
			} else {
				dst = fmt.Appendf(dst, `\u%04x`, r)
			}
		default:
			dst = append(dst, p[i:i+n]...)
		}
		i += n
	}
	return dst
}
