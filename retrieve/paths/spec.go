package paths

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Module is one stage of a spec: a method, the scorer it uses (if any),
// and flags, written method[:part...] where each part is a scorer name or
// a flag, e.g. "ppr:exact", "beam:bm25:triple:dynamic".
type Module struct {
	Method string
	Scorer string // "", "bm25", "emb", "llm" or "random"
	Flags  []string
}

func (m Module) String() string {
	parts := []string{m.Method}
	if m.Scorer != "" {
		parts = append(parts, m.Scorer)
	}
	return strings.Join(append(parts, m.Flags...), ":")
}

// Has says whether the module carries a flag.
func (m Module) Has(flag string) bool { return slices.Contains(m.Flags, flag) }

// Spec chooses the three LEGO-GraphRAG modules: subgraph extraction (SE),
// path filtering (PF) and path refinement (PR).
type Spec struct {
	SE, PF, PR Module
}

// String is the canonical spec text, which ParseSpec reads back.
func (s Spec) String() string {
	return "se=" + s.SE.String() + ",pf=" + s.PF.String() + ",pr=" + s.PR.String()
}

// DefaultSpec is what an empty spec means: approximate PPR, shortest paths,
// BM25 refinement (LEGO-GraphRAG's instance 15).
const DefaultSpec = "se=ppr,pf=spf,pr=bm25"

// RecommendedSpec is what `query --mode path` and mix's path signal use
// unless told otherwise: approximate PPR, beam search with triple-level BM25
// scoring and dynamic pruning, BM25 refinement; offline, the one spec that
// met MetaQA's 99 / 95 / 80% answer recall bars for 1 / 2 / 3 hops.
const RecommendedSpec = "se=ppr,pf=beam:bm25:triple:dynamic,pr=bm25"

// What each module accepts. Scorers: bm25, emb (the configured embedder),
// llm (the configured model, with emb filling in), random.
var (
	scorerNames = []string{"bm25", "emb", "llm", "random"}
	seMethods   = map[string][]string{ // method -> flags
		"ppr":  {"exact", "push"},
		"rwr":  nil,
		"ego":  nil,
		"none": nil,
	}
	pfMethods = map[string][]string{
		"spf":  nil,
		"cpf":  nil,
		"beam": {"triple", "dynamic"},
	}
	prMethods = map[string]bool{"bm25": true, "emb": true, "llm": true, "random": true, "none": true}
)

// Instances are LEGO-GraphRAG's numbered instances (Table 4 of the paper)
// that docgraph can run, written "lego:N"; those built on fine-tuned models
// or a reranker are left out.
var Instances = map[int]string{
	0:  "se=ppr,pf=spf,pr=random",
	1:  "se=rwr,pf=spf,pr=random",
	2:  "se=ppr:bm25,pf=spf,pr=random",
	3:  "se=ppr:emb,pf=spf,pr=random",
	6:  "se=ppr:llm,pf=spf,pr=random",
	8:  "se=ppr,pf=cpf,pr=random",
	9:  "se=ppr,pf=beam:bm25,pr=random",
	10: "se=ppr,pf=beam:emb,pr=random",
	13: "se=ppr,pf=beam:llm,pr=random",
	15: "se=ppr,pf=spf,pr=bm25",
	16: "se=ppr,pf=spf,pr=emb",
	19: "se=ppr,pf=spf,pr=llm",
}

// ParseSpec reads a module spec such as "se=ppr,pf=beam:bm25,pr=emb" or a
// named instance such as "lego:9". Omitted modules take their defaults:
// se=ppr (approximate push), pf=spf, and pr = the path filter's scorer, or
// bm25 when it has none.
func ParseSpec(text string) (Spec, error) {
	text = strings.TrimSpace(text)
	if n, ok := strings.CutPrefix(text, "lego:"); ok {
		i, err := strconv.Atoi(n)
		spec, known := Instances[i]
		if err != nil || !known {
			return Spec{}, fmt.Errorf("path spec %q: no runnable LEGO-GraphRAG instance %q (have %s)", text, n, instanceList())
		}
		return ParseSpec(spec)
	}
	var s Spec
	seen := map[string]bool{}
	if text != "" {
		for _, field := range strings.Split(text, ",") {
			k, v, ok := strings.Cut(strings.TrimSpace(field), "=")
			k, v = strings.ToLower(strings.TrimSpace(k)), strings.ToLower(strings.TrimSpace(v))
			if !ok || v == "" {
				return Spec{}, fmt.Errorf("path spec %q: %q is not module=method (modules se, pf, pr)", text, field)
			}
			if seen[k] {
				return Spec{}, fmt.Errorf("path spec %q: module %s given twice", text, k)
			}
			seen[k] = true
			m, err := parseModule(k, v)
			if err != nil {
				return Spec{}, fmt.Errorf("path spec %q: %w", text, err)
			}
			switch k {
			case "se":
				s.SE = m
			case "pf":
				s.PF = m
			case "pr":
				s.PR = m
			}
		}
	}
	if s.SE.Method == "" {
		s.SE = Module{Method: "ppr"}
	}
	if s.PF.Method == "" {
		s.PF = Module{Method: "spf"}
	}
	if s.PF.Method == "beam" && s.PF.Scorer == "" {
		s.PF.Scorer = "bm25"
	}
	if s.PR.Method == "" {
		s.PR = Module{Method: "bm25"}
		if s.PF.Scorer != "" {
			s.PR.Method = s.PF.Scorer
		}
	}
	return s, nil
}

func parseModule(key, v string) (Module, error) {
	parts := strings.Split(v, ":")
	m := Module{Method: parts[0]}
	var flags []string
	switch key {
	case "se":
		f, ok := seMethods[m.Method]
		if !ok {
			return m, fmt.Errorf("se=%s: unknown subgraph extraction (have %s)", m.Method, keys(seMethods))
		}
		flags = f
	case "pf":
		f, ok := pfMethods[m.Method]
		if !ok {
			return m, fmt.Errorf("pf=%s: unknown path filter (have %s)", m.Method, keys(pfMethods))
		}
		flags = f
	case "pr":
		if !prMethods[m.Method] {
			return m, fmt.Errorf("pr=%s: unknown path refinement (have bm25, emb, llm, random, none)", m.Method)
		}
		if m.Method == "none" || m.Method == "random" {
			if len(parts) > 1 {
				return m, fmt.Errorf("pr=%s: %s takes no options", v, m.Method)
			}
			return m, nil
		}
		for _, p := range parts[1:] {
			if p != "triple" {
				return m, fmt.Errorf("pr=%s: unknown option %q (flags: triple)", v, p)
			}
			if !m.Has(p) {
				m.Flags = append(m.Flags, p)
			}
		}
		return m, nil
	default:
		return m, fmt.Errorf("unknown module %q (have se, pf, pr)", key)
	}
	for _, p := range parts[1:] {
		switch {
		case slices.Contains(scorerNames, p):
			if m.Scorer != "" {
				return m, fmt.Errorf("%s=%s: two scorers", key, v)
			}
			if key == "pf" && m.Method != "beam" {
				return m, fmt.Errorf("pf=%s: only beam search takes a scorer (refine with pr=%s)", v, p)
			}
			m.Scorer = p
		case slices.Contains(flags, p):
			if !m.Has(p) {
				m.Flags = append(m.Flags, p)
			}
		default:
			known := "none"
			if len(flags) > 0 {
				known = strings.Join(flags, ", ")
			}
			return m, fmt.Errorf("%s=%s: unknown option %q (scorers %s; flags %s)", key, v, p, strings.Join(scorerNames, ", "), known)
		}
	}
	if m.Has("exact") && m.Has("push") {
		return m, fmt.Errorf("%s=%s: exact and push exclude each other", key, v)
	}
	sort.Strings(m.Flags)
	return m, nil
}

func keys[V any](m map[string]V) string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

func instanceList() string {
	ns := make([]int, 0, len(Instances))
	for n := range Instances {
		ns = append(ns, n)
	}
	sort.Ints(ns)
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, ", ")
}
