package docgraph

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/docgraph/docgraph/graphbuild"
	"github.com/docgraph/docgraph/pipeline"
)

// StatusReport is what a store holds: documents by state, the failed and
// unfinished ones with reasons, the warnings, and the embedder whose
// vectors it keeps (what `ingest status --json` prints).
type StatusReport = pipeline.StatusReport

// StoredDocument is one document as the store holds it: metadata,
// warnings, chunks with their byte ranges, and the text rebuilt from them
// (what `ingest show --json` prints).
type StoredDocument = pipeline.StoredDocument

// Status reports what the store holds.
func (g *Graph) Status(ctx context.Context) (*StatusReport, error) {
	return pipeline.StoreStatus(ctx, g.st, pipeline.StoreURL(g.settings), false)
}

// Document is what the store holds for one document, named by its id or
// by the path of its file.
func (g *Graph) Document(ctx context.Context, idOrPath string) (*StoredDocument, error) {
	return pipeline.ReadDocument(ctx, g.st, idOrPath)
}

// Export writes the stored graph to w as "jsonl" (one JSON object a line:
// entities, relations, mentions) or "graphml" (for Gephi, yEd or
// NetworkX), as `ingest export` does.
func (g *Graph) Export(ctx context.Context, w io.Writer, format string) error {
	write := pipeline.ExportFormats[strings.ToLower(format)]
	if write == nil {
		return fmt.Errorf("docgraph: export: format %q: want jsonl or graphml", format)
	}
	src, ok := g.st.(graphbuild.ExportSource)
	if !ok {
		return fmt.Errorf("docgraph: export: this store cannot be scanned whole")
	}
	_, err := write(ctx, w, src, graphbuild.ExportOptions{Mentions: true})
	return err
}

// Delete removes documents, each named by its id or its file's path (a
// folder: every document under it), with their chunks and the entities
// and relations no other document mentions. The files are not touched.
// missing are the targets that matched nothing.
func (g *Graph) Delete(ctx context.Context, targets ...string) (deleted []FileResult, missing []string, err error) {
	return g.pipe.DeleteTargets(ctx, targets...)
}
