package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/docgraph/docgraph/graphbuild"
	"github.com/docgraph/docgraph/store"
)

// What a store holds, read without changing it: the reports behind
// `ingest status`, `ingest show` and `ingest export`, and the deletes of
// `ingest delete`. The commands print them; these gather them.

// StoreURL is s's store, the default when it names none.
func StoreURL(s Settings) string {
	if s.Store == "" {
		return DefaultStore
	}
	return s.Store
}

// StatusReport is what a store holds: its documents by state, failures
// with reasons, and the embedder whose vectors it keeps (`ingest status
// --json`).
type StatusReport struct {
	Store      string         `json:"store"`
	Embedder   EmbedderReport `json:"embedder"`
	Documents  int            `json:"documents"`
	ByStatus   map[string]int `json:"by_status"`
	Chunks     int            `json:"chunks"`
	Entities   int            `json:"entities"`
	Relations  int            `json:"relations"`
	Mentions   int            `json:"mentions"`
	Failed     []DocReport    `json:"failed"`
	Unfinished []DocReport    `json:"unfinished"`
	// Warned lists the stored documents that carry warnings, with them.
	Warned []DocReport `json:"warned"`
	// Space is where the store's bytes go (when asked for).
	Space []store.Space `json:"space,omitempty"`
}

// EmbedderReport names the embedder a store's vectors come from (empty
// for an empty store).
type EmbedderReport struct {
	Name      string `json:"name"`
	Dimension int    `json:"dimension"`
}

// DocReport is one document of a StatusReport.
type DocReport struct {
	ID        string    `json:"id"`
	Path      string    `json:"path"`
	Status    string    `json:"status"`
	Error     string    `json:"error,omitempty"`
	UpdatedAt time.Time `json:"updated_at"`
	Warnings  []string  `json:"warnings,omitempty"`
}

// ErrNoSpaceReport is Status asked for space by a store that cannot say
// where its bytes go.
var ErrNoSpaceReport = errors.New("cannot say where its bytes go")

// Status reports what the existing store s names holds, opened read-only;
// with space it also says where the store's bytes go (which reads the
// whole database file).
func Status(ctx context.Context, s Settings, space bool) (*StatusReport, error) {
	st, err := OpenExistingStore(ctx, s, store.Options{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer st.Close()
	return StoreStatus(ctx, st, StoreURL(s), space)
}

// StoreStatus is Status of an open store; storeURL names it in the
// report (redacted).
func StoreStatus(ctx context.Context, st store.Store, storeURL string, space bool) (*StatusReport, error) {
	stats, err := st.Stats(ctx)
	if err != nil {
		return nil, err
	}
	docs, err := st.Documents(ctx)
	if err != nil {
		return nil, err
	}
	rep := &StatusReport{
		Store:     store.Redact(storeURL),
		Embedder:  EmbedderReport{Name: st.Embedder().Name, Dimension: st.Embedder().Dimension},
		Documents: stats.Documents,
		ByStatus:  map[string]int{},
		Chunks:    stats.Chunks, Entities: stats.Entities, Relations: stats.Relations, Mentions: stats.Mentions,
		Failed: []DocReport{}, Unfinished: []DocReport{}, Warned: []DocReport{},
	}
	for _, s := range []store.Status{store.StatusPending, store.StatusProcessing, store.StatusDone, store.StatusFailed, store.StatusDuplicate} {
		rep.ByStatus[string(s)] = stats.ByStatus[s]
	}
	for _, d := range docs {
		r := DocReport{ID: d.ID, Path: d.Path, Status: string(d.Status), Error: d.Error, UpdatedAt: d.UpdatedAt}
		switch d.Status {
		case store.StatusFailed:
			rep.Failed = append(rep.Failed, r)
		case store.StatusPending, store.StatusProcessing:
			rep.Unfinished = append(rep.Unfinished, r)
		}
		if len(d.Warnings) > 0 {
			r.Warnings = d.Warnings
			rep.Warned = append(rep.Warned, r)
		}
	}
	if space {
		sr, ok := st.(store.SpaceReporter)
		if !ok {
			return nil, fmt.Errorf("the store %s %w", rep.Store, ErrNoSpaceReport)
		}
		if rep.Space, err = sr.Space(ctx); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// StoredDocument is one document as the store holds it: its metadata,
// warnings, chunks, and its text rebuilt from them (`ingest show --json`).
type StoredDocument struct {
	ID          string        `json:"id"`
	Path        string        `json:"path"`
	Title       string        `json:"title"`
	Format      string        `json:"format"`
	Status      string        `json:"status"`
	Error       string        `json:"error,omitempty"`
	Size        int64         `json:"size"`
	ModTime     time.Time     `json:"mod_time"`
	UpdatedAt   time.Time     `json:"updated_at"`
	Fingerprint string        `json:"fingerprint"`
	Warnings    []string      `json:"warnings"`
	Chunks      []StoredChunk `json:"chunks"`
	Text        string        `json:"text"`
}

// StoredChunk is one chunk of a StoredDocument, with its byte range.
type StoredChunk struct {
	ID     string `json:"id"`
	Index  int    `json:"index"`
	Tokens int    `json:"tokens"`
	Start  int    `json:"start"`
	End    int    `json:"end"`
	Text   string `json:"text"`
}

// ShowDocument reads what the existing store s names holds for target, a
// document id or else a file path, opened read-only. The file itself is
// not opened.
func ShowDocument(ctx context.Context, s Settings, target string) (*StoredDocument, error) {
	st, err := OpenExistingStore(ctx, s, store.Options{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer st.Close()
	return ReadDocument(ctx, st, target)
}

// ReadDocument is ShowDocument of an open store.
func ReadDocument(ctx context.Context, st store.Reader, target string) (*StoredDocument, error) {
	d, err := findDocument(ctx, st, target)
	if err != nil {
		return nil, err
	}
	chunks, err := st.DocumentChunks(ctx, d.ID)
	if err != nil {
		return nil, err
	}
	warnings := d.Warnings
	if warnings == nil {
		warnings = []string{}
	}
	out := &StoredDocument{
		ID: d.ID, Path: d.Path, Title: d.Title, Format: d.Format, Status: string(d.Status), Error: d.Error,
		Size: d.Size, ModTime: d.ModTime, UpdatedAt: d.UpdatedAt, Fingerprint: d.Fingerprint,
		Warnings: warnings, Chunks: []StoredChunk{}, Text: RebuildText(chunks),
	}
	for _, c := range chunks {
		out.Chunks = append(out.Chunks, StoredChunk{ID: c.ID, Index: c.Index, Tokens: c.Tokens, Start: c.Start, End: c.End, Text: c.Text})
	}
	return out, nil
}

// findDocument resolves a document id, or else a file path (made absolute,
// as ingest stores paths).
func findDocument(ctx context.Context, st store.Reader, target string) (*store.Document, error) {
	if d, err := st.Document(ctx, target); err == nil {
		return d, nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	abs, err := filepath.Abs(target)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", target, err)
	}
	d, err := st.DocumentByPath(ctx, abs)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("nothing stored for %s (neither a document id nor an ingested path; `ingest status` lists them)", target)
	}
	return d, err
}

// RebuildText puts a document's text back together from its chunks, in
// offset order, which are exact byte ranges of it that overlap or leave
// gaps: the Segments joined.
func RebuildText(chunks []store.Chunk) string {
	return strings.Join(Segments(chunks), "")
}

// Segments is what each chunk, in offset order, adds to the text of the
// chunks before it: its overlap with them left out ("" for a chunk wholly
// inside them), and the gap before it put back. A gap is whitespace the
// splitter trimmed; it comes back as the same number of bytes, newlines
// when it is two or more (a paragraph break is the usual cause), a space
// otherwise, so every chunk's offsets still point at it.
func Segments(chunks []store.Chunk) []string {
	out := make([]string, len(chunks))
	end := 0
	for i, c := range chunks {
		if c.End <= end {
			continue
		}
		var gap string
		switch n := c.Start - end; {
		case n == 1:
			gap = " "
		case n > 1:
			gap = strings.Repeat("\n", n)
		}
		from := min(max(end, c.Start)-c.Start, len(c.Text))
		out[i] = gap + c.Text[from:]
		end = c.End
	}
	return out
}

// ExportFormats are the formats Export writes, by name.
var ExportFormats = map[string]func(context.Context, io.Writer, graphbuild.ExportSource, graphbuild.ExportOptions) (graphbuild.ExportCounts, error){
	"jsonl":   graphbuild.WriteJSONL,
	"graphml": graphbuild.WriteGraphML,
}

// Export writes the graph the existing store s names holds to w, in the
// format ExportFormats names (case-insensitive); with output set it
// writes that file instead, whole or not at all.
func Export(ctx context.Context, s Settings, format string, w io.Writer, output string, xopts graphbuild.ExportOptions) (graphbuild.ExportCounts, error) {
	write := ExportFormats[strings.ToLower(format)]
	if write == nil {
		return graphbuild.ExportCounts{}, fmt.Errorf("format %q: want jsonl or graphml", format)
	}
	st, err := OpenExistingStore(ctx, s, store.Options{ReadOnly: true})
	if err != nil {
		return graphbuild.ExportCounts{}, err
	}
	defer st.Close()
	src, ok := st.(graphbuild.ExportSource)
	if !ok {
		return graphbuild.ExportCounts{}, fmt.Errorf("store %s cannot be scanned whole, so it cannot be exported", store.Redact(StoreURL(s)))
	}
	if output == "" {
		return write(ctx, w, src, xopts)
	}
	// Write beside the target and rename, so a failed export never leaves a
	// truncated file where a good one was.
	tmp, err := os.CreateTemp(filepath.Dir(output), "."+filepath.Base(output)+".*")
	if err != nil {
		return graphbuild.ExportCounts{}, fmt.Errorf("export to %s: %w", output, err)
	}
	defer os.Remove(tmp.Name())
	n, err := write(ctx, tmp, src, xopts)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), output)
	}
	if err != nil {
		return n, fmt.Errorf("export to %s: %w", output, err)
	}
	return n, nil
}

// Delete removes the documents targets name from the existing store s
// names: each a document id, or else a path (a folder: everything under
// it). Deleting re-merges what a document shared, with the models s
// names; without embedderSet the store's own embedder is used. missing
// are the targets that matched nothing.
func Delete(ctx context.Context, s Settings, embedderSet bool, targets ...string) (deleted []FileResult, missing []string, err error) {
	spec, err := AdoptEmbedder(ctx, s, embedderSet)
	if err != nil {
		return nil, nil, err
	}
	s.Embedder = spec
	models, err := NewModels(ctx, s)
	if err != nil {
		return nil, nil, err
	}
	defer models.Close()
	emb := models.Embedder
	st, err := OpenExistingStore(ctx, s, store.Options{
		Embedder: store.EmbedderInfo{Name: emb.Name(), Dimension: emb.Dimension()},
		Merger:   models.Merger(),
	})
	if err != nil {
		return nil, nil, err
	}
	defer st.Close()
	return (&Pipeline{Store: st}).DeleteTargets(ctx, targets...)
}

// DeleteTargets removes the documents targets name from p's store: each
// a document id, or else a path (a folder: everything under it). missing
// are the targets that matched nothing.
func (p *Pipeline) DeleteTargets(ctx context.Context, targets ...string) (deleted []FileResult, missing []string, err error) {
	deleted = []FileResult{}
	for _, target := range targets {
		results, err := p.deleteTarget(ctx, target)
		if err != nil {
			return nil, nil, err
		}
		if len(results) == 0 {
			missing = append(missing, target)
		}
		deleted = append(deleted, results...)
	}
	return deleted, missing, nil
}

// deleteTarget removes the document with id target, or else the documents
// at the path target names (a folder: everything under it).
func (p *Pipeline) deleteTarget(ctx context.Context, target string) ([]FileResult, error) {
	if d, err := p.Store.Document(ctx, target); err == nil {
		r, err := p.DeleteDocument(ctx, *d)
		if err != nil {
			return nil, err
		}
		return []FileResult{r}, nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	abs, err := filepath.Abs(target)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", target, err)
	}
	return p.DeletePath(ctx, abs, true)
}
