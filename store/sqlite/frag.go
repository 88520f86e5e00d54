package sqlite

import (
	"encoding/binary"
	"strings"
)

// A mention's description fragment is most often a sentence of its own
// chunk (the offline extractor describes an entity by the sentence naming
// it, a relation by the words between its two names), so it is stored as
// a reference into the chunk's text: a sentence naming five entities is
// kept once, in the chunk, not five more times. Lines found nowhere in the
// chunk (a model's own words) are kept as text. The encoding is a sequence
// of lines (the description is the lines joined by "\n"), each
//
//	uvarint(len<<1 | 1), uvarint(offset)   a line at text[offset:offset+len]
//	uvarint(len<<1), len bytes             a line of its own
//
// and an empty description is stored as NULL.

// encodeFrag encodes desc against the text of the chunk it came from.
func encodeFrag(desc, text string) []byte {
	if desc == "" {
		return nil
	}
	var b []byte
	for line := range strings.SplitSeq(desc, "\n") {
		if off := strings.Index(text, line); off >= 0 && len(line) > 8 {
			b = binary.AppendUvarint(b, uint64(len(line))<<1|1)
			b = binary.AppendUvarint(b, uint64(off))
			continue
		}
		b = binary.AppendUvarint(b, uint64(len(line))<<1)
		b = append(b, line...)
	}
	return b
}

// decodeFrag is encodeFrag's inverse; a damaged encoding, or one pointing
// outside text, yields what could be read.
func decodeFrag(b []byte, text string) string {
	if len(b) == 0 {
		return ""
	}
	var sb strings.Builder
	first := true
	for len(b) > 0 {
		tag, n := binary.Uvarint(b)
		if n <= 0 {
			break
		}
		b = b[n:]
		l := int(tag >> 1)
		var line string
		if tag&1 == 1 {
			off, n := binary.Uvarint(b)
			if n <= 0 || off > uint64(len(text)) || l > len(text)-int(off) {
				break
			}
			b = b[n:]
			line = text[off : int(off)+l]
		} else {
			if l > len(b) {
				break
			}
			line, b = string(b[:l]), b[l:]
		}
		if !first {
			sb.WriteByte('\n')
		}
		first = false
		sb.WriteString(line)
	}
	return sb.String()
}
