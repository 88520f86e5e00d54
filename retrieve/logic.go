package retrieve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/tmc/langchaingo/llms"

	"github.com/docgraph/docgraph/graphbuild"
	"github.com/docgraph/docgraph/prompts"
)

// Logic-form retrieval, HuixiangDou2's Algorithm 1 (paper 001, section
// 5.2): the model decomposes the question into steps, each a sub-question
// answered by one operator of a fixed set over the stored graph; the steps
// run in order against the store, a step's arguments may use earlier
// steps' results ($N), and the history of steps and results is the
// context. The operators, their arguments and the JSON the model writes are
// in LogicOperators and ParseLogicPlan; the pre-check and the fall-back to
// mix (Algorithm 3, section 5.3) are in verify.go.

// ModeLogic is logic-form retrieval; it needs a language model.
const ModeLogic = "logic"

// ErrNeedsModel is returned for a mode that cannot run without a language model.
var ErrNeedsModel = errors.New("needs a language model (--llm)")

// ErrUnusablePlan marks a decomposition that cannot be run: not JSON, no
// steps, an unknown operator or argument, or a reference to a step that
// does not come before.
var ErrUnusablePlan = errors.New("unusable logic-form plan")

// LogicConfig bounds logic-form retrieval; zero fields take the defaults.
type LogicConfig struct {
	MaxSteps    int // steps run (8); a longer plan is cut
	MaxEntities int // entities lookup_entity returns (3)
	MaxLinks    int // entities follow_relation returns (10)
	MaxPassages int // passages entity_chunks and search_text return (3)
	// FanOut is how many of an earlier step's entities a step runs for
	// when its entity argument refers to that step (3).
	FanOut int
}

func (c LogicConfig) withDefaults() LogicConfig {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&c.MaxSteps, 8)
	def(&c.MaxEntities, 3)
	def(&c.MaxLinks, 10)
	def(&c.MaxPassages, 3)
	def(&c.FanOut, 3)
	return c
}

// Logic operators.
const (
	OpLookupEntity   = "lookup_entity"
	OpFollowRelation = "follow_relation"
	OpEntityChunks   = "entity_chunks"
	OpSearchText     = "search_text"
	OpCompute        = "compute"
)

// Compute operations.
var computeOps = []string{"count", "sum", "min", "max", "earliest", "latest", "diff"}

// param is one argument of an operator.
type param struct {
	name     string
	optional bool
	list     bool // a list of strings (compute's values)
	entity   bool // names an entity: "$N" stands for step N's entities
}

type operatorDef struct {
	name   string
	params []param
	doc    string
}

// operators is the fixed operator set, in the order the prompt lists it.
var operators = []operatorDef{
	{OpLookupEntity, []param{{name: "name", entity: true}},
		"find an entity of the graph by name: its type and description"},
	{OpFollowRelation, []param{{name: "entity", entity: true}, {name: "relation", optional: true}},
		"the entities linked to an entity by a relation matching these words (every link when relation is empty)"},
	{OpEntityChunks, []param{{name: "entity", entity: true}, {name: "about", optional: true}},
		"the passages that mention an entity, those about these words first"},
	{OpSearchText, []param{{name: "query"}},
		"full-text search over all passages"},
	{OpCompute, []param{{name: "op"}, {name: "values", list: true}, {name: "near", optional: true}},
		"op is " + strings.Join(computeOps, ", ") + "; values are earlier results ($N) or literal numbers or dates; " +
			"from each result item it reads the first number or date, or the first after the word near"},
}

func operatorByName(name string) (operatorDef, bool) {
	for _, o := range operators {
		if o.name == name {
			return o, true
		}
	}
	return operatorDef{}, false
}

// LogicOperators describes the operator set, as the decomposition prompt lists it.
func LogicOperators() []prompts.Operator {
	out := make([]prompts.Operator, len(operators))
	for i, o := range operators {
		var sig []string
		for _, p := range o.params {
			s := p.name
			if p.list {
				s += "[]"
			}
			if p.optional {
				s += "?"
			}
			sig = append(sig, s)
		}
		out[i] = prompts.Operator{Name: o.name, Signature: strings.Join(sig, ", "), Doc: o.doc}
	}
	return out
}

// LogicStep is one step of a plan: a sub-question, an operator and its
// arguments (strings, or a list of strings for compute's values).
type LogicStep struct {
	Question string         `json:"question"`
	Op       string         `json:"op"`
	Args     map[string]any `json:"args"`
}

func (s LogicStep) str(name string) string {
	v, _ := s.Args[name].(string)
	return v
}

func (s LogicStep) list(name string) []string {
	v, _ := s.Args[name].([]string)
	return v
}

// LogicPlan is a validated decomposition.
type LogicPlan struct {
	Steps []LogicStep
	// Cut is how many steps past the step cap were dropped.
	Cut int
}

var (
	stepRef   = regexp.MustCompile(`\$(\d+)`)
	codeFence = regexp.MustCompile("(?s)^```[a-zA-Z]*\\s*(.*?)\\s*```$")
)

// ParseLogicPlan reads the model's decomposition: a JSON object
// {"steps": [{"question", "op", "args": {...}}]} (or the bare list of
// steps), possibly fenced or with prose around it. Every operator must be
// one of LogicOperators with only its arguments, every required argument
// present, and every $N reference to an earlier step; a plan longer than
// maxSteps is cut (Cut says by how much). Failures wrap ErrUnusablePlan.
func ParseLogicPlan(answer string, maxSteps int) (*LogicPlan, error) {
	s := strings.TrimSpace(stripThink(answer))
	if m := codeFence.FindStringSubmatch(s); m != nil {
		s = m[1]
	}
	type rawStep struct {
		Question string                     `json:"question"`
		Op       string                     `json:"op"`
		Args     map[string]json.RawMessage `json:"args"`
	}
	var raw []rawStep
	obj, arr := strings.Index(s, "{"), strings.Index(s, "[")
	switch {
	case arr >= 0 && (obj < 0 || arr < obj):
		end := strings.LastIndex(s, "]")
		if end < arr || json.Unmarshal([]byte(s[arr:end+1]), &raw) != nil {
			return nil, fmt.Errorf("%w: malformed JSON in %q", ErrUnusablePlan, clip(answer, 80))
		}
	case obj >= 0:
		end := strings.LastIndex(s, "}")
		var wrapper struct {
			Steps []rawStep `json:"steps"`
		}
		if end < obj {
			return nil, fmt.Errorf("%w: malformed JSON in %q", ErrUnusablePlan, clip(answer, 80))
		}
		if err := json.Unmarshal([]byte(s[obj:end+1]), &wrapper); err != nil {
			return nil, fmt.Errorf("%w: malformed JSON: %v", ErrUnusablePlan, err)
		}
		raw = wrapper.Steps
	default:
		return nil, fmt.Errorf("%w: no JSON in %q", ErrUnusablePlan, clip(answer, 80))
	}
	if len(raw) == 0 {
		return nil, fmt.Errorf("%w: no steps", ErrUnusablePlan)
	}
	plan := &LogicPlan{}
	if maxSteps > 0 && len(raw) > maxSteps {
		plan.Cut = len(raw) - maxSteps
		raw = raw[:maxSteps]
	}
	for i, rs := range raw {
		n := i + 1
		op, ok := operatorByName(strings.TrimSpace(rs.Op))
		if !ok {
			names := make([]string, len(operators))
			for j, o := range operators {
				names[j] = o.name
			}
			return nil, fmt.Errorf("%w: step %d: unknown operator %q (have %s)", ErrUnusablePlan, n, rs.Op, strings.Join(names, ", "))
		}
		step := LogicStep{Question: strings.TrimSpace(rs.Question), Op: op.name, Args: map[string]any{}}
		for name := range rs.Args {
			if !slicesContainsFunc(op.params, func(p param) bool { return p.name == name }) {
				return nil, fmt.Errorf("%w: step %d: %s has no argument %q", ErrUnusablePlan, n, op.name, name)
			}
		}
		for _, p := range op.params {
			v, err := argValue(rs.Args[p.name], p.list)
			if err != nil {
				return nil, fmt.Errorf("%w: step %d: %s argument %s: %v", ErrUnusablePlan, n, op.name, p.name, err)
			}
			if v == nil {
				if !p.optional {
					return nil, fmt.Errorf("%w: step %d: %s needs argument %s", ErrUnusablePlan, n, op.name, p.name)
				}
				continue
			}
			texts, _ := v.([]string)
			if s, ok := v.(string); ok {
				texts = []string{s}
			}
			for _, t := range texts {
				for _, m := range stepRef.FindAllStringSubmatch(t, -1) {
					if k, _ := strconv.Atoi(m[1]); k < 1 || k >= n {
						return nil, fmt.Errorf("%w: step %d refers to $%s, which is not an earlier step", ErrUnusablePlan, n, m[1])
					}
				}
			}
			step.Args[p.name] = v
		}
		if step.Op == OpCompute && !slicesContainsFunc(computeOps, func(o string) bool { return o == step.str("op") }) {
			return nil, fmt.Errorf("%w: step %d: compute op %q (have %s)", ErrUnusablePlan, n, step.str("op"), strings.Join(computeOps, ", "))
		}
		plan.Steps = append(plan.Steps, step)
	}
	return plan, nil
}

// argValue reads an argument: a string (a number is taken as its text),
// or for a list argument a list of those (a single one becomes a list of
// one). nil when absent, null or empty.
func argValue(raw json.RawMessage, list bool) (any, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	one := func(r json.RawMessage) (string, error) {
		var s string
		if json.Unmarshal(r, &s) == nil {
			return strings.TrimSpace(s), nil
		}
		var f json.Number
		if json.Unmarshal(r, &f) == nil {
			return f.String(), nil
		}
		return "", fmt.Errorf("want a string, got %s", clip(string(r), 40))
	}
	if !list {
		s, err := one(raw)
		if err != nil || s == "" {
			return nil, err
		}
		return s, nil
	}
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		items = []json.RawMessage{raw}
	}
	var out []string
	for _, it := range items {
		s, err := one(it)
		if err != nil {
			return nil, err
		}
		if s != "" {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

func slicesContainsFunc[T any](s []T, f func(T) bool) bool {
	for _, v := range s {
		if f(v) {
			return true
		}
	}
	return false
}

// stripThink removes <think>...</think> reasoning some models write first.
func stripThink(s string) string {
	if i := strings.LastIndex(s, "</think>"); i >= 0 {
		return s[i+len("</think>"):]
	}
	return s
}

// LogicItem is one thing a step found.
type LogicItem struct {
	// Kind is "entity", "passage" or "value".
	Kind string `json:"kind"`
	Name string `json:"name"`
	ID   string `json:"id,omitempty"` // entity or chunk id
	// Text is what the item says: an entity's type and description, the
	// relation that led to it, a computation's inputs. Passages' text is
	// in the result's passages.
	Text string `json:"text,omitempty"`
}

// LogicTraceStep is one executed step.
type LogicTraceStep struct {
	N        int            `json:"n"`
	Question string         `json:"question"`
	Op       string         `json:"op"`
	Args     map[string]any `json:"args"`
	// Resolved are the arguments that referred to earlier steps, as run.
	Resolved map[string][]string `json:"resolved,omitempty"`
	Items    []LogicItem         `json:"items"`
	// Note says why a step found nothing, or that it repeated an earlier one.
	Note string `json:"note,omitempty"`
	// Same is the earlier step this one repeats (0: none); it was not run again.
	Same int `json:"same,omitempty"`
}

// LogicTrace is what logic-form retrieval did: the model's plan and the
// history of steps and results.
type LogicTrace struct {
	Plan  string           `json:"plan"`
	Steps []LogicTraceStep `json:"steps"`
	// Error says why the plan could not be used; no step ran.
	Error string   `json:"error,omitempty"`
	Notes []string `json:"notes,omitempty"`
}

// Found says whether any step found anything.
func (t *LogicTrace) Found() bool {
	for _, s := range t.Steps {
		if len(s.Items) > 0 {
			return true
		}
	}
	return false
}

// logic is Algorithm 1: decompose, then run each step against the store.
func (r *Retriever) logic(ctx context.Context, res *Result) error {
	if r.model == nil {
		return fmt.Errorf("mode %s %w", ModeLogic, ErrNeedsModel)
	}
	cfg := r.cfg.Logic
	trace := &LogicTrace{}
	res.Logic = trace
	st := &stages{res: res}
	prompt, err := prompts.RenderLogicPlan(prompts.LogicPlanData{Question: res.Question, Operators: LogicOperators(), MaxSteps: cfg.MaxSteps})
	if err != nil {
		return err
	}
	if err := st.time("decompose", func() (err error) {
		trace.Plan, err = llms.GenerateFromSinglePrompt(ctx, r.model, prompt, llms.WithTemperature(0), llms.WithJSONMode())
		return err
	}); err != nil {
		return fmt.Errorf("logic form: decompose: %w", err)
	}
	plan, err := ParseLogicPlan(trace.Plan, cfg.MaxSteps)
	if err != nil {
		trace.Error = err.Error()
		return nil
	}
	if plan.Cut > 0 {
		trace.Notes = append(trace.Notes, fmt.Sprintf("the plan had %d steps; the first %d ran", len(plan.Steps)+plan.Cut, len(plan.Steps)))
	}
	run := &logicRun{r: r, cfg: cfg, res: res, chunkAt: map[string]int{}, titles: map[string]string{}}
	err = st.time("steps", func() error {
		seen := map[string]int{}
		for i, step := range plan.Steps {
			ts := LogicTraceStep{N: i + 1, Question: step.Question, Op: step.Op, Args: step.Args}
			key, resolved, note := run.resolve(step)
			for name, v := range step.Args {
				if s, ok := v.(string); ok && stepRef.MatchString(s) && resolved != nil {
					if ts.Resolved == nil {
						ts.Resolved = map[string][]string{}
					}
					ts.Resolved[name] = resolved[name]
				}
			}
			switch {
			case note != "":
				ts.Note = note
			case seen[key] > 0:
				// A repeated step would find the same again (and a loop
				// would never end): its result is the earlier step's.
				ts.Same = seen[key]
				ts.Note = fmt.Sprintf("repeats step %d", seen[key])
				ts.Items = trace.Steps[seen[key]-1].Items
			default:
				seen[key] = i + 1
				items, note, err := run.exec(ctx, step, resolved)
				if err != nil {
					return fmt.Errorf("logic form: step %d (%s): %w", i+1, step.Op, err)
				}
				ts.Items, ts.Note = items, note
				if len(items) == 0 && note == "" {
					ts.Note = "nothing found"
				}
			}
			trace.Steps = append(trace.Steps, ts)
			run.steps = trace.Steps
		}
		return nil
	})
	if err != nil {
		return err
	}
	return st.time("documents", func() error {
		if err := r.fillPassages(ctx, res.Passages); err != nil {
			return err
		}
		res.Passages = dropEmpty(res.Passages)
		return nil
	})
}

// logicRun is the state of one plan's execution.
type logicRun struct {
	r       *Retriever
	cfg     LogicConfig
	res     *Result
	steps   []LogicTraceStep
	chunkAt map[string]int // chunk id -> index in res.Passages
	titles  map[string]string
}

// resolved are a step's arguments with references replaced: entity
// arguments become lists of names, text arguments have $N replaced by the
// names step N found, compute's values are kept as they are.
type resolved map[string][]string

// resolve replaces references; key identifies the step with its resolved
// arguments, for loop detection; note is set when a reference leads
// nowhere (the step then does not run).
func (lr *logicRun) resolve(step LogicStep) (key string, args resolved, note string) {
	op, _ := operatorByName(step.Op)
	args = resolved{}
	for _, p := range op.params {
		v, ok := step.Args[p.name]
		if !ok {
			continue
		}
		if p.list {
			args[p.name] = v.([]string)
			continue
		}
		s := v.(string)
		if m := stepRef.FindStringSubmatch(s); p.entity && m != nil && m[0] == s {
			k, _ := strconv.Atoi(m[1])
			names := lr.names(k)
			if len(names) == 0 {
				return "", nil, fmt.Sprintf("step %d found nothing to go on", k)
			}
			args[p.name] = names[:min(len(names), lr.cfg.FanOut)]
			continue
		}
		empty := 0
		s = stepRef.ReplaceAllStringFunc(s, func(ref string) string {
			k, _ := strconv.Atoi(ref[1:])
			names := lr.names(k)
			if len(names) == 0 {
				empty = k
			}
			return strings.Join(names[:min(len(names), lr.cfg.FanOut)], ", ")
		})
		if empty > 0 {
			return "", nil, fmt.Sprintf("step %d found nothing to go on", empty)
		}
		args[p.name] = []string{s}
	}
	b, _ := json.Marshal(struct {
		Op   string
		Args resolved
	}{step.Op, normaliseArgs(args)})
	return string(b), args, ""
}

func normaliseArgs(a resolved) resolved {
	out := resolved{}
	for k, v := range a {
		n := make([]string, len(v))
		for i, s := range v {
			n[i] = graphbuild.NormalizeKey(s)
		}
		out[k] = n
	}
	return out
}

// names are the names of what step k found: its entities, else its
// passages' titles, else its computed values.
func (lr *logicRun) names(k int) []string {
	if k < 1 || k > len(lr.steps) {
		return nil
	}
	var out []string
	for _, it := range lr.steps[k-1].Items {
		out = append(out, it.Name)
	}
	return out
}

// exec runs one operator for each value of its entity argument.
func (lr *logicRun) exec(ctx context.Context, step LogicStep, args resolved) ([]LogicItem, string, error) {
	one := func(a resolved) string {
		if len(a["op"]) > 0 {
			return a["op"][0]
		}
		return ""
	}
	switch step.Op {
	case OpLookupEntity:
		return lr.fanOut(args["name"], func(name string) ([]LogicItem, string, error) { return lr.lookup(ctx, name) })
	case OpFollowRelation:
		rel := strings.Join(args["relation"], " ")
		return lr.fanOut(args["entity"], func(name string) ([]LogicItem, string, error) { return lr.follow(ctx, name, rel) })
	case OpEntityChunks:
		about := strings.Join(args["about"], " ")
		if about == "" {
			about = step.Question
		}
		return lr.fanOut(args["entity"], func(name string) ([]LogicItem, string, error) { return lr.mentions(ctx, name, about) })
	case OpSearchText:
		return lr.search(ctx, strings.Join(args["query"], " "))
	case OpCompute:
		items, note := lr.compute(one(args), args["values"], strings.Join(args["near"], " "))
		return items, note, nil
	}
	return nil, "", fmt.Errorf("no operator %q", step.Op)
}

// fanOut runs fn for each name and joins the results, each item once.
func (lr *logicRun) fanOut(names []string, fn func(string) ([]LogicItem, string, error)) ([]LogicItem, string, error) {
	var items []LogicItem
	var notes []string
	seen := map[string]bool{}
	for _, n := range names {
		got, note, err := fn(n)
		if err != nil {
			return nil, "", err
		}
		if note != "" {
			notes = append(notes, note)
		}
		for _, it := range got {
			k := it.Kind + "\x00" + it.ID + "\x00" + it.Name
			if !seen[k] {
				seen[k] = true
				items = append(items, it)
			}
		}
	}
	return items, strings.Join(notes, "; "), nil
}

// LogicHistory is the history of a logic-form result's steps and results,
// as its context lays it out.
func LogicHistory(res *Result) []string { return logicLines(res, len(res.Passages)) }

// logicLines render the history of steps and results for the context;
// passages are cited by their number among the first kept passages (the
// sources), others are said to be left out.
func logicLines(res *Result, kept int) []string {
	t := res.Logic
	if t == nil {
		return nil
	}
	at := map[string]int{}
	for i, p := range res.Passages {
		at[p.ChunkID] = i + 1
	}
	var lines []string
	for _, n := range t.Notes {
		lines = append(lines, "Note: "+n)
	}
	for _, s := range t.Steps {
		head := fmt.Sprintf("Step %d: %s [%s]", s.N, s.Question, callText(s))
		lines = append(lines, strings.TrimSpace(head))
		if s.Same > 0 {
			lines = append(lines, fmt.Sprintf("  same as step %d", s.Same))
			continue
		}
		for _, it := range s.Items {
			switch it.Kind {
			case "passage":
				if n := at[it.ID]; n > 0 && n <= kept {
					lines = append(lines, fmt.Sprintf("  passage [%d] %s", n, it.Name))
				} else {
					lines = append(lines, "  passage "+it.Name+", left out of the context (token budget)")
				}
			case "value":
				lines = append(lines, "  = "+it.Name+" ("+it.Text+")")
			default:
				l := "  " + it.Name
				if it.Text != "" {
					l += " — " + it.Text
				}
				lines = append(lines, l)
			}
		}
		if s.Note != "" {
			lines = append(lines, "  ("+s.Note+")")
		}
	}
	return lines
}

// callText is a step's operator call, e.g. follow_relation(entity: X, relation: directed by).
func callText(s LogicTraceStep) string {
	op, _ := operatorByName(s.Op)
	var parts []string
	for _, p := range op.params {
		switch v := s.Args[p.name].(type) {
		case string:
			if r, ok := s.Resolved[p.name]; ok && r != nil && strings.Join(r, ", ") != v {
				v += " = " + strings.Join(r, ", ")
			}
			parts = append(parts, p.name+": "+v)
		case []string:
			parts = append(parts, p.name+": "+strings.Join(v, ", "))
		}
	}
	return s.Op + "(" + strings.Join(parts, "; ") + ")"
}
