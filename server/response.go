package server

import (
	"context"
	"encoding/json"
	"io"
	"time"

	"github.com/docgraph/docgraph/llm"
	"github.com/docgraph/docgraph/retrieve"
	"github.com/docgraph/docgraph/retrieve/paths"
)

// Response is the JSON document of one query: `query --json` prints it,
// and a server answering queries should send it too. Every mode fills the
// same keys: a list the mode has nothing for is [], an object it has none
// of is null, a string "". README.md ("JSON output") documents the keys.
type Response struct {
	Question string `json:"question"`
	Mode     string `json:"mode"`
	// Answer is the model's answer ("" without --llm); Sources are the
	// numbered passages it was given, Cited set for those it cites.
	Answer  string            `json:"answer"`
	Sources []retrieve.Source `json:"sources"`
	// Passages are the ranked passages; in path mode, the chunks the paths
	// came from, scored by their best path.
	Passages  []retrieve.Passage      `json:"passages"`
	Entities  []retrieve.EntityInfo   `json:"entities"`
	Relations []retrieve.RelationInfo `json:"relations"`
	Facts     []retrieve.RelationInfo `json:"facts"`
	// Paths are reasoning paths: path mode's result, or mix's path signal.
	Paths    []paths.Path           `json:"paths"`
	Keywords *retrieve.Keywords     `json:"keywords"`
	Hint     string                 `json:"hint"`
	Cypher   *retrieve.CypherResult `json:"cypher"`
	// PathSearch is what path mode did to find its paths (null elsewhere).
	PathSearch *PathSearch `json:"path_search"`
	// Logic is logic mode's plan and step results and Precheck its
	// verifier's verdict (null elsewhere); AnsweredBy names the retrieval
	// that answered ("logic", or "mix" when the logic form could not) and
	// FallbackReason why it fell back.
	Logic          *retrieve.LogicTrace `json:"logic"`
	Precheck       *retrieve.Precheck   `json:"precheck"`
	AnsweredBy     string               `json:"answered_by"`
	FallbackReason string               `json:"fallback_reason"`
	// Integration is GraphRAG-FI's integration of the retrieved answer
	// with the model's own (--integrate; null otherwise); CandidateChunks
	// are, in path mode, the chunks of the paths naming each candidate.
	Integration     *retrieve.Integration    `json:"integration"`
	CandidateChunks map[string][]string      `json:"candidate_chunks"`
	ContextTokens   int                      `json:"context_tokens"`
	Timings         map[string]time.Duration `json:"timings_ns"`
	// Warnings say what the retrieval did without, e.g. vector search when
	// the embedder failed.
	Warnings []string `json:"warnings"`
	// LLMUsage is what the query cost in chat calls and tokens (zero
	// without --llm or when every call was answered from the cache).
	LLMUsage llm.UsageCounts `json:"llm_usage"`
}

// ModePath is the mode of a path query: the knowledge-graph paths between
// the question's entities rather than ranked passages.
const ModePath = "path"

// PathSearch is path mode's account of its search.
type PathSearch struct {
	Spec       string         `json:"spec"`
	Seeds      []paths.Entity `json:"seeds"`
	Subgraph   int            `json:"subgraph"`
	Candidates int            `json:"candidates"`
	// Priority and Additional are GraphRAG-FI's split of the paths ([] when
	// the paths were not filtered).
	Priority   []paths.Path `json:"priority"`
	Additional []paths.Path `json:"additional"`
	Notes      []string     `json:"notes"`
}

// NewResponse is the Response of a passage retrieval (every mode but path)
// laid out as context c.
func NewResponse(res *retrieve.Result, c *retrieve.Context) *Response {
	r := &Response{
		Question: res.Question, Mode: res.Mode,
		Passages: res.Passages, Entities: res.Entities, Relations: res.Relations, Facts: res.Facts,
		Paths: res.Paths, Keywords: res.Keywords, Hint: res.Hint, Cypher: res.Cypher,
		Timings: res.Timings, Warnings: orEmpty(res.Warnings),
	}
	if c != nil {
		r.Sources, r.ContextTokens = c.Sources, c.Tokens
	}
	return r
}

// NewPathResponse is the Response of a path retrieval; passages are the
// chunks its paths came from.
func NewPathResponse(res *paths.Result, passages []retrieve.Passage) *Response {
	return &Response{
		Question: res.Question, Mode: ModePath, Paths: res.Paths, Passages: passages, Timings: res.Timings, Warnings: []string{},
		PathSearch: &PathSearch{
			Spec: res.Spec, Seeds: res.Seeds, Subgraph: res.Subgraph, Candidates: res.Candidates,
			Priority: res.Priority, Additional: res.Additional, Notes: res.Notes,
		},
	}
}

// SetAnswer records the model's answer and which sources it cites.
func (r *Response) SetAnswer(a *retrieve.AnswerResult) {
	r.Answer, r.Sources = a.Text, a.Sources
}

// MarshalJSON writes every key: lists the mode had nothing for as [],
// maps as {}, so a client never meets null where a list belongs.
func (r Response) MarshalJSON() ([]byte, error) {
	out := r
	out.Sources = orEmpty(out.Sources)
	out.Passages = make([]retrieve.Passage, len(r.Passages))
	for i, p := range r.Passages {
		if p.Signals == nil {
			p.Signals = map[string]int{}
		}
		out.Passages[i] = p
	}
	out.Entities = orEmpty(out.Entities)
	out.Relations = orEmpty(out.Relations)
	out.Facts = orEmpty(out.Facts)
	out.Paths = orEmpty(out.Paths)
	if out.Timings == nil {
		out.Timings = map[string]time.Duration{}
	}
	if out.CandidateChunks == nil {
		out.CandidateChunks = map[string][]string{}
	}
	if ps := out.PathSearch; ps != nil {
		c := *ps
		c.Seeds, c.Priority, c.Additional, c.Notes = orEmpty(c.Seeds), orEmpty(c.Priority), orEmpty(c.Additional), orEmpty(c.Notes)
		out.PathSearch = &c
	}
	type plain Response // without this method
	return json.Marshal(plain(out))
}

// Write prints r as indented JSON, with the model usage counted under ctx
// (llm.WithUsage).
func (r *Response) Write(ctx context.Context, w io.Writer) error {
	r.LLMUsage = llm.UsageFrom(ctx).Counts()
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// orEmpty is s, or an empty list where s is nil, so that JSON shows [].
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
