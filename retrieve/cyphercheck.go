package retrieve

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

var (
	allowedLabels   = []string{"Document", "Chunk", "Entity"}
	allowedRelTypes = []string{"PART_OF", "NEXT", "MENTIONED_IN", "RELATES"}
	// allowedNames may stand in a label expression outside a relationship
	// pattern, where WHERE r:TYPE tests a relationship's type.
	allowedNames = append(slices.Clone(allowedLabels), allowedRelTypes...)
	// forbidden are the words that write, call procedures or subqueries,
	// load data, pick another database, change the schema, administer the
	// server or change how the query runs. Any of them used as a name is
	// refused too: failing closed costs a model answer, not a leak.
	forbidden = wordSet(
		"CREATE", "MERGE", "DELETE", "DETACH", "SET", "REMOVE", "DROP", "FOREACH", "LOAD", "CSV",
		"CALL", "YIELD", "USE", "SHOW", "GRANT", "DENY", "REVOKE", "ALTER", "RENAME", "START",
		"STOP", "TERMINATE", "ENABLE", "DISABLE", "PERIODIC", "COMMIT", "TRANSACTIONS", "INSERT",
		"FINISH", "EXPLAIN", "PROFILE", "CYPHER", "USING", "IMPORT", "DATABASE", "GRAPH",
	)
	openers = []string{"MATCH", "OPTIONAL", "WITH", "UNWIND", "RETURN"}
	// parenKeywords are the keywords a "(" may follow without it being a
	// function call.
	parenKeywords = wordSet(
		"MATCH", "WHERE", "AND", "OR", "XOR", "NOT", "IN", "RETURN", "WITH", "UNWIND", "CASE",
		"WHEN", "THEN", "ELSE", "DISTINCT", "CONTAINS", "BY", "SKIP", "LIMIT", "IS", "AS",
		"UNION", "ALL", "ORDER", "EXISTS", "COUNT",
	)
	// allowedFunctions are the built-in functions a read query over the
	// schema needs (case does not matter to Neo4j). Nothing namespaced:
	// apoc.*, db.*, dbms.*, gds.* and friends can run Cypher given as a
	// string, read the server's state or reach the network. properties(),
	// keys(), labels() and type() are out because they read what the
	// schema does not name.
	allowedFunctions = wordSet(
		"count", "collect", "sum", "avg", "min", "max", "stdev", "stdevp", "percentilecont", "percentiledisc",
		"size", "length", "coalesce", "tolower", "toupper", "lower", "upper", "trim", "ltrim", "rtrim", "btrim",
		"replace", "substring", "left", "right", "split", "reverse", "tostring", "tostringornull",
		"tointeger", "tointegerornull", "tofloat", "tofloatornull", "toboolean", "tobooleanornull",
		"abs", "ceil", "floor", "round", "sign", "sqrt", "range", "head", "last", "tail", "isempty",
		"nodes", "relationships", "startnode", "endnode", "id", "elementid", "exists",
		"shortestpath", "allshortestpaths", "all", "any", "none", "single", "reduce",
		"char_length", "character_length",
	)
	// notLabelAfterIs are the words after IS that make a null, type or
	// normalization test rather than a label test (n IS Label).
	notLabelAfterIs = wordSet("not", "null", "typed", "normalized", "nfc", "nfd", "nfkc", "nfkd")
)

func wordSet(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[strings.ToUpper(w)] = true
	}
	return m
}

// ErrUnsafeCypher is returned for a query that is not a single read-only
// statement over the known schema.
var ErrUnsafeCypher = errors.New("unsafe cypher")

// CheckCypher accepts a single read-only query over docgraph's labels and
// relationship types, and returns it with a LIMIT of at most limit rows on
// its final RETURN (added, or lowered when larger).
//
// It reads the query as Neo4j's lexer does (comments end at any line end,
// quotes and backquotes close where the server closes them) and fails
// closed: only MATCH/WITH/UNWIND/RETURN queries; no procedure call, LOAD
// CSV, USE or write of any kind; only built-in functions from an allow-list;
// labels and relationship types only from the schema, wherever a label
// expression can stand ((n:A|B), WHERE n:A, n IS A, [r:T]), and none
// negated. Every node pattern, in the query, its subqueries and each part
// of a union, carries a schema label or names a variable already bound to
// a labelled one; every relationship pattern carries a schema type;
// properties are read by name only (no n {.*}, n['key'] or n[expr]). Its
// size, nesting, boolean terms and pattern parts are bounded, because the
// server plans a query before any timeout applies. The Neo4j store then has
// the server confirm it with EXPLAIN before running it.
func CheckCypher(query string, limit int) (string, error) {
	q := strings.TrimSpace(query)
	if len(q) > maxCypherBytes {
		return "", fmt.Errorf("%w: longer than %d bytes", ErrUnsafeCypher, maxCypherBytes)
	}
	toks, err := lexCypher(q)
	if err != nil {
		return "", err
	}
	// Room for the two tokens of a LIMIT this may add, so that the query
	// it returns passes again.
	if len(toks)+2 > maxCypherTokens {
		return "", fmt.Errorf("%w: more than %d tokens", ErrUnsafeCypher, maxCypherTokens)
	}
	if n := len(toks); n > 0 && toks[n-1].is(";") {
		q = strings.TrimSpace(q[:toks[n-1].start])
		toks = toks[:n-1]
	}
	if len(toks) == 0 || !slices.Contains(openers, toks[0].upper()) {
		return "", fmt.Errorf("%w: must start with MATCH, WITH, UNWIND or RETURN", ErrUnsafeCypher)
	}
	isLabel, err := checkLabelExpressions(toks)
	if err != nil {
		return "", err
	}
	if err := checkPatterns(toks); err != nil {
		return "", err
	}
	lastReturn := -1
	for i, t := range toks {
		switch {
		case t.is(";"):
			return "", fmt.Errorf("%w: more than one statement", ErrUnsafeCypher)
		case isLabel[i]:
			continue
		}
		if (t.kind == tokWord || t.kind == tokQuoted) && i+1 < len(toks) && toks[i+1].is("(") {
			if err := checkCall(toks, i); err != nil {
				return "", err
			}
		}
		if i > 0 && toks[i-1].is(".") {
			continue // a property key
		}
		if forbidden[t.upper()] {
			return "", fmt.Errorf("%w: %s is not allowed", ErrUnsafeCypher, t.upper())
		}
		if t.upper() == "RETURN" {
			lastReturn = i
		}
	}
	if lastReturn < 0 {
		return "", fmt.Errorf("%w: no RETURN", ErrUnsafeCypher)
	}
	// The final RETURN's LIMIT: keep a smaller one, lower a larger one, add one.
	for i := lastReturn + 1; i < len(toks); i++ {
		if toks[i].upper() != "LIMIT" || toks[i-1].is(".") {
			continue
		}
		if i+2 != len(toks) || toks[i+1].kind != tokNumber {
			return "", fmt.Errorf("%w: LIMIT must be a number at the end", ErrUnsafeCypher)
		}
		n, err := strconv.Atoi(toks[i+1].text)
		if err != nil {
			return "", fmt.Errorf("%w: LIMIT must be a number at the end", ErrUnsafeCypher)
		}
		if n <= limit {
			return q, nil
		}
		return strings.TrimSpace(q[:toks[i].start]) + " LIMIT " + strconv.Itoa(limit), nil
	}
	if q += "\nLIMIT " + strconv.Itoa(limit); len(q) > maxCypherBytes {
		return "", fmt.Errorf("%w: longer than %d bytes", ErrUnsafeCypher, maxCypherBytes)
	}
	return q, nil
}

// checkCall accepts toks[i] followed by "(" when it is a keyword that may
// precede a parenthesis or an allowed built-in function.
func checkCall(toks []cypherToken, i int) error {
	name := toks[i].text
	if i > 0 && toks[i-1].is(".") {
		// The last part of a namespaced name: apoc.cypher.run(...).
		return fmt.Errorf("%w: namespaced function ...%s() is not allowed", ErrUnsafeCypher, name)
	}
	if parenKeywords[toks[i].upper()] {
		return nil
	}
	if !allowedFunctions[strings.ToUpper(name)] {
		return fmt.Errorf("%w: function %s() is not allowed", ErrUnsafeCypher, name)
	}
	return nil
}

// checkLabelExpressions finds every label expression (after ":" outside a
// map, or after IS) and checks each name in it against the schema:
// relationship types inside a relationship pattern, labels and types
// elsewhere. It returns which tokens are those names. "%" (any label),
// $-labels and type predicates (::) are refused.
func checkLabelExpressions(toks []cypherToken) (map[int]bool, error) {
	isLabel := map[int]bool{}
	var brackets []string // "(", "{", "[" (a list) or "-[" (a relationship)
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch {
		case t.is("("), t.is("{"):
			brackets = append(brackets, t.text)
			continue
		case t.is("["):
			kind := "["
			if i > 0 && (toks[i-1].is("-") || toks[i-1].is("<")) {
				kind = "-["
			}
			brackets = append(brackets, kind)
			continue
		case t.is(")"), t.is("}"), t.is("]"):
			if len(brackets) > 0 {
				brackets = brackets[:len(brackets)-1]
			}
			continue
		}
		inner := ""
		if len(brackets) > 0 {
			inner = brackets[len(brackets)-1]
		}
		var start int
		switch {
		case t.is(":") && i+1 < len(toks) && toks[i+1].is(":"):
			return nil, fmt.Errorf("%w: type predicates (::) are not supported", ErrUnsafeCypher)
		case t.is(":") && inner == "{":
			continue // a map's key: value
		case t.is(":"):
			start = i + 1
		case t.upper() == "IS" && i+1 < len(toks) && !notLabelAfterIs[toks[i+1].upper()] && !toks[i+1].is(":"):
			start = i + 1
		default:
			continue
		}
		allowed := allowedNames
		if inner == "-[" {
			allowed = allowedRelTypes
		}
		end, err := labelExpression(toks, start, allowed, isLabel)
		if err != nil {
			return nil, err
		}
		i = end - 1
	}
	return isLabel, nil
}

// labelExpression reads the label expression starting at toks[i] (A,
// A|B, A&!B, (A|B), A:B, |:B), marks its names and returns where it ends.
func labelExpression(toks []cypherToken, i int, allowed []string, isLabel map[int]bool) (int, error) {
	depth := 0
	wantName := true
	for ; i < len(toks); i++ {
		t := toks[i]
		if wantName {
			switch {
			case t.is("!"):
				// A negation matches every label but one: nodes and
				// relationships that are not docgraph's.
				return 0, fmt.Errorf("%w: a negated label or type (!)", ErrUnsafeCypher)
			case t.is(":"):
				continue
			case t.is("("):
				depth++
				continue
			case t.is("%"):
				return 0, fmt.Errorf("%w: %% (any label) is not allowed", ErrUnsafeCypher)
			case t.kind == tokParam:
				return 0, fmt.Errorf("%w: dynamic labels", ErrUnsafeCypher)
			case t.kind == tokWord || t.kind == tokQuoted:
				if !slices.Contains(allowed, t.text) {
					return 0, fmt.Errorf("%w: unknown label or relationship type %s", ErrUnsafeCypher, t.text)
				}
				isLabel[i] = true
				wantName = false
				continue
			}
			return 0, fmt.Errorf("%w: a label expression without a label", ErrUnsafeCypher)
		}
		switch {
		case t.is("|"), t.is("&"), t.is(":"):
			// "[x IN xs WHERE x:Entity | x.name]": a name followed by "." or
			// "(" is the comprehension's projection, not a label.
			if t.is("|") && i+2 < len(toks) && (toks[i+2].is(".") || toks[i+2].is("(")) {
				return i, nil
			}
			wantName = true
		case t.is(")") && depth > 0:
			depth--
		default:
			return i, nil
		}
	}
	if wantName {
		return 0, fmt.Errorf("%w: a label expression without a label", ErrUnsafeCypher)
	}
	return i, nil
}
