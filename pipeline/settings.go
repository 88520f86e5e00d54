package pipeline

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// bound is the range a numeric setting must lie in, both ends included,
// written in the flag's own syntax ("1", "0.5", "2m"); zero for settings
// that are not numbers.
type bound struct{ lo, hi string }

// configKeys are every key docgraph.yaml may hold: the flags of all
// docgraph commands (ingest, ingest status, ingest delete, query, query
// eval), so one file serves them all and a key none of them knows is a
// typo worth reporting. A command ignores the keys of the others. Numeric
// settings carry the range ApplyConfig holds them to; a new flag goes here
// too (the command tests check that every flag is listed).
var configKeys = map[string]bound{
	// store and embedder (every command)
	"store": {}, "embedder": {}, "neo4j-database": {}, "neo4j-user": {}, "neo4j-password": {},
	"batch-size": {"1", "100000"}, "write-retry-budget": {"0s", "24h"},
	// ingest
	"chunk-tokens": {"16", "65536"}, "chunk-overlap": {"0", "65535"}, "concurrency": {"1", "256"},
	"prune": {}, "json": {}, "watch": {}, "dry-run": {},
	"debounce": {"0s", "1h"}, "shutdown-timeout": {"0s", "24h"}, "kg-triples": {},
	"max-file-size": {"1KiB", "1GiB"}, "follow-outside-links": {},
	// models (ingest, delete, query)
	"llm": {}, "gleaning": {"0", "20"}, "ner-variant": {}, "entity-types": {},
	"llm-concurrency": {"1", "1024"}, "rpm": {"0", "100000000"}, "tpm": {"0", "10000000000"},
	"llm-timeout": {"0s", "24h"}, "llm-retries": {"0", "100"}, "llm-cache": {},
	"llm-context-tokens": {"256", "100000000"}, "description-tokens": {"16", "1000000"}, "llm-stall": {"0s", "168h"},
	// query
	"mode": {}, "context-only": {}, "raw": {}, "timeout": {"0s", "24h"}, "deadline": {"0s", "24h"},
	"top-k": {"1", "10000"}, "candidates": {"1", "100000"}, "max-entities": {"1", "100000"},
	"max-relations": {"1", "100000"}, "fact-top-k": {"1", "100000"}, "fact-threshold": {"0.001", "1"},
	"min-facts": {"1", "100000"}, "damping": {"0.01", "0.99"}, "max-entity-chunks": {"0", "100000000"},
	"path-weight": {"0", "1000"}, "path-signal": {}, "cypher": {}, "cypher-limit": {"1", "100000"},
	"max-context-tokens": {"256", "100000000"}, "response-type": {},
	// path retrieval (query --mode path, query eval --metaqa)
	"paths": {}, "max-ent": {"1", "100000000"}, "max-hop": {"1", "10"}, "beam-width": {"1", "10000"},
	"max-beam": {"0", "1000000"}, "restart": {"0", "1"}, "push-eps": {"1e-12", "1"},
	"triple-scoring": {}, "dynamic-pruning": {}, "per-target": {"1", "100000"},
	"max-paths": {"1", "100000000"}, "per-end": {"0", "100000"}, "seed": {}, "filter": {},
	"fi-threshold": {"0", "1"}, "fi-coarse": {"1", "100000"},
	// answer-side methods (query, query eval)
	"integrate": {}, "tau-g": {"0", "1"}, "tau-l": {"0", "1"},
	// query serve, query mcp
	"addr": {}, "http": {}, "token": {}, "access-log": {}, "max-concurrent": {"1", "10000"},
	"request-timeout": {"1ms", "24h"}, "refresh": {"0s", "1h"},
	// ingest show, ingest export
	"text": {}, "format": {}, "output": {}, "no-mentions": {},
	// ingest status
	"space": {},
	// query eval
	"dataset": {}, "baseline": {}, "store-dir": {}, "questions": {"0", "100000000"},
	"metaqa": {}, "hops": {},
}

// IsConfigKey reports whether name is a setting some docgraph command has.
func IsConfigKey(name string) bool {
	_, ok := configKeys[name]
	return ok
}

// RangeError is a setting outside its allowed range.
type RangeError struct {
	Flag   string // without dashes
	Value  string
	Lo, Hi string
	// Source is where the value came from: "" for the command line, else
	// the environment variable or config file.
	Source string
	// Rule says what the value broke when it is not a plain range.
	Rule string
}

func (e *RangeError) Error() string {
	from := ""
	if e.Source != "" {
		from = " (from " + e.Source + ")"
	}
	rule := e.Rule
	if rule == "" {
		rule = fmt.Sprintf("must be between %s and %s", e.Lo, e.Hi)
	}
	return fmt.Sprintf("--%s %s%s: %s", e.Flag, e.Value, from, rule)
}

// CommandLine says the value was typed on the command line, so the
// command's usage is worth pointing at.
func (e *RangeError) CommandLine() bool { return e.Source == "" }

// checkRanges holds every numeric flag in fs to its bound in configKeys.
// sources names where values that were not typed came from.
func checkRanges(fs *pflag.FlagSet, sources map[string]string) error {
	var first error
	fs.VisitAll(func(f *pflag.Flag) {
		b, ok := configKeys[f.Name]
		if first != nil || !ok || b.lo == "" {
			return
		}
		if in, err := within(f.Value.Type(), f.Value.String(), b); err != nil || !in {
			first = &RangeError{Flag: f.Name, Value: f.Value.String(), Lo: b.lo, Hi: b.hi, Source: sources[f.Name]}
		}
	})
	if first != nil {
		return first
	}
	// The one rule that ties two flags together.
	tok, ovl := fs.Lookup("chunk-tokens"), fs.Lookup("chunk-overlap")
	if tok != nil && ovl != nil {
		t, _ := strconv.Atoi(tok.Value.String())
		o, _ := strconv.Atoi(ovl.Value.String())
		if o >= t {
			return &RangeError{Flag: "chunk-overlap", Value: ovl.Value.String(), Source: sources["chunk-overlap"],
				Rule: fmt.Sprintf("must be less than --chunk-tokens (%d)", t)}
		}
	}
	return nil
}

// within reports whether v, a flag value of type typ, lies in b.
func within(typ, v string, b bound) (bool, error) {
	switch typ {
	case "int", "int64", "int32":
		x, err := strconv.ParseInt(v, 10, 64)
		lo, _ := strconv.ParseInt(b.lo, 10, 64)
		hi, _ := strconv.ParseInt(b.hi, 10, 64)
		return x >= lo && x <= hi, err
	case "float64", "float32":
		x, err := strconv.ParseFloat(v, 64)
		lo, _ := strconv.ParseFloat(b.lo, 64)
		hi, _ := strconv.ParseFloat(b.hi, 64)
		return x >= lo && x <= hi, err
	case "size":
		x, err := ParseByteSize(v)
		lo, _ := ParseByteSize(b.lo)
		hi, _ := ParseByteSize(b.hi)
		return x >= lo && x <= hi, err
	case "duration":
		x, err := time.ParseDuration(v)
		lo, _ := time.ParseDuration(b.lo)
		hi, _ := time.ParseDuration(b.hi)
		return x >= lo && x <= hi, err
	}
	return true, nil
}

// closestKey is the known key nearest to name by edit distance, or "" when
// none is close enough to be the one meant.
func closestKey(name string) string {
	best, bestD := "", 4
	for k := range configKeys {
		if d := editDistance(name, k); d < bestD || (d == bestD && k < best) {
			best, bestD = k, d
		}
	}
	if bestD > max(1, len(name)/3) {
		return ""
	}
	return best
}

func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// configKey turns a key as written in docgraph.yaml (chunk_tokens or
// chunk-tokens) into the flag name.
func configKey(k string) string {
	return strings.ReplaceAll(strings.TrimSpace(k), "_", "-")
}
