// Package graphbuild merges per-chunk extractions into graph rows: normalised
// entity keys, stable ids, MENTIONED_IN provenance and merged descriptions.
package graphbuild

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/docgraph/docgraph/ner"
	"github.com/docgraph/docgraph/store"
)

// NormalizeKey folds case, whitespace, punctuation and Latin diacritics so
// that "Lothair II", "lothair  II" and "Lothair II." name the same entity.
func NormalizeKey(name string) string {
	if key, ok := asciiKey(name); ok {
		return key
	}
	return normalizeKey(name)
}

// normalizeKey is NormalizeKey of any name.
func normalizeKey(name string) string {
	var sb strings.Builder
	sb.Grow(len(name))
	space := false
	for _, r := range name {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if space && sb.Len() > 0 {
				sb.WriteByte(' ')
			}
			space = false
			r = unicode.ToLower(r)
			if f, ok := foldTable[r]; ok {
				sb.WriteString(f)
			} else {
				sb.WriteRune(r)
			}
		case r == '\'' || r == '’':
			// "Maurice's" and "Maurices" should not split into two words.
		default:
			space = true
		}
	}
	return sb.String()
}

// asciiKey is NormalizeKey of an ASCII name, where letters and digits are
// bytes, lower case is a bit and nothing folds; ok is false for any other
// name. A name that is its own key (most keys normalised again, most
// lower-case words) is returned as it is.
func asciiKey(name string) (string, bool) {
	own := true // name is its own key so far
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case c >= utf8.RuneSelf:
			return "", false
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case c == ' ' && i > 0 && i+1 < len(name) && name[i-1] != ' ':
			// One space between words stays as it is.
		default:
			own = false
		}
	}
	if own {
		return name, true
	}
	b := make([]byte, 0, len(name))
	space := false
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9', 'A' <= c && c <= 'Z':
			if space && len(b) > 0 {
				b = append(b, ' ')
			}
			space = false
			if c <= 'Z' && c >= 'A' {
				c += 'a' - 'A'
			}
			b = append(b, c)
		case c == '\'':
			// As in NormalizeKey: "Maurice's" is one word.
		default:
			space = true
		}
	}
	return string(b), true
}

// EntityID is the stable id of the entity a name refers to.
func EntityID(name string) string {
	return "e" + shortHash(NormalizeKey(name))
}

// RelationID is the stable id of a relation. Untyped relations are undirected
// (LightRAG's convention), so the pair is ordered; typed ones (KG imports) keep direction.
func RelationID(srcID, tgtID, typ string) string {
	if typ == "" && tgtID < srcID {
		srcID, tgtID = tgtID, srcID
	}
	return "r" + shortHash(srcID+"\x00"+tgtID+"\x00"+typ)
}

func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:8])
}

// ChunkExtraction is one chunk's extraction, as the builder consumes it.
type ChunkExtraction struct {
	ChunkID    string
	Extraction *ner.Extraction
	// Text is the chunk's text, where entity resolution reads acronym
	// definitions; without it, the entities' descriptions stand in.
	Text string
}

// Build turns a document's per-chunk extractions into mention rows: one
// EntityMention per (entity, chunk) and one RelationMention per (relation,
// chunk), with repeats inside a chunk merged. Entities named only by a
// relation are added so that every relation endpoint exists. Names the
// document uses as short forms of its other names are resolved first (see
// Resolve); their mention rows keep the short form as the name.
func Build(chunks []ChunkExtraction) ([]store.EntityMention, []store.RelationMention) {
	ents, rels, _ := BuildResolved(chunks)
	return ents, rels
}

// BuildResolved is Build, also returning the merges entity resolution made.
func BuildResolved(chunks []ChunkExtraction) ([]store.EntityMention, []store.RelationMention, []Merge) {
	return build(chunks, false)
}

// BuildReleasing is BuildResolved for a caller that needs the extractions
// no more: each chunk's Extraction is set to nil as soon as its rows are
// built, so a big document's extractions and rows are not all held at once.
func BuildReleasing(chunks []ChunkExtraction) ([]store.EntityMention, []store.RelationMention, []Merge) {
	return build(chunks, true)
}

func build(chunks []ChunkExtraction, release bool) ([]store.EntityMention, []store.RelationMention, []Merge) {
	keys := keyMemo{}
	merges := resolve(chunks, keys)
	fold := make(map[string]string, len(merges)) // short form key -> full name key
	for _, m := range merges {
		fold[keys.key(m.Short)] = keys.key(m.Full)
	}
	// Sized for the usual case (rows at most the records; endpoints named
	// only by a relation are rare) rather than grown by doubling, whose
	// slack is half again the rows of a big document.
	nEnts, nRels := 0, 0
	for _, c := range chunks {
		if c.Extraction != nil {
			nEnts += len(c.Extraction.Entities)
			nRels += len(c.Extraction.Relations)
		}
	}
	ents := make([]store.EntityMention, 0, nEnts)
	rels := make([]store.RelationMention, 0, nRels)
	// One string per id, shared by its rows, not one per row, and hashed
	// once per document.
	entityIDs := map[string]string{}      // by key
	relationIDs := map[[2]string]string{} // by endpoints
	entityID := func(key string) string {
		id, ok := entityIDs[key]
		if !ok {
			id = "e" + shortHash(key)
			entityIDs[key] = id
		}
		return id
	}
	for i, c := range chunks {
		if c.Extraction == nil {
			continue
		}
		if release {
			chunks[i].Extraction = nil
		}
		entIdx := map[string]int{}
		addEntity := func(name, typ, desc string) string {
			key := keys.key(name)
			if key == "" {
				return ""
			}
			if full, ok := fold[key]; ok {
				key = full
			}
			id := entityID(key)
			if i, ok := entIdx[id]; ok {
				m := &ents[i]
				if keys.key(m.Name) != key && keys.key(name) == key {
					m.Name = strings.TrimSpace(name) // the full name over a short form of it
				}
				m.Description = appendUnique(m.Description, desc)
				if m.Type == "" {
					m.Type = typ
				}
				return id
			}
			entIdx[id] = len(ents)
			ents = append(ents, store.EntityMention{
				EntityID: id, ChunkID: c.ChunkID, Name: strings.TrimSpace(name),
				Type: strings.ToLower(strings.TrimSpace(typ)), Description: strings.TrimSpace(desc),
			})
			return id
		}
		for _, e := range c.Extraction.Entities {
			addEntity(e.Name, e.Type, e.Description)
		}
		relIdx := map[string]int{}
		for _, r := range c.Extraction.Relations {
			src := addEntity(r.Source, "", "")
			tgt := addEntity(r.Target, "", "")
			if src == "" || tgt == "" || src == tgt {
				continue
			}
			id, ok := relationIDs[[2]string{src, tgt}]
			if !ok {
				id = RelationID(src, tgt, "")
				relationIDs[[2]string{src, tgt}] = id
			}
			w := r.Weight
			if w <= 0 {
				w = 1
			}
			if i, ok := relIdx[id]; ok {
				m := &rels[i]
				m.Weight += w
				m.Description = appendUnique(m.Description, r.Description)
				m.Keywords = mergeKeywords([]string{m.Keywords, r.Keywords}, maxKeywords)
				continue
			}
			if tgt < src {
				src, tgt = tgt, src
			}
			relIdx[id] = len(rels)
			rels = append(rels, store.RelationMention{
				RelationID: id, SourceID: src, TargetID: tgt, ChunkID: c.ChunkID,
				Keywords: keywordList(r.Keywords), Description: strings.TrimSpace(r.Description), Weight: w,
			})
		}
	}
	return ents, rels, merges
}

const maxKeywords = 12

// keyMemo holds the keys of the names of one document, which names the
// same entities over and over.
type keyMemo map[string]string

// key is NormalizeKey(name).
func (m keyMemo) key(name string) string {
	k, ok := m[name]
	if !ok {
		k = NormalizeKey(name)
		m[name] = k
	}
	return k
}

// appendUnique adds a description line unless it is already there.
func appendUnique(have, add string) string {
	add = strings.TrimSpace(add)
	if add == "" {
		return have
	}
	for rest, more := have, true; more; {
		var line string
		line, rest, more = strings.Cut(rest, "\n")
		if line == add {
			return have
		}
	}
	if have == "" {
		return add
	}
	return have + "\n" + add
}

// keywordList is mergeKeywords of one list; most lists the extractors
// write are one keyword or none, which need no splitting.
func keywordList(l string) string {
	if !strings.Contains(l, ",") {
		return strings.TrimSpace(l)
	}
	return mergeKeywords([]string{l}, maxKeywords)
}

// mergeKeywords unions comma-separated keyword lists, keeping first-seen order.
func mergeKeywords(lists []string, limit int) string {
	seen := map[string]bool{}
	var out []string
	for _, l := range lists {
		for _, k := range strings.Split(l, ",") {
			k = strings.TrimSpace(k)
			lk := strings.ToLower(k)
			if k == "" || seen[lk] {
				continue
			}
			seen[lk] = true
			out = append(out, k)
			if len(out) == limit {
				return strings.Join(out, ", ")
			}
		}
	}
	return strings.Join(out, ", ")
}
