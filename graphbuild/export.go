package graphbuild

import (
	"bufio"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/docgraph/docgraph/store"
)

// ExportSource is what an export reads: the whole graph by scans, the
// descriptions the scans leave out by id, and the documents the mentions
// point into. Both built-in stores implement it.
type ExportSource interface {
	store.KGScanner
	store.GraphScanner
	Entities(ctx context.Context, ids []string) ([]store.Entity, error)
	Relations(ctx context.Context, ids []string) ([]store.Relation, error)
	Documents(ctx context.Context) ([]store.Document, error)
}

// ExportOptions choose what an export holds.
type ExportOptions struct {
	// Mentions adds the MENTIONED_IN edges (entity to chunk) with the
	// chunk's document.
	Mentions bool
}

// ExportCounts says how much an export wrote.
type ExportCounts struct {
	Entities  int `json:"entities"`
	Relations int `json:"relations"`
	Mentions  int `json:"mentions"`
}

// ExportEntity is one line of kind "entity" in a JSON Lines export.
type ExportEntity struct {
	Kind        string `json:"kind"`
	ID          string `json:"id"`
	Name        string `json:"name"`
	Type        string `json:"type"`
	Description string `json:"description"`
	Mentions    int    `json:"mentions"`
}

// ExportRelation is one line of kind "relation". Type is empty for
// extracted relations, which are undirected; typed ones (KG imports) point
// from source to target.
type ExportRelation struct {
	Kind        string  `json:"kind"`
	ID          string  `json:"id"`
	SourceID    string  `json:"source_id"`
	TargetID    string  `json:"target_id"`
	Type        string  `json:"type"`
	Keywords    string  `json:"keywords"`
	Description string  `json:"description"`
	Weight      float64 `json:"weight"`
}

// ExportMention is one line of kind "mention": an entity extracted from a chunk.
type ExportMention struct {
	Kind     string `json:"kind"`
	EntityID string `json:"entity_id"`
	ChunkID  string `json:"chunk_id"`
	DocID    string `json:"doc_id"`
	DocPath  string `json:"doc_path"`
}

// exported is the whole graph read for an export, in id order so that two
// stores holding the same documents export the same bytes.
type exported struct {
	entities  []store.Entity
	relations []store.Relation
	mentions  []store.Mention
	paths     map[string]string // document id -> path
}

// lookupBatch bounds the ids of one description lookup.
const lookupBatch = 500

func readExport(ctx context.Context, src ExportSource, opts ExportOptions) (*exported, error) {
	x := &exported{paths: map[string]string{}}
	var err error
	if x.entities, err = scanInFull(ctx, src.ScanEntities, src.Entities, func(e store.Entity) string { return e.ID }); err != nil {
		return nil, fmt.Errorf("export: entities: %w", err)
	}
	if x.relations, err = scanInFull(ctx, src.ScanRelations, src.Relations, func(r store.Relation) string { return r.ID }); err != nil {
		return nil, fmt.Errorf("export: relations: %w", err)
	}
	if !opts.Mentions {
		return x, nil
	}
	docs, err := src.Documents(ctx)
	if err != nil {
		return nil, fmt.Errorf("export: documents: %w", err)
	}
	for _, d := range docs {
		x.paths[d.ID] = d.Path
	}
	if err := src.ScanMentions(ctx, func(m store.Mention) error {
		x.mentions = append(x.mentions, m)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	slices.SortFunc(x.mentions, func(a, b store.Mention) int {
		if c := strings.Compare(a.EntityID, b.EntityID); c != 0 {
			return c
		}
		return strings.Compare(a.ChunkID, b.ChunkID)
	})
	return x, nil
}

// scanInFull reads every record a scan yields in full (scans leave the
// descriptions out), looked up by id in batches, in id order.
func scanInFull[T any](ctx context.Context, scan func(context.Context, func(T) error) error,
	lookup func(context.Context, []string) ([]T, error), id func(T) string) ([]T, error) {
	var ids []string
	if err := scan(ctx, func(r T) error {
		ids = append(ids, id(r))
		return nil
	}); err != nil {
		return nil, err
	}
	slices.Sort(ids)
	var out []T
	for i := 0; i < len(ids); i += lookupBatch {
		part, err := lookup(ctx, ids[i:min(i+lookupBatch, len(ids))])
		if err != nil {
			return nil, err
		}
		out = append(out, part...)
	}
	// Lookups come back in no promised order.
	slices.SortFunc(out, func(a, b T) int { return strings.Compare(id(a), id(b)) })
	return out, nil
}

func (x *exported) counts() ExportCounts {
	return ExportCounts{Entities: len(x.entities), Relations: len(x.relations), Mentions: len(x.mentions)}
}

// WriteJSONL writes the stored graph as JSON Lines: every entity, then every
// relation, then (with opts.Mentions) every MENTIONED_IN edge, one object a
// line, each with a "kind" field, in id order.
func WriteJSONL(ctx context.Context, w io.Writer, src ExportSource, opts ExportOptions) (ExportCounts, error) {
	x, err := readExport(ctx, src, opts)
	if err != nil {
		return ExportCounts{}, err
	}
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	for _, e := range x.entities {
		if err := enc.Encode(ExportEntity{Kind: "entity", ID: e.ID, Name: e.Name, Type: e.Type, Description: e.Description, Mentions: e.Mentions}); err != nil {
			return ExportCounts{}, err
		}
	}
	for _, r := range x.relations {
		if err := enc.Encode(ExportRelation{Kind: "relation", ID: r.ID, SourceID: r.SourceID, TargetID: r.TargetID,
			Type: r.Type, Keywords: r.Keywords, Description: r.Description, Weight: r.Weight}); err != nil {
			return ExportCounts{}, err
		}
	}
	for _, m := range x.mentions {
		if err := enc.Encode(ExportMention{Kind: "mention", EntityID: m.EntityID, ChunkID: m.ChunkID, DocID: m.DocID, DocPath: x.paths[m.DocID]}); err != nil {
			return ExportCounts{}, err
		}
	}
	return x.counts(), bw.Flush()
}

// graphmlKeys declares every attribute a GraphML export uses; Gephi, yEd
// and NetworkX read their types from these declarations.
var graphmlKeys = []struct{ id, owner, name, typ string }{
	{"kind", "node", "kind", "string"},
	{"name", "node", "name", "string"},
	{"etype", "node", "type", "string"},
	{"edescription", "node", "description", "string"},
	{"mentions", "node", "mentions", "int"},
	{"doc_id", "node", "doc_id", "string"},
	{"doc_path", "node", "doc_path", "string"},
	{"label", "edge", "label", "string"},
	{"rtype", "edge", "type", "string"},
	{"keywords", "edge", "keywords", "string"},
	{"rdescription", "edge", "description", "string"},
	{"weight", "edge", "weight", "double"},
}

// WriteGraphML writes the stored graph as GraphML: entities as nodes
// (kind "entity") and relations as edges labelled RELATES; with
// opts.Mentions, chunks as nodes too (kind "chunk", with their document)
// and MENTIONED_IN edges from entities to them. The graph is directed when
// any relation is typed (a KG import), undirected otherwise, since
// extracted relations have no direction.
func WriteGraphML(ctx context.Context, w io.Writer, src ExportSource, opts ExportOptions) (ExportCounts, error) {
	x, err := readExport(ctx, src, opts)
	if err != nil {
		return ExportCounts{}, err
	}
	bw := bufio.NewWriter(w)
	p := &xmlPrinter{w: bw}
	p.raw(xml.Header)
	p.raw(`<graphml xmlns="http://graphml.graphdrawing.org/xmlns" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="http://graphml.graphdrawing.org/xmlns http://graphml.graphdrawing.org/xmlns/1.0/graphml.xsd">` + "\n")
	for _, k := range graphmlKeys {
		p.raw(`  <key id="` + k.id + `" for="` + k.owner + `" attr.name="` + k.name + `" attr.type="` + k.typ + `"/>` + "\n")
	}
	direction := "undirected"
	if slices.ContainsFunc(x.relations, func(r store.Relation) bool { return r.Type != "" }) {
		direction = "directed"
	}
	p.raw(`  <graph id="docgraph" edgedefault="` + direction + `">` + "\n")
	for _, e := range x.entities {
		p.open("node", e.ID, "", "")
		p.data("kind", "entity")
		p.data("name", e.Name)
		p.data("etype", e.Type)
		p.data("edescription", e.Description)
		p.data("mentions", strconv.Itoa(e.Mentions))
		p.close("node")
	}
	chunks := map[string]bool{}
	for _, m := range x.mentions {
		if chunks[m.ChunkID] {
			continue
		}
		chunks[m.ChunkID] = true
		p.open("node", m.ChunkID, "", "")
		p.data("kind", "chunk")
		p.data("doc_id", m.DocID)
		p.data("doc_path", x.paths[m.DocID])
		p.close("node")
	}
	for _, r := range x.relations {
		p.open("edge", r.ID, r.SourceID, r.TargetID)
		p.data("label", "RELATES")
		p.data("rtype", r.Type)
		p.data("keywords", r.Keywords)
		p.data("rdescription", r.Description)
		p.data("weight", strconv.FormatFloat(r.Weight, 'g', -1, 64))
		p.close("edge")
	}
	for _, m := range x.mentions {
		p.open("edge", "", m.EntityID, m.ChunkID)
		p.data("label", "MENTIONED_IN")
		p.close("edge")
	}
	p.raw("  </graph>\n</graphml>\n")
	if p.err != nil {
		return ExportCounts{}, p.err
	}
	return x.counts(), bw.Flush()
}

// xmlPrinter writes GraphML elements with escaped values, keeping the first
// write error.
type xmlPrinter struct {
	w   io.Writer
	err error
}

func (p *xmlPrinter) raw(s string) {
	if p.err == nil {
		_, p.err = io.WriteString(p.w, s)
	}
}

func (p *xmlPrinter) escaped(s string) {
	if p.err == nil {
		p.err = xml.EscapeText(p.w, []byte(xmlSafe(s)))
	}
}

func (p *xmlPrinter) open(elem, id, source, target string) {
	p.raw("    <" + elem)
	for _, a := range [][2]string{{"id", id}, {"source", source}, {"target", target}} {
		if a[1] != "" {
			p.raw(" " + a[0] + `="`)
			p.escaped(a[1])
			p.raw(`"`)
		}
	}
	p.raw(">")
}

func (p *xmlPrinter) data(key, value string) {
	if value == "" {
		return
	}
	p.raw(`<data key="` + key + `">`)
	p.escaped(value)
	p.raw("</data>")
}

func (p *xmlPrinter) close(elem string) { p.raw("</" + elem + ">\n") }

// xmlSafe drops the characters XML 1.0 cannot carry at all (most C0
// controls); a PDF's text can hold them.
func xmlSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' || (r >= 0x20 && r != 0xFFFE && r != 0xFFFF) {
			return r
		}
		return -1
	}, s)
}
