package termtext

import (
	"bytes"
	"strings"
	"testing"
)

func TestEscapeText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain text\n\twith a tab\n", "plain text\n\twith a tab\n"},
		{"日本語 café — naïve", "日本語 café — naïve"},
		{"clear\x1b[2Jscreen", `clear\x1b[2Jscreen`},
		{"title \x1b]0;pwned\x07 set", `title \x1b]0;pwned\x07 set`},
		{"c1 csi \u009b31m", `c1 csi \x9b31m`},
		{"rlo \u202egnp.exe", `rlo \u202egnp.exe`},
		{"bad \xff byte", `bad \xff byte`},
		{"cut \xe6\x97", `cut \xe6\x97`},
		{"del\x7f nul\x00 bs\b", `del\x7f nul\x00 bs\x08`},
		{"dos\r\nline\r\n", "dos\r\nline\r\n"},
		{"over\rwrite", `over\rwrite`},
		{"end\r", `end\r`},
	}
	for _, tt := range tests {
		if got := EscapeText(tt.in); got != tt.want {
			t.Errorf("EscapeText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestTextWriterInPieces: however the text is cut into writes (an answer
// streamed token by token), the terminal gets what EscapeText makes of
// the whole: an escape sequence split between writes is escaped, a
// character or a CR LF split between writes is kept whole.
func TestTextWriterInPieces(t *testing.T) {
	texts := []string{
		"Alan\x1b[2J Turing\x1b]0;pwned\x07 日本語 naïve 🙂\r\n\tRLO\u202e C1\u009b end",
		"\xe6\x97\xa5\xff\xe6\x97",
		"a\r",
		"\r\r\n\n",
	}
	for _, text := range texts {
		want := EscapeText(text)
		for i := 0; i <= len(text); i++ {
			for j := i; j <= len(text); j++ {
				var out bytes.Buffer
				w := NewTextWriter(&out)
				for _, piece := range []string{text[:i], text[i:j], text[j:]} {
					if n, err := w.Write([]byte(piece)); n != len(piece) || err != nil {
						t.Fatalf("Write(%q) = %d, %v", piece, n, err)
					}
				}
				if err := w.Flush(); err != nil {
					t.Fatal(err)
				}
				if out.String() != want {
					t.Fatalf("%q cut at %d and %d: %q, want %q", text, i, j, out.String(), want)
				}
			}
		}
		var out bytes.Buffer
		w := NewTextWriter(&out)
		for i := range len(text) {
			w.Write([]byte{text[i]})
		}
		w.Flush()
		if out.String() != want {
			t.Errorf("%q a byte at a time: %q, want %q", text, out.String(), want)
		}
		if strings.ContainsAny(out.String(), "\x1b\x07\u202e\u009b") {
			t.Errorf("%q: a control got through: %q", text, out.String())
		}
	}
}
