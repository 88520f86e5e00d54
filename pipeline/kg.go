package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/docgraph/docgraph/graphbuild"
	"github.com/docgraph/docgraph/splitter"
	"github.com/docgraph/docgraph/store"
)

// KGFormat is the Document.Format of an imported triple file.
const KGFormat = "kg"

// kgLinesPerChunk is how many source lines one chunk of a triple file holds:
// chunks exist so every entity and relation has provenance (the lines it
// came from) through the normal store contract, and so deleting or
// re-importing the file works like any document. Small enough that a
// path's source chunk is a readable excerpt, large enough that MetaQA's
// 133k lines make a couple of thousand chunks.
const kgLinesPerChunk = 64

// maxKGWarnings bounds the malformed-line warnings one import reports.
const maxKGWarnings = 5

// KGFingerprint names the settings that shape an imported triple file's rows.
func KGFingerprint(p *Pipeline) string {
	emb := "none"
	if p.Embedder != nil {
		emb = fmt.Sprintf("%s/%d", p.Embedder.Name(), p.Embedder.Dimension())
	}
	return fmt.Sprintf("kg lines=%d emb=%s", kgLinesPerChunk, emb)
}

// ImportTriples loads a file of subject|relation|object lines as one
// document of format "kg": each line's subject and object become entities
// (merged by graphbuild.EntityID like extracted ones) and the line a typed
// relation that keeps its direction; chunks are blocks of the source lines,
// so paths can cite the lines they came from. An unchanged file is skipped,
// a changed one replaces its old version, and the document deletes like any
// other. Malformed lines are skipped and counted in Rejected, with the first
// few named in Warnings; a file with no valid line fails.
func (p *Pipeline) ImportTriples(ctx context.Context, path string) FileResult {
	start := time.Now()
	r := p.importTriples(ctx, path)
	r.Duration = time.Since(start)
	return r
}

func (p *Pipeline) importTriples(ctx context.Context, path string) FileResult {
	res := FileResult{Path: path}
	fail := func(err error) FileResult {
		res.Outcome, res.Error = Failed, err.Error()
		return res
	}
	if abs, err := filepath.Abs(path); err == nil {
		path, res.Path = abs, abs
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return fail(fmt.Errorf("kg %s: %w", path, err))
	}
	if !utf8.Valid(data) {
		return fail(fmt.Errorf("kg %s: not UTF-8 text", path))
	}
	info, err := os.Stat(path)
	if err != nil {
		return fail(fmt.Errorf("kg %s: %w", path, err))
	}
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	sum := sha256.Sum256([]byte(text))
	hash := hex.EncodeToString(sum[:])
	// The id differs from the one the same bytes get as a text document, so
	// importing a file that was also ingested as prose stores both.
	idSum := sha256.Sum256([]byte(KGFormat + "\x00" + text))
	docID := hex.EncodeToString(idSum[:])[:32]
	res.DocID = docID
	fingerprint := KGFingerprint(p)

	prev, err := p.Store.DocumentByPath(ctx, path)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return fail(fmt.Errorf("kg %s: read store: %w", path, err))
	}
	outcome, warning, err := p.settle(ctx, path, prev, docID, fingerprint, "triples")
	if err != nil {
		return fail(fmt.Errorf("kg %w", err))
	}
	if outcome != "" {
		res.Outcome = outcome
		if warning != "" {
			res.Warnings = append(res.Warnings, warning)
		}
		return res
	}

	w, rejected, warnings, err := p.buildTriples(ctx, text, store.Document{
		ID: docID, Path: path, Title: filepath.Base(path), Hash: hash, Format: KGFormat,
		Fingerprint: fingerprint, Status: store.StatusDone, Size: info.Size(), ModTime: info.ModTime(),
		UpdatedAt: time.Now().UTC(),
	})
	res.Rejected, res.Warnings = rejected, append(res.Warnings, warnings...)
	if err != nil {
		return fail(fmt.Errorf("kg %s: %w", path, err))
	}
	if prev != nil && prev.ID != docID {
		w.Replaces = append(w.Replaces, prev.ID)
	}
	if err := p.Store.WriteDocument(ctx, w); err != nil {
		return fail(fmt.Errorf("kg %s: write: %w", path, err))
	}
	res.Chunks, res.Entities, res.Relations = len(w.Chunks), len(w.Entities), len(w.Relations)
	res.Outcome = Added
	if prev != nil && prev.Status == store.StatusDone {
		res.Outcome = Updated
	}
	return res
}

// buildTriples turns a triple file's text into its document write.
func (p *Pipeline) buildTriples(ctx context.Context, text string, doc store.Document) (*store.DocumentWrite, int, []string, error) {
	w := &store.DocumentWrite{Document: doc}
	var warnings []string
	rejected := 0
	tok, _ := splitter.NewTokenizer("")

	// chunkID names the chunk being filled.
	chunkID := func() string { return fmt.Sprintf("%s:%04d", doc.ID, len(w.Chunks)) }
	type chunkState struct {
		id   string
		ents map[string]bool
		rels map[string]int // relation id -> index in w.Relations
	}
	var cur chunkState
	chunkStart, linesInChunk := 0, 0
	closeChunk := func(end int) {
		if end <= chunkStart {
			return
		}
		c := store.Chunk{
			ID: chunkID(), DocID: doc.ID, Index: len(w.Chunks),
			Text: text[chunkStart:end], Start: chunkStart, End: end,
		}
		if tok != nil {
			c.Tokens = tok.Count(c.Text)
		} else {
			c.Tokens = (len(c.Text) + 3) / 4
		}
		w.Chunks = append(w.Chunks, c)
		chunkStart, linesInChunk = end, 0
		cur = chunkState{}
	}

	lineNo := 0
	for off := 0; off < len(text); {
		if lineNo%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, rejected, warnings, err
			}
		}
		end := strings.IndexByte(text[off:], '\n')
		next := len(text)
		if end >= 0 {
			end += off
			next = end + 1
		} else {
			end = len(text)
		}
		line := text[off:end]
		lineNo++
		off = next
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		t, ok := graphbuild.ParseTriple(line)
		if !ok {
			rejected++
			if len(warnings) < maxKGWarnings {
				warnings = append(warnings, fmt.Sprintf("line %d: want subject|relation|object, got %q", lineNo, truncateRunes(line, 80)))
			}
			continue
		}
		src, tgt := graphbuild.EntityID(t.Subject), graphbuild.EntityID(t.Object)
		if graphbuild.NormalizeKey(t.Subject) == "" || graphbuild.NormalizeKey(t.Object) == "" {
			rejected++
			if len(warnings) < maxKGWarnings {
				warnings = append(warnings, fmt.Sprintf("line %d: an entity name without letters or digits", lineNo))
			}
			continue
		}
		if cur.ents == nil {
			cur = chunkState{id: chunkID(), ents: map[string]bool{}, rels: map[string]int{}}
		}
		cid := cur.id
		for _, e := range []struct{ id, name string }{{src, t.Subject}, {tgt, t.Object}} {
			if !cur.ents[e.id] {
				cur.ents[e.id] = true
				w.Entities = append(w.Entities, store.EntityMention{EntityID: e.id, ChunkID: cid, Name: e.name})
			}
		}
		rid := graphbuild.RelationID(src, tgt, t.Relation)
		if i, ok := cur.rels[rid]; ok {
			w.Relations[i].Weight++
		} else {
			cur.rels[rid] = len(w.Relations)
			words := graphbuild.RelationWords(t.Relation)
			w.Relations = append(w.Relations, store.RelationMention{
				RelationID: rid, SourceID: src, TargetID: tgt, Type: t.Relation, ChunkID: cid,
				Keywords: words, Description: t.Subject + " " + words + " " + t.Object, Weight: 1,
			})
		}
		linesInChunk++
		if linesInChunk == kgLinesPerChunk {
			closeChunk(off)
		}
	}
	closeChunk(len(text))
	if len(w.Relations) == 0 {
		return nil, rejected, warnings, fmt.Errorf("no subject|relation|object line among %d lines", lineNo)
	}
	if p.Embedder != nil {
		texts := make([]string, len(w.Chunks))
		for i, c := range w.Chunks {
			texts[i] = c.Text
		}
		vecs, err := p.embed(ctx, texts)
		if err != nil {
			return nil, rejected, warnings, fmt.Errorf("embed chunks: %w", err)
		}
		for i := range w.Chunks {
			w.Chunks[i].Embedding = vecs[i]
		}
	}
	w.Document.Chunks = len(w.Chunks)
	return w, rejected, warnings, nil
}

func truncateRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}

// ImportTriplesFiles imports each of paths (ImportTriples), one document
// each, handing every result to each (nil: none) as it is done; failed
// counts the imports that failed. Once ctx ends it stops after the file at
// hand, returning ctx's error.
func (p *Pipeline) ImportTriplesFiles(ctx context.Context, paths []string, each func(FileResult)) (results []FileResult, failed int, err error) {
	for _, path := range paths {
		r := p.ImportTriples(ctx, path)
		results = append(results, r)
		if r.Error != "" {
			failed++
		}
		if each != nil {
			each(r)
		}
		if err := ctx.Err(); err != nil {
			return results, failed, err
		}
	}
	return results, failed, nil
}
