package retrieve

import (
	"fmt"
	"slices"
	"strings"
)

// Bounds on a model's query, checked before any of it reaches the server.
// Neo4j plans a query before its transaction timeout starts counting, and
// planning time grows faster than the query: 2,000 OR terms (39 KB) cost
// 10 s of server CPU and 60,000 kept a core busy for 19 minutes after the
// client gave up. Within these bounds the worst shapes plan in milliseconds
// (docs/design/2026-12-08-cypher-gate.md), and a model's real queries are a few
// hundred bytes.
const (
	maxCypherBytes  = 4096
	maxCypherTokens = 800
	// maxBooleanTerms bounds AND, OR, XOR, NOT and WHEN together: the terms
	// the planner normalises and reorders.
	maxBooleanTerms = 32
	// maxCypherDepth bounds the nesting of brackets.
	maxCypherDepth = 12
	// maxPatternParts bounds node and relationship patterns together: the
	// planner's join ordering grows with them.
	maxPatternParts = 24
)

var (
	// booleanWords are what maxBooleanTerms counts.
	booleanWords = wordSet("AND", "OR", "XOR", "NOT", "WHEN")
	// clauseWords end the projection of a WITH or RETURN.
	clauseWords = wordSet("MATCH", "OPTIONAL", "WHERE", "ORDER", "SKIP", "OFFSET", "LIMIT", "UNWIND", "WITH", "RETURN", "UNION", "CALL")
	// listWords are the keywords a list literal may follow; "[" after any
	// other word, a name or a closing bracket subscripts a value.
	listWords = wordSet("RETURN", "WITH", "UNWIND", "IN", "WHERE", "AND", "OR", "XOR", "NOT", "WHEN", "THEN",
		"ELSE", "BY", "DISTINCT", "CONTAINS", "CASE", "SKIP", "LIMIT")
)

// scopeFrame holds the variables bound inside one bracket (or the query
// itself) that a later node pattern may name without a label.
type scopeFrame struct {
	vars map[string]bool
	// opaque is set once a WITH, RETURN or UNION in the frame has replaced
	// what it sees: the frames around it are then out of scope too.
	opaque bool
	// bindsOutside is set for the parentheses of shortestPath() and
	// allShortestPaths(), whose pattern binds its variables in the clause.
	bindsOutside bool
}

// projection is a WITH or RETURN whose items end at token end; from there
// on, its frame sees only what it projected.
type projection struct {
	end   int
	frame *scopeFrame
	vars  map[string]bool
}

// patternChecker walks the tokens once, tracking which variables are bound
// where, and refuses every way a query could reach a node, a relationship
// or a property outside docgraph's schema: a node pattern must carry one of
// the schema's labels unless it names a variable already bound to one, a
// relationship pattern must carry one of its types, and values are read by
// name only (no {.*}, no subscript by a string or an expression).
type patternChecker struct {
	toks        []cypherToken
	match       []int // the closing bracket of each opening one, -1 elsewhere
	frames      []*scopeFrame
	projections []projection
	parts       int // node and relationship patterns seen
}

// checkPatterns applies the schema rules above and the bounds on depth,
// boolean terms and pattern parts.
func checkPatterns(toks []cypherToken) error {
	match, err := matchBrackets(toks)
	if err != nil {
		return err
	}
	c := &patternChecker{toks: toks, match: match, frames: []*scopeFrame{{vars: map[string]bool{}}}}
	booleans := 0
	for i := range toks {
		c.applyProjections(i)
		t := toks[i]
		afterDot := i > 0 && toks[i-1].is(".")
		switch {
		case t.is("("):
			if err := c.openParen(i); err != nil {
				return err
			}
		case t.is("["):
			if err := c.openBracket(i); err != nil {
				return err
			}
		case t.is("{"):
			c.push(&scopeFrame{vars: map[string]bool{}})
		case t.is(")"), t.is("]"), t.is("}"):
			c.frames = c.frames[:len(c.frames)-1]
		case t.is("-") && c.next(i).is("-"):
			return fmt.Errorf("%w: a relationship pattern without a type (--)", ErrUnsafeCypher)
		case t.is("-") && c.next(i).is(">") && !(i > 0 && toks[i-1].is("]")):
			return fmt.Errorf("%w: a relationship pattern without a type (->)", ErrUnsafeCypher)
		case t.is("<") && c.next(i).is("-") && !c.at(i+2).is("["):
			return fmt.Errorf("%w: a relationship pattern without a type (<-)", ErrUnsafeCypher)
		case t.is(".") && c.next(i).is("*"):
			return fmt.Errorf("%w: a projection of all properties (.*)", ErrUnsafeCypher)
		case afterDot:
			// a property key, whatever it is named
		case booleanWords[t.upper()]:
			if booleans++; booleans > maxBooleanTerms {
				return fmt.Errorf("%w: more than %d boolean terms", ErrUnsafeCypher, maxBooleanTerms)
			}
		case t.upper() == "WITH" || t.upper() == "RETURN":
			c.project(i)
		case t.upper() == "UNION":
			// Each part of a union starts with nothing bound.
			top := c.top()
			top.vars, top.opaque = map[string]bool{}, true
		case t.upper() == "AS" && c.inProjection(i) == nil && isName(c.next(i)):
			c.top().vars[c.next(i).text] = true // UNWIND ... AS v
		}
	}
	return nil
}

// matchBrackets pairs every opening bracket with its closing one and
// bounds their nesting.
func matchBrackets(toks []cypherToken) ([]int, error) {
	match := make([]int, len(toks))
	var open []int
	for i, t := range toks {
		match[i] = -1
		switch {
		case t.is("("), t.is("["), t.is("{"):
			if open = append(open, i); len(open) > maxCypherDepth {
				return nil, fmt.Errorf("%w: brackets nested deeper than %d", ErrUnsafeCypher, maxCypherDepth)
			}
		case t.is(")"), t.is("]"), t.is("}"):
			if len(open) == 0 || !closes(toks[open[len(open)-1]].text, t.text) {
				return nil, fmt.Errorf("%w: unbalanced %s", ErrUnsafeCypher, t.text)
			}
			match[open[len(open)-1]] = i
			open = open[:len(open)-1]
		}
	}
	if len(open) > 0 {
		return nil, fmt.Errorf("%w: unclosed %s", ErrUnsafeCypher, toks[open[len(open)-1]].text)
	}
	return match, nil
}

func closes(open, close string) bool {
	return open+close == "()" || open+close == "[]" || open+close == "{}"
}

func (c *patternChecker) at(i int) cypherToken {
	if i < 0 || i >= len(c.toks) {
		return cypherToken{}
	}
	return c.toks[i]
}

func (c *patternChecker) next(i int) cypherToken { return c.at(i + 1) }

func (c *patternChecker) top() *scopeFrame { return c.frames[len(c.frames)-1] }

func (c *patternChecker) push(f *scopeFrame) { c.frames = append(c.frames, f) }

// bind records a variable bound by a pattern in the frame its clause sees.
func (c *patternChecker) bind(name string) {
	i := len(c.frames) - 1
	for i > 0 && c.frames[i].bindsOutside {
		i--
	}
	c.frames[i].vars[name] = true
}

// bound says whether name is a variable in scope at this point.
func (c *patternChecker) bound(name string) bool {
	for i := len(c.frames) - 1; i >= 0; i-- {
		if c.frames[i].vars[name] {
			return true
		}
		if c.frames[i].opaque {
			return false
		}
	}
	return false
}

// visible lists every variable in scope, for WITH *.
func (c *patternChecker) visible() []string {
	var names []string
	for i := len(c.frames) - 1; i >= 0; i-- {
		for v := range c.frames[i].vars {
			names = append(names, v)
		}
		if c.frames[i].opaque {
			break
		}
	}
	return names
}

func isName(t cypherToken) bool { return t.kind == tokWord || t.kind == tokQuoted }

// isCall says whether the "(" at i opens a function's arguments.
func (c *patternChecker) isCall(i int) bool {
	prev := c.at(i - 1)
	return i > 0 && isName(prev) && !c.at(i-2).is(".") && allowedFunctions[strings.ToUpper(prev.text)]
}

// openParen checks the "(" at i: a node pattern must carry a schema label
// or name a bound variable.
func (c *patternChecker) openParen(i int) error {
	frame := &scopeFrame{vars: map[string]bool{}}
	if c.isCall(i) {
		name := strings.ToUpper(c.at(i - 1).text)
		frame.bindsOutside = name == "SHORTESTPATH" || name == "ALLSHORTESTPATHS"
		c.bindIterator(i, frame)
		c.push(frame)
		return nil
	}
	name, labelled, isNode, err := c.nodePattern(i)
	if err != nil {
		return err
	}
	if isNode {
		if c.parts++; c.parts > maxPatternParts {
			return fmt.Errorf("%w: more than %d node and relationship patterns", ErrUnsafeCypher, maxPatternParts)
		}
		switch {
		case labelled && name != "":
			c.bind(name)
		case !labelled && name == "":
			return fmt.Errorf("%w: a node pattern without a label", ErrUnsafeCypher)
		case !labelled && !c.bound(name):
			return fmt.Errorf("%w: node pattern (%s) has no label and %s is not bound to a labelled node", ErrUnsafeCypher, name, name)
		}
	}
	c.push(frame)
	return nil
}

// nodePattern reads the parentheses at i as a node pattern: (), (v),
// (v:Label), (v IS Label), each optionally with a property map or
// parameter and an inline WHERE. Anything else is an expression or a
// parenthesised path, and isNode is false.
func (c *patternChecker) nodePattern(i int) (name string, labelled, isNode bool, err error) {
	end := c.match[i]
	j := i + 1
	if j < end && isName(c.toks[j]) {
		name = c.toks[j].text
		j++
	}
	labelAt := -1
	switch t := c.at(j); {
	case t.is(":"):
		labelAt = j + 1
	case t.upper() == "IS" && !notLabelAfterIs[c.at(j+1).upper()] && !c.at(j+1).is(":"):
		labelAt = j + 1
	}
	if labelAt >= 0 {
		// Only node labels here: a relationship type as a label would match
		// nodes docgraph never writes.
		if j, err = labelExpression(c.toks, labelAt, allowedLabels, map[int]bool{}); err != nil {
			return "", false, false, err
		}
		labelled = true
	}
	switch t := c.at(j); {
	case t.is("{"):
		j = c.match[j] + 1
	case t.kind == tokParam:
		j++
	}
	if j != end && c.at(j).upper() != "WHERE" {
		return "", false, false, nil
	}
	return name, labelled, true, nil
}

// openBracket checks the "[" at i: a relationship pattern must carry a
// schema type; a subscript takes only a number or a range of numbers (a
// string or an expression there reads any property by name); a list or
// comprehension may bind its iterator.
func (c *patternChecker) openBracket(i int) error {
	frame := &scopeFrame{vars: map[string]bool{}}
	prev := c.at(i - 1)
	switch {
	case i > 0 && prev.is("-"):
		if c.parts++; c.parts > maxPatternParts {
			return fmt.Errorf("%w: more than %d node and relationship patterns", ErrUnsafeCypher, maxPatternParts)
		}
		j := i + 1
		name := ""
		if isName(c.at(j)) && c.at(j).upper() != "IS" {
			name = c.at(j).text
			j++
		}
		typed := c.at(j).is(":") || (c.at(j).upper() == "IS" && !c.at(j+1).is(":"))
		if !typed {
			return fmt.Errorf("%w: a relationship pattern without a type", ErrUnsafeCypher)
		}
		if name != "" {
			c.bind(name)
		}
	case i > 0 && (prev.is(")") || prev.is("]") || prev.is("}") || prev.kind == tokParam || prev.kind == tokString ||
		prev.kind == tokQuoted || (prev.kind == tokWord && !listWords[prev.upper()])):
		if err := c.checkSubscript(i); err != nil {
			return err
		}
	default:
		c.bindIterator(i, frame)
	}
	c.push(frame)
	return nil
}

// checkSubscript accepts [n], [-n], [a..b], [..b] and [a..] with number
// literals only.
func (c *patternChecker) checkSubscript(i int) error {
	for j := i + 1; j < c.match[i]; j++ {
		t := c.toks[j]
		if !(t.kind == tokNumber || t.is("-") || t.is(".")) {
			return fmt.Errorf("%w: a subscript by anything but a number (dynamic property access)", ErrUnsafeCypher)
		}
	}
	return nil
}

// bindIterator binds the variable of "[x IN ..." or "any(x IN ...".
func (c *patternChecker) bindIterator(i int, frame *scopeFrame) {
	if isName(c.at(i+1)) && c.at(i+2).upper() == "IN" {
		frame.vars[c.at(i+1).text] = true
	}
}

// project reads the items of the WITH or RETURN at i: from their end on,
// the frame sees the variables carried by name, everything for *, and the
// aliases.
func (c *patternChecker) project(i int) {
	p := projection{frame: c.top(), vars: map[string]bool{}}
	j := i + 1
	if c.at(j).upper() == "DISTINCT" {
		j++
	}
	itemStart := j
	addItem := func(from, to int) {
		switch {
		case to-from == 1 && c.toks[from].is("*"):
			for _, v := range c.visible() {
				p.vars[v] = true
			}
		case to-from == 1 && isName(c.toks[from]) && c.bound(c.toks[from].text):
			p.vars[c.toks[from].text] = true
		case to-from >= 3 && c.toks[to-2].upper() == "AS" && isName(c.toks[to-1]):
			p.vars[c.toks[to-1].text] = true
		}
	}
	for ; j < len(c.toks); j++ {
		t := c.toks[j]
		if c.match[j] >= 0 {
			j = c.match[j]
			continue
		}
		if t.is(")") || t.is("]") || t.is("}") || (clauseWords[t.upper()] && !c.at(j-1).is(".")) {
			break
		}
		if t.is(",") {
			addItem(itemStart, j)
			itemStart = j + 1
		}
	}
	addItem(itemStart, j)
	p.end = j
	c.projections = append(c.projections, p)
}

// inProjection returns the pending projection whose items hold token i.
func (c *patternChecker) inProjection(i int) *projection {
	for k := range c.projections {
		if i < c.projections[k].end {
			return &c.projections[k]
		}
	}
	return nil
}

// applyProjections switches frames to what their WITH or RETURN projected
// once the items end.
func (c *patternChecker) applyProjections(i int) {
	c.projections = slices.DeleteFunc(c.projections, func(p projection) bool {
		if p.end != i {
			return false
		}
		p.frame.vars, p.frame.opaque = p.vars, true
		return true
	})
}
