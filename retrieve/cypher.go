package retrieve

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/tmc/langchaingo/llms"

	"github.com/docgraph/docgraph/retrieve/internal/calls"
)

// CypherRunner is what text-to-Cypher needs of a store: running a query in
// a read transaction. The Neo4j store implements it; on other stores the
// Cypher path is skipped.
type CypherRunner interface {
	QueryReadOnly(ctx context.Context, cypher string, params map[string]any, maxRows int) ([]map[string]any, error)
}

// CypherResult is a generated graph query and its rows, which go into the
// context as they are, without reranking.
type CypherResult struct {
	Query string           `json:"query"`
	Rows  []map[string]any `json:"rows"`
}

// cypherSchema describes the graph to the model: the labels, relationship
// types and properties the stores write.
const cypherSchema = `Node labels and properties:
- Document {id, path, title, status}
- Chunk {id, doc_id, index, text}
- Entity {id, name, type, description, mentions}
Relationships:
- (:Chunk)-[:PART_OF]->(:Document)
- (:Chunk)-[:NEXT]->(:Chunk)   reading order
- (:Entity)-[:MENTIONED_IN]->(:Chunk)
- (:Entity)-[:RELATES {keywords, description, weight}]->(:Entity)   undirected in meaning
Entity names are written as in the documents; match them with
toLower(e.name) CONTAINS toLower("...").`

// cypherPrompt asks for one read-only query. It lives here rather than in
// prompts/ because only the Neo4j path uses it.
const cypherPrompt = `Write one Cypher query (Neo4j 5) that reads, from the graph described
below, what is needed to answer the question. Use only these labels,
relationship types and properties. The query must only read: MATCH,
OPTIONAL MATCH, WHERE, WITH, UNWIND, RETURN, ORDER BY, LIMIT; no CALL,
no LOAD CSV, and only built-in functions such as toLower, count, collect,
size and coalesce (no apoc or other namespaced ones, no properties(),
keys(), labels() or type()). Give every node pattern its label, as in
(e:Entity), unless it repeats a variable bound earlier, and every
relationship its type, as in -[:RELATES]-; read properties by name (e.name),
never n {.*} or n['name']. Return names, descriptions and counts, not whole
nodes.

%s

Question: %s

Answer with the query only, no explanation.`

var fence = regexp.MustCompile("(?s)```[a-zA-Z]*\\s*(.*?)```")

// extractQuery takes the query out of a model answer that may wrap it in a
// Markdown fence.
func extractQuery(answer string) string {
	if m := fence.FindStringSubmatch(answer); m != nil {
		return strings.TrimSpace(m[1])
	}
	return strings.TrimSpace(answer)
}

// GenerateCypher asks the model for a query answering question and checks it.
func GenerateCypher(ctx context.Context, model llms.Model, question string, limit int) (string, error) {
	end := calls.Start(ctx, "Cypher query")
	answer, err := llms.GenerateFromSinglePrompt(ctx, model, fmt.Sprintf(cypherPrompt, cypherSchema, question), llms.WithTemperature(0))
	end()
	if err != nil {
		return "", fmt.Errorf("text to cypher: %w", err)
	}
	return CheckCypher(extractQuery(answer), limit)
}

// textToCypher generates, checks and runs a query; any failure gives nil,
// so the other paths answer alone.
func textToCypher(ctx context.Context, model llms.Model, runner CypherRunner, question string, limit int) *CypherResult {
	q, err := GenerateCypher(ctx, model, question, limit)
	if err != nil {
		return nil
	}
	rows, err := runner.QueryReadOnly(ctx, q, nil, limit)
	if err != nil || len(rows) == 0 {
		return nil
	}
	return &CypherResult{Query: q, Rows: rows}
}
