package neo4j

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	n4j "github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j/dbtype"

	"github.com/docgraph/docgraph/store"
)

var _ store.GraphScanner = (*Store)(nil)

// Graph-wide reads. Like every statement in cypher.go they are constants,
// with data only in parameters and labels from schemaLabels.
const (
	// stmtScanMentionsPage reads the next $n chunks by id after $after, each
	// with its document's status and the entities mentioning it; the caller
	// keeps the chunks of done documents and pages on by the last id.
	stmtScanMentionsPage = `MATCH (c:Chunk)
USING INDEX c:Chunk(id)
WHERE c.id > $after
WITH c ORDER BY c.id LIMIT $n
OPTIONAL MATCH (c)-[:PART_OF]->(d:Document)
OPTIONAL MATCH (e:Entity)-[:MENTIONED_IN]->(c)
WITH c, d, collect(DISTINCT e.id) AS entities
RETURN c.id AS chunk_id, c.doc_id AS doc_id, d.status AS status, entities
ORDER BY chunk_id`

	// stmtGraphVersion reads counts Neo4j keeps in its count store plus the
	// latest document change: every write, delete, status change and rename
	// moves one of them.
	stmtGraphVersion = `CALL { MATCH (d:Document) RETURN count(d) AS documents, max(d.updated_at) AS latest }
CALL { MATCH (c:Chunk) RETURN count(c) AS chunks }
CALL { MATCH ()-[m:MENTIONED_IN]->() RETURN count(m) AS mentions }
RETURN documents, latest, chunks, mentions`
)

// scanPage is how many chunks one ScanMentions round trip covers.
const scanPage = 5000

// ScanMentions calls fn for every MENTIONED_IN edge into a chunk of a done
// document, each entity-chunk pair once, paging through chunks by id with
// one read transaction per page.
func (s *Store) ScanMentions(ctx context.Context, fn func(store.Mention) error) error {
	return s.scanPages(ctx, "scan mentions", stmtScanMentionsPage, scanPage, "chunk_id", func(r *n4j.Record) error {
		if recordString(r, "status") != string(store.StatusDone) {
			return nil
		}
		chunk, doc := recordString(r, "chunk_id"), recordString(r, "doc_id")
		for _, e := range stringList(r, "entities") {
			if err := fn(store.Mention{EntityID: e, ChunkID: chunk, DocID: doc}); err != nil {
				return err
			}
		}
		return nil
	})
}

// GraphVersion combines the document, chunk and mention counts with the
// latest document update time. A replacement that keeps every count and
// reuses an update time is not seen; the pipeline stamps each write.
func (s *Store) GraphVersion(ctx context.Context) (string, error) {
	var version string
	err := s.read(ctx, "graph version", func(tx n4j.ManagedTransaction) error {
		recs, err := collect(ctx, tx, stmtGraphVersion, nil)
		if err != nil {
			return err
		}
		if len(recs) != 1 {
			return fmt.Errorf("graph version: %d records", len(recs))
		}
		r := recs[0]
		get := func(k string) any { v, _ := r.Get(k); return v }
		version = fmt.Sprintf("%v/%v/%v/%v", get("documents"), get("latest"), get("chunks"), get("mentions"))
		return nil
	})
	return version, err
}

// QueryReadOnly runs a Cypher query that does not come from this package
// (retrieval's text-to-Cypher) in a read transaction routed to readers, so
// the server refuses any write it might attempt, with a time limit. It
// returns at most maxRows rows (all when maxRows <= 0), each column decoded
// into plain values: nodes and relationships become property maps without
// their embeddings. The caller is responsible for having checked the text;
// the server confirms it first: EXPLAIN must plan a read-only query with no
// procedure call, LOAD CSV or write operator, or nothing runs.
func (s *Store) QueryReadOnly(ctx context.Context, cypher string, params map[string]any, maxRows int) ([]map[string]any, error) {
	if err := s.explainReadOnly(ctx, cypher, params); err != nil {
		return nil, err
	}
	rows, err := n4j.ExecuteQuery(ctx, s.driver, cypher, params,
		func() n4j.ResultTransformer[[]map[string]any] { return &rowCollector{max: maxRows} },
		n4j.ExecuteQueryWithDatabase(s.database),
		n4j.ExecuteQueryWithReadersRouting(),
		n4j.ExecuteQueryWithTransactionConfig(n4j.WithTxTimeout(15*time.Second)),
	)
	if err != nil {
		return nil, s.fail("read-only query", err)
	}
	return rows, nil
}

// ErrNotReadOnly is returned when the server's plan of a query given to
// QueryReadOnly is not a plain read.
var ErrNotReadOnly = errors.New("not a read-only query")

// refusedOperators are parts of plan operator names that read outside the
// graph, reach out of the server, or write: a query planning any of them is
// refused whatever the text looked like.
var refusedOperators = []string{
	"ProcedureCall", "LoadCSV", "Create", "Merge", "Delete", "SetProperty", "SetLabel",
	"SetNode", "SetRelationship", "RemoveLabel", "Foreach", "Transaction", "Show", "Command",
	"Terminate", "SystemProcedure",
}

// explainReadOnly has the server plan cypher without running it and
// refuses a plan that is not read-only or uses a refused operator.
func (s *Store) explainReadOnly(ctx context.Context, cypher string, params map[string]any) error {
	summary, err := n4j.ExecuteQuery(ctx, s.driver, "EXPLAIN "+cypher, params,
		n4j.EagerResultTransformer,
		n4j.ExecuteQueryWithDatabase(s.database),
		n4j.ExecuteQueryWithReadersRouting(),
		n4j.ExecuteQueryWithTransactionConfig(n4j.WithTxTimeout(15*time.Second)),
	)
	if err != nil {
		return s.fail("explain read-only query", err)
	}
	sum := summary.Summary
	if t := sum.StatementType(); t != n4j.StatementTypeReadOnly {
		return fmt.Errorf("neo4j: %w: the server plans it as type %q", ErrNotReadOnly, t.String())
	}
	if op := refusedOperator(sum.Plan()); op != "" {
		return fmt.Errorf("neo4j: %w: its plan has %s", ErrNotReadOnly, op)
	}
	if op := scanOutsideSchema(sum.Plan()); op != "" {
		return fmt.Errorf("neo4j: %w: its plan scans outside docgraph's schema: %s", ErrNotReadOnly, op)
	}
	return nil
}

// readableNames are the labels and relationship types a query given to
// QueryReadOnly may scan: the ones text-to-Cypher is told about.
// DocgraphMeta, RelationMention and whatever else shares the database are
// not among them.
var readableNames = map[string]bool{
	"Document": true, "Chunk": true, "Entity": true,
	"PART_OF": true, "NEXT": true, "MENTIONED_IN": true, "RELATES": true,
}

// planNames finds the label and type names in a plan operator's details:
// each name of a label expression after a colon ("n:Entity|Chunk",
// "RANGE INDEX n:Entity(name)", "(a)-[r:RELATES]->(b)").
var planNames = regexp.MustCompile("[:|&!]\\s*(`(?:[^`]|``)*`|[\\p{L}_][\\p{L}\\p{N}_]*)")

// scanOutsideSchema returns the first operator of a plan that starts from
// every node or relationship, or from a label or type outside
// readableNames, or "". It backs the text check (which requires a label on
// every fresh node pattern) with what the server actually plans.
func scanOutsideSchema(p n4j.Plan) string {
	if p == nil {
		return ""
	}
	op := p.Operator()
	name, _, _ := strings.Cut(op, "@")
	switch {
	case strings.Contains(name, "AllNodesScan"), strings.Contains(name, "AllRelationshipsScan"):
		return op
	case strings.Contains(name, "ById"), strings.Contains(name, "ByElementId"):
		// A seek by id finds one node of any label; the label test, when
		// the pattern has one, follows as a filter.
	case strings.Contains(name, "Scan"), strings.Contains(name, "Seek"), strings.Contains(name, "CountStore"):
		details, _ := p.Arguments()["Details"].(string)
		found := planNames.FindAllStringSubmatch(details, -1)
		if len(found) == 0 {
			return op + " " + details
		}
		for _, m := range found {
			if n := strings.ReplaceAll(strings.Trim(m[1], "`"), "``", "`"); !readableNames[n] {
				return op + " " + details
			}
		}
	}
	for _, c := range p.Children() {
		if op := scanOutsideSchema(c); op != "" {
			return op
		}
	}
	return ""
}

// refusedOperator returns the first refused operator in a plan, or "".
func refusedOperator(p n4j.Plan) string {
	if p == nil {
		return ""
	}
	for _, part := range refusedOperators {
		if strings.Contains(p.Operator(), part) {
			return p.Operator()
		}
	}
	for _, c := range p.Children() {
		if op := refusedOperator(c); op != "" {
			return op
		}
	}
	return ""
}

// rowCollector keeps the first max records of a result as plain rows and
// drops the rest as they stream in, so a query that matches far more than
// the caller wants never sits in memory whole.
type rowCollector struct {
	max  int
	rows []map[string]any
}

func (c *rowCollector) Accept(rec *n4j.Record) error {
	if c.max > 0 && len(c.rows) == c.max {
		return nil
	}
	row := make(map[string]any, len(rec.Keys))
	for i, k := range rec.Keys {
		row[k] = plainValue(rec.Values[i])
	}
	c.rows = append(c.rows, row)
	return nil
}

func (c *rowCollector) Complete([]string, n4j.ResultSummary) ([]map[string]any, error) {
	if c.rows == nil {
		return []map[string]any{}, nil
	}
	return c.rows, nil
}

// plainValue turns driver values into maps, lists and scalars a caller can
// print or encode as JSON, leaving out embeddings.
func plainValue(v any) any {
	switch x := v.(type) {
	case dbtype.Node:
		m := plainProps(x.Props)
		m["_labels"] = x.Labels
		return m
	case dbtype.Relationship:
		m := plainProps(x.Props)
		m["_type"] = x.Type
		return m
	case dbtype.Path:
		out := make([]any, 0, len(x.Nodes)+len(x.Relationships))
		for i, n := range x.Nodes {
			out = append(out, plainValue(n))
			if i < len(x.Relationships) {
				out = append(out, plainValue(x.Relationships[i]))
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = plainValue(e)
		}
		return out
	case map[string]any:
		return plainProps(x)
	}
	return v
}

func plainProps(props map[string]any) map[string]any {
	m := make(map[string]any, len(props))
	for k, v := range props {
		if k == "embedding" {
			continue
		}
		m[k] = plainValue(v)
	}
	return m
}
