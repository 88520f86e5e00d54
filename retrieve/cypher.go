package retrieve

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/tmc/langchaingo/llms"
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
OPTIONAL MATCH, WHERE, WITH, UNWIND, RETURN, ORDER BY, LIMIT; no CALL.
Return names, descriptions and counts, not whole nodes.

%s

Question: %s

Answer with the query only, no explanation.`

var (
	allowedLabels   = []string{"Document", "Chunk", "Entity"}
	allowedRelTypes = []string{"PART_OF", "NEXT", "MENTIONED_IN", "RELATES"}
	// forbidden are the clauses that write, call procedures or subqueries,
	// load data, change the schema or administer the server.
	forbidden = map[string]bool{
		"CREATE": true, "MERGE": true, "DELETE": true, "DETACH": true, "SET": true, "REMOVE": true,
		"DROP": true, "FOREACH": true, "LOAD": true, "CALL": true, "USE": true, "SHOW": true,
		"GRANT": true, "DENY": true, "REVOKE": true, "ALTER": true, "RENAME": true, "START": true,
		"STOP": true, "TERMINATE": true, "ENABLE": true, "DISABLE": true, "PERIODIC": true,
		"COMMIT": true, "TRANSACTIONS": true, "INSERT": true, "FINISH": true,
	}
	openers    = []string{"MATCH", "OPTIONAL", "WITH", "UNWIND", "RETURN"}
	nodeLabels = regexp.MustCompile(`\(\s*\w*\s*((?::\s*\w+\s*)+)`)
	relTypes   = regexp.MustCompile(`\[\s*\w*\s*:\s*(\w+(?:\s*\|\s*:?\s*\w+)*)`)
	labelWord  = regexp.MustCompile(`\w+`)
)

// ErrUnsafeCypher is returned for a query that is not a single read-only
// statement over the known schema.
var ErrUnsafeCypher = errors.New("unsafe cypher")

// CheckCypher accepts a single read-only query over docgraph's labels and
// relationship types, and returns it with a LIMIT of at most limit rows on
// its final RETURN (added, or lowered when larger). Keywords inside string
// literals, backquoted names and comments do not count.
func CheckCypher(query string, limit int) (string, error) {
	q := strings.TrimSpace(query)
	q = strings.TrimSpace(strings.TrimSuffix(q, ";"))
	code, err := blankLiterals(q)
	if err != nil {
		return "", err
	}
	if strings.Contains(code, ";") {
		return "", fmt.Errorf("%w: more than one statement", ErrUnsafeCypher)
	}
	if strings.Contains(code, "`") {
		// A backquoted label or keyword would hide from the checks below.
		return "", fmt.Errorf("%w: backquoted names", ErrUnsafeCypher)
	}
	type word struct {
		text     string
		start    int
		property bool
	}
	var words []word
	for i := 0; i < len(code); {
		r := rune(code[i])
		if !(unicode.IsLetter(r) || r == '_') {
			i++
			continue
		}
		j := i
		for j < len(code) && (unicode.IsLetter(rune(code[j])) || unicode.IsDigit(rune(code[j])) || code[j] == '_') {
			j++
		}
		prev := strings.TrimRight(code[:i], " \t\n")
		words = append(words, word{text: strings.ToUpper(code[i:j]), start: i, property: strings.HasSuffix(prev, ".") || strings.HasSuffix(prev, "$")})
		i = j
	}
	if len(words) == 0 || !slices.Contains(openers, words[0].text) {
		return "", fmt.Errorf("%w: must start with MATCH, WITH, UNWIND or RETURN", ErrUnsafeCypher)
	}
	lastReturn := -1
	for i, w := range words {
		if w.property {
			continue
		}
		if forbidden[w.text] {
			return "", fmt.Errorf("%w: %s is not allowed", ErrUnsafeCypher, w.text)
		}
		if w.text == "RETURN" {
			lastReturn = i
		}
	}
	if lastReturn < 0 {
		return "", fmt.Errorf("%w: no RETURN", ErrUnsafeCypher)
	}
	for _, m := range nodeLabels.FindAllStringSubmatch(code, -1) {
		for _, l := range labelWord.FindAllString(m[1], -1) {
			if !slices.Contains(allowedLabels, l) {
				return "", fmt.Errorf("%w: unknown label %s", ErrUnsafeCypher, l)
			}
		}
	}
	for _, m := range relTypes.FindAllStringSubmatch(code, -1) {
		for _, t := range labelWord.FindAllString(m[1], -1) {
			if !slices.Contains(allowedRelTypes, t) {
				return "", fmt.Errorf("%w: unknown relationship type %s", ErrUnsafeCypher, t)
			}
		}
	}
	// The final RETURN's LIMIT: keep a smaller one, lower a larger one, add one.
	for i := lastReturn + 1; i < len(words); i++ {
		if words[i].text != "LIMIT" || words[i].property {
			continue
		}
		rest := strings.TrimSpace(code[words[i].start+len("LIMIT"):])
		end := strings.IndexFunc(rest, func(r rune) bool { return !unicode.IsDigit(r) })
		if end < 0 {
			end = len(rest)
		}
		n, err := strconv.Atoi(rest[:end])
		if err != nil || strings.TrimSpace(rest[end:]) != "" {
			return "", fmt.Errorf("%w: LIMIT must be a number at the end", ErrUnsafeCypher)
		}
		if n <= limit {
			return q, nil
		}
		return strings.TrimSpace(q[:words[i].start]) + " LIMIT " + strconv.Itoa(limit), nil
	}
	return q + "\nLIMIT " + strconv.Itoa(limit), nil
}

// blankLiterals replaces the insides of string literals, backquoted names
// and comments with spaces (same length), so keyword checks see only code.
func blankLiterals(q string) (string, error) {
	b := []byte(q)
	for i := 0; i < len(b); i++ {
		switch {
		case b[i] == '\'' || b[i] == '"' || b[i] == '`':
			quote := b[i]
			j := i + 1
			for ; j < len(b) && b[j] != quote; j++ {
				if b[j] == '\\' && quote != '`' {
					b[j] = ' '
					j++
					if j < len(b) {
						b[j] = ' '
					}
					continue
				}
				b[j] = ' '
			}
			if j >= len(b) {
				return "", fmt.Errorf("%w: unterminated %c", ErrUnsafeCypher, quote)
			}
			i = j
		case b[i] == '/' && i+1 < len(b) && b[i+1] == '/':
			for ; i < len(b) && b[i] != '\n'; i++ {
				b[i] = ' '
			}
		case b[i] == '/' && i+1 < len(b) && b[i+1] == '*':
			end := strings.Index(string(b[i+2:]), "*/")
			if end < 0 {
				return "", fmt.Errorf("%w: unterminated comment", ErrUnsafeCypher)
			}
			for k := i; k < i+2+end+2; k++ {
				b[k] = ' '
			}
			i += 2 + end + 1
		}
	}
	return string(b), nil
}

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
	answer, err := llms.GenerateFromSinglePrompt(ctx, model, fmt.Sprintf(cypherPrompt, cypherSchema, question), llms.WithTemperature(0))
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
