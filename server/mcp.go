package server

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/docgraph/docgraph/internal/termtext"
	"github.com/docgraph/docgraph/retrieve"
)

// bearer guards next with the token (none: open), compared in constant time.
func bearer(token string, next http.Handler) http.Handler {
	g := newTokenGuard(token)
	if g.open {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if g.allow(w, r) {
			next.ServeHTTP(w, r)
		}
	})
}

// The tools' inputs; their JSON schemas are inferred, then bounded in mcpSchema.
type searchInput struct {
	Question string `json:"question" jsonschema:"the question, in the user's words; names of people, places and works help most"`
	Mode     string `json:"mode,omitempty" jsonschema:"retrieval mode: mix (default: best for most questions, multi-hop included), naive (plain text and vector search), local (about specific named things), global (themes across documents), hybrid (local and global)"`
	TopK     int    `json:"top_k,omitempty" jsonschema:"passages to return (default 8)"`
}

type entityInput struct {
	Entity string `json:"entity" jsonschema:"entity id (from search results) or its name"`
	Limit  int    `json:"limit,omitempty" jsonschema:"most passages and relations to return (default 10)"`
}

type neighboursInput struct {
	Entity string `json:"entity" jsonschema:"entity id or name at the centre"`
	Hops   int    `json:"hops,omitempty" jsonschema:"1 (default): direct relations; 2: also the relations of those neighbours"`
	Limit  int    `json:"limit,omitempty" jsonschema:"most relations to return, heaviest first (default 30)"`
}

type chunkInput struct {
	ChunkID  string `json:"chunk_id,omitempty" jsonschema:"chunk id from search or get_entity results"`
	Document string `json:"document,omitempty" jsonschema:"instead of chunk_id: a document path (or id) ..."`
	Index    int    `json:"index,omitempty" jsonschema:"... and the chunk's index in it, from 0: read the passage before or after one you have"`
}

type documentsInput struct {
	Offset     int    `json:"offset,omitempty" jsonschema:"first document of the page (default 0)"`
	Limit      int    `json:"limit,omitempty" jsonschema:"documents per page (default 50)"`
	Status     string `json:"status,omitempty" jsonschema:"only documents in this state: done (searchable), failed, pending or processing"`
	PathPrefix string `json:"path_prefix,omitempty" jsonschema:"only documents whose path starts with this"`
}

// SearchPassage is a passage as the search tool returns it.
type SearchPassage struct {
	N        int     `json:"n" jsonschema:"rank, from 1"`
	ChunkID  string  `json:"chunk_id"`
	DocPath  string  `json:"doc_path" jsonschema:"the document to cite"`
	DocTitle string  `json:"doc_title"`
	Index    int     `json:"chunk_index" jsonschema:"position of the passage in its document, from 0"`
	Text     string  `json:"text"`
	Score    float64 `json:"score"`
}

// SearchEntity is an entity as the search tool returns it.
type SearchEntity struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Type        string `json:"type"`
	Description string `json:"description"`
}

// SearchRelation is a relation (or a fact) as the search tool returns it.
type SearchRelation struct {
	Source      string `json:"source"`
	Target      string `json:"target"`
	Keywords    string `json:"keywords"`
	Description string `json:"description"`
}

// SearchOutput is the search tool's result: the passages, entities and
// relations a retrieval found, cut down to what an agent reads.
type SearchOutput struct {
	Question  string           `json:"question"`
	Mode      string           `json:"mode"`
	Passages  []SearchPassage  `json:"passages"`
	Entities  []SearchEntity   `json:"entities"`
	Relations []SearchRelation `json:"relations" jsonschema:"relations around the entities, and facts found by similarity"`
}

// mcpSchema infers T's input schema and applies bounds the tags cannot say.
func mcpSchema[T any](bounds map[string]func(*jsonschema.Schema)) *jsonschema.Schema {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(err) // the input types are fixed: a failure is a programming error
	}
	for name, set := range bounds {
		set(s.Properties[name])
	}
	return s
}

func intRange(lo, hi float64) func(*jsonschema.Schema) {
	return func(s *jsonschema.Schema) { s.Minimum, s.Maximum = &lo, &hi }
}

func enum(values ...any) func(*jsonschema.Schema) {
	return func(s *jsonschema.Schema) { s.Enum = values }
}

func minLen(n int) func(*jsonschema.Schema) {
	return func(s *jsonschema.Schema) { s.MinLength = &n }
}

// NewMCPServer registers the read-only tools over e; every call is bounded
// by timeout, and at most maxConcurrent tool calls run at once (0: no
// bound): one more is answered at once with a JSON-RPC error (code -32000,
// server busy).
func NewMCPServer(e *Engine, timeout time.Duration, maxConcurrent int) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "docgraph", Title: "docgraph knowledge graph", Version: "1.0.0"}, &mcp.ServerOptions{
		Instructions: "docgraph holds a collection of documents as a knowledge graph (passages, entities, relations). " +
			"Call search first for any question about what the documents say; cite passages by doc_path. " +
			"Then get_entity, neighbours and get_chunk to dig deeper; list_documents to see what is indexed.",
	})
	modes := []any{}
	for _, m := range retrieve.Modes() {
		modes = append(modes, m)
	}
	addTool(srv, timeout, &mcp.Tool{
		Name: "search",
		Description: "Search the indexed documents for passages that answer a question. Use it first for any question " +
			"about the documents' contents. Returns the best passages (text, document path and chunk index, to cite and " +
			"to read around with get_chunk), the entities the question leads to and the relations between them.",
		InputSchema: mcpSchema[searchInput](map[string]func(*jsonschema.Schema){
			"question": minLen(1), "mode": enum(modes...), "top_k": intRange(1, 50),
		}),
	}, e.search, searchText)
	addTool(srv, timeout, &mcp.Tool{
		Name: "get_entity",
		Description: "Look up one entity (person, place, organisation, work, concept) by name or by id from search " +
			"results: its merged description, the passages that mention it (with document paths) and its relations. " +
			"Use it when a question centres on one named thing, or to check what the documents say about it.",
		InputSchema: mcpSchema[entityInput](map[string]func(*jsonschema.Schema){"entity": minLen(1), "limit": intRange(1, 200)}),
	}, func(ctx context.Context, in entityInput) (*EntityDetail, error) {
		return e.entityDetail(ctx, in.Entity, in.Limit)
	}, entityText)
	addTool(srv, timeout, &mcp.Tool{
		Name: "neighbours",
		Description: "The entities related to an entity within 1 or 2 hops, and the relations between them. Use it to " +
			"explore connections (who worked with whom, what belongs to what) or to find the bridge between two " +
			"entities in a multi-hop question.",
		InputSchema: mcpSchema[neighboursInput](map[string]func(*jsonschema.Schema){"entity": minLen(1), "hops": enum(1, 2), "limit": intRange(1, 500)}),
	}, func(ctx context.Context, in neighboursInput) (*GraphJSON, error) {
		return e.neighbourhood(ctx, in.Entity, in.Hops, cmp.Or(in.Limit, 30))
	}, graphText)
	addTool(srv, timeout, &mcp.Tool{
		Name: "get_chunk",
		Description: "Read one passage in full: by chunk_id (from search or get_entity), or by document path and chunk " +
			"index to read the passage before or after one you have. Returns its text, its document and the entities it mentions.",
		InputSchema: mcpSchema[chunkInput](map[string]func(*jsonschema.Schema){"index": intRange(0, 1<<30)}),
	}, func(ctx context.Context, in chunkInput) (*ChunkJSON, error) {
		return e.chunk(ctx, in.ChunkID, in.Document, in.Index)
	}, chunkText)
	addTool(srv, timeout, &mcp.Tool{
		Name: "list_documents",
		Description: "List the indexed documents (path, title, status, chunks), a page at a time. Use it to see what the " +
			"collection holds or to find a document's path; to answer questions, use search.",
		InputSchema: mcpSchema[documentsInput](map[string]func(*jsonschema.Schema){
			"offset": intRange(0, 1<<30), "limit": intRange(1, maxPage), "status": enum("", "done", "failed", "pending", "processing"),
		}),
	}, func(ctx context.Context, in documentsInput) (*DocPage, error) {
		return e.documents(ctx, docQuery{Offset: in.Offset, Limit: in.Limit, Status: in.Status, PathPrefix: in.PathPrefix})
	}, documentsText)
	if maxConcurrent > 0 {
		srv.AddReceivingMiddleware(limitToolCalls(maxConcurrent))
	}
	return srv
}

// limitToolCalls refuses a tool call while n are running. The SDK runs
// each request in a goroutine of its own, released to run beside the
// next before this middleware is reached, so over HTTP (a request per
// POST) nothing else bounds them. Over stdio the transport counts every
// request before the SDK reads it (NewStdioTransport), and this never
// refuses: a tool call leaves here before its response is written, which
// is when the transport's count drops.
func limitToolCalls(n int) mcp.Middleware {
	slots := make(chan struct{}, n)
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "tools/call" {
				return next(ctx, method, req) // answered without touching the store or a model
			}
			select {
			case slots <- struct{}{}:
				defer func() { <-slots }()
				return next(ctx, method, req)
			default:
				return nil, &jsonrpc.Error{Code: busyCode,
					Message: fmt.Sprintf("server busy: %d tool calls in flight, the most it takes (--max-concurrent); call again once one is answered", n)}
			}
		}
	}
}

// addTool registers a read-only tool: each call gets the deadline, and
// its result goes out both structured and as text for the model.
func addTool[In, Out any](srv *mcp.Server, timeout time.Duration, t *mcp.Tool, run func(context.Context, In) (Out, error), text func(Out) string) {
	t.Annotations = &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(bool)}
	mcp.AddTool(srv, t, func(ctx context.Context, _ *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		out, err := run(ctx, in)
		if err != nil {
			var zero Out
			return nil, zero, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text(out)}}}, out, nil
	})
}

// search is the search tool: a retrieval (and the server's answer, with
// a model) cut down to what an agent reads.
func (e *Engine) search(ctx context.Context, in searchInput) (*SearchOutput, error) {
	top := in.TopK
	if top == 0 {
		top = 8
	}
	reply, err := e.Query(ctx, &Request{Question: in.Question, Mode: in.Mode, TopK: &top, noAnswer: true}, nil)
	if err != nil {
		return nil, err
	}
	out := reply.JSON.(*Response)
	s := SearchOutput{Question: out.Question, Mode: out.Mode,
		Passages: []SearchPassage{}, Entities: []SearchEntity{}, Relations: []SearchRelation{}}
	for i, p := range out.Passages {
		s.Passages = append(s.Passages, SearchPassage{N: i + 1, ChunkID: p.ChunkID, DocPath: p.DocPath, DocTitle: p.DocTitle, Index: p.Index, Text: p.Text, Score: p.Score})
	}
	for _, x := range out.Entities {
		s.Entities = append(s.Entities, SearchEntity{ID: x.ID, Name: x.Name, Type: x.Type, Description: x.Description})
	}
	for _, r := range append(out.Relations[:len(out.Relations):len(out.Relations)], out.Facts...) {
		s.Relations = append(s.Relations, SearchRelation{Source: r.Source, Target: r.Target, Keywords: r.Keywords, Description: r.Description})
	}
	return &s, nil
}

// The texts below are what a model reads of each result (the structured
// content carries the same as JSON).

func searchText(s *SearchOutput) string {
	var b strings.Builder
	if len(s.Passages) == 0 {
		b.WriteString("No passages found.\n")
	}
	for _, p := range s.Passages {
		fmt.Fprintf(&b, "[%d] %s (chunk %d, id %s)\n%s\n\n", p.N, p.DocPath, p.Index, p.ChunkID, strings.TrimSpace(p.Text))
	}
	if len(s.Entities) > 0 {
		b.WriteString("Entities:\n")
		for _, x := range s.Entities {
			fmt.Fprintf(&b, "- %s (%s, id %s): %s\n", x.Name, x.Type, x.ID, termtext.Snippet(x.Description, 300))
		}
	}
	if len(s.Relations) > 0 {
		b.WriteString("Relations:\n")
		for _, r := range s.Relations {
			fmt.Fprintf(&b, "- %s -[%s]- %s: %s\n", r.Source, r.Keywords, r.Target, termtext.Snippet(r.Description, 300))
		}
	}
	return b.String()
}

func entityText(d *EntityDetail) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s, id %s), mentioned in %d passages\n%s\n", d.Name, d.Type, d.ID, d.Mentions, d.Description)
	if len(d.Passages) > 0 {
		b.WriteString("\nPassages:\n")
		for _, p := range d.Passages {
			fmt.Fprintf(&b, "- %s (chunk %d, id %s): %s\n", p.DocPath, p.Index, p.ChunkID, termtext.Snippet(p.Text, 400))
		}
	}
	if len(d.Relations) > 0 {
		b.WriteString("\nRelations:\n")
		for _, r := range d.Relations {
			fmt.Fprintf(&b, "- %s -[%s]- %s: %s\n", r.SourceName, relationLabel(r), r.TargetName, termtext.Snippet(r.Description, 200))
		}
	}
	return b.String()
}

func relationLabel(r RelationJSON) string {
	if r.Type != "" {
		return r.Type
	}
	return r.Keywords
}

func graphText(g *GraphJSON) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d entities, %d relations within %d hop(s) of %s", len(g.Nodes), len(g.Edges), g.Hops, g.Center)
	if g.Truncated {
		b.WriteString(" (cut at the limit)")
	}
	b.WriteString("\nEntities:\n")
	for _, n := range g.Nodes {
		fmt.Fprintf(&b, "- %s (%s, id %s, %d hop(s))\n", n.Name, n.Type, n.ID, n.Hops)
	}
	b.WriteString("Relations:\n")
	for _, r := range g.Edges {
		fmt.Fprintf(&b, "- %s -[%s]- %s (weight %.3g)\n", r.SourceName, relationLabel(r), r.TargetName, r.Weight)
	}
	return b.String()
}

func chunkText(c *ChunkJSON) string {
	var names []string
	for _, x := range c.Entities {
		names = append(names, x.Name)
	}
	return fmt.Sprintf("%s, chunk %d of %d (id %s)\n\n%s\n\nEntities: %s\n", c.DocPath, c.Index, c.DocChunks, c.ID,
		strings.TrimSpace(c.Text), strings.Join(names, ", "))
}

func documentsText(p *DocPage) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d documents; %d from offset %d:\n", p.Total, len(p.Documents), p.Offset)
	for _, d := range p.Documents {
		fmt.Fprintf(&b, "- %s (%q, %s, %d chunks)\n", d.Path, d.Title, d.Status, d.Chunks)
	}
	if p.NextOffset != nil {
		fmt.Fprintf(&b, "More: offset %d\n", *p.NextOffset)
	}
	return b.String()
}
