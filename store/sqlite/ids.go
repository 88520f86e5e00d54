package sqlite

import (
	"strconv"
)

// Entities and relations are keyed by integers. Their ids are "e" or "r"
// and 16 hex digits (64 bits of a hash: graphbuild.EntityID and
// RelationID, as the store contract says), and those 64 bits are the row's
// key, with the top bit flipped so that integer order is the ids' string
// order. A key costs 8 bytes where the id's text cost 17, in every row and
// index that names an entity or relation.

// canonicalID parses an id of the form prefix + 16 lowercase hex digits.
func canonicalID(id string, prefix byte) (int64, bool) {
	if len(id) != 17 || id[0] != prefix {
		return 0, false
	}
	var u uint64
	for i := 1; i < 17; i++ {
		c := id[i]
		switch {
		case c >= '0' && c <= '9':
			u = u<<4 | uint64(c-'0')
		case c >= 'a' && c <= 'f':
			u = u<<4 | uint64(c-'a'+10)
		default:
			return 0, false
		}
	}
	return int64(u ^ 1<<63), true
}

// formatID is canonicalID's inverse.
func formatID(n int64, prefix byte) string {
	u := uint64(n) ^ 1<<63
	const hexDigits = "0123456789abcdef"
	var b [17]byte
	b[0] = prefix
	for i := 16; i >= 1; i-- {
		b[i] = hexDigits[u&0xf]
		u >>= 4
	}
	return string(b[:])
}

func entityName(n int64) string   { return formatID(n, 'e') }
func relationName(n int64) string { return formatID(n, 'r') }

// keysOf parses ids into keys, skipping those that cannot name a row.
func keysOf(ids []string, prefix byte) []int64 {
	out := make([]int64, 0, len(ids))
	seen := make(map[int64]bool, len(ids))
	for _, id := range ids {
		if n, ok := canonicalID(id, prefix); ok && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// intList renders integer keys as one JSON parameter for json_each.
func intList(ns []int64) string {
	b := make([]byte, 0, 2+len(ns)*20)
	b = append(b, '[')
	for i, n := range ns {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, n, 10)
	}
	return string(append(b, ']'))
}
