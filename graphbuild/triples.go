package graphbuild

import "strings"

// Triple is one subject|relation|object line of a KG file.
type Triple struct {
	Subject, Relation, Object string
	Line                      int // 1-based
}

// ParseTriple reads one KG line: subject|relation|object with non-empty
// fields (surrounding spaces trimmed), or, when the line has no "|", the
// same three fields separated by tabs. ok is false for anything else.
func ParseTriple(line string) (t Triple, ok bool) {
	sep := "|"
	if !strings.Contains(line, sep) {
		sep = "\t"
	}
	parts := strings.Split(line, sep)
	if len(parts) != 3 {
		return Triple{}, false
	}
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
		if parts[i] == "" {
			return Triple{}, false
		}
	}
	return Triple{Subject: parts[0], Relation: parts[1], Object: parts[2]}, true
}

// RelationWords spells a relation name as words: "directed_by" and
// "directedBy" become "directed by".
func RelationWords(rel string) string {
	var b strings.Builder
	prevLower := false
	for _, r := range rel {
		switch {
		case r == '_' || r == '-' || r == '.' || r == '/' || r == ' ':
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			prevLower = false
			continue
		case r >= 'A' && r <= 'Z' && prevLower:
			b.WriteByte(' ')
		}
		prevLower = r >= 'a' && r <= 'z'
		b.WriteRune(r)
	}
	return strings.ToLower(strings.Join(strings.Fields(b.String()), " "))
}
