package retrieve

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/tmc/langchaingo/llms"
	"golang.org/x/sync/errgroup"

	"github.com/docgraph/docgraph/graphbuild"
	"github.com/docgraph/docgraph/llm"
	"github.com/docgraph/docgraph/prompts"
)

// GraphRAG-FI's integration (paper 003, section 4.2, equations 4-6): the
// question is answered twice, from the retrieved context (GraphRAG) and
// from the model alone (LLM-only), both with token log-probabilities.
// Each answer becomes a list of candidates A_G and A_L whose confidence
// l(a) is the probability the model gave the candidate's tokens (the
// product of their softmax probabilities, exp of the summed
// log-probabilities); the candidates at or above tau_G and tau_L are kept
// (equations 4 and 5) and their union is the final answer (equation 6).

// Default thresholds: tau_L = 1 as in the paper (only answers the model is
// fully sure of without retrieval), tau_G = 0.5, the paper's best setting
// in its parameter study (Table 6).
const (
	DefaultTauG = 0.5
	DefaultTauL = 1.0
)

// confidenceTolerance is how far below a threshold a confidence may be and
// still meet it. The paper's models compute the softmax in 16-bit floats,
// where every probability above 1 - 2^-11 is exactly 1; providers return
// 32-bit log-probabilities such as -3e-7 for a certain token, which tau = 1
// would otherwise reject.
const confidenceTolerance = 1.0 / 2048

// ListAnswer is the response type that makes an answer a list of
// candidates, the shape integration reads (GraphRAG-FI's Figure 5: "keep
// the answer as simple as possible and return all the possible answers as
// a list").
const ListAnswer = "every possible answer as a list, one answer per line, each as short as possible " +
	"(a name, date, number or yes/no) followed by the sources it comes from as [n], and nothing else"

// IntegrateOptions are the two thresholds of equations 4 and 5, taken as
// given: 0 keeps every candidate (the naive merge the paper compares with
// in its Table 7); DefaultTauG and DefaultTauL are the paper's settings.
type IntegrateOptions struct {
	TauG float64 // GraphRAG candidates kept at or above this confidence
	TauL float64 // LLM-only candidates kept at or above this confidence
}

// Candidate is one answer candidate with its confidence.
type Candidate struct {
	Text string `json:"text"`
	// Confidence is the probability of the candidate's tokens, in [0, 1];
	// 0 when the provider returned no log-probabilities.
	Confidence float64 `json:"confidence"`
	Kept       bool    `json:"kept"`
	// Cites are the source numbers cited on the candidate's line.
	Cites []int `json:"cites,omitempty"`
	// Tokens is how many answer tokens the candidate spans.
	Tokens int `json:"tokens"`
}

// CandidateSet is one of the two answers read as candidates.
type CandidateSet struct {
	Answer     string      `json:"answer"`
	LogProbs   bool        `json:"logprobs"` // the provider returned token log-probabilities
	Threshold  float64     `json:"threshold"`
	Candidates []Candidate `json:"candidates"`
}

// Final is one candidate of the combined answer.
type Final struct {
	Text string `json:"text"`
	// From is "graphrag", "llm_only" or "both".
	From  string `json:"from"`
	Cites []int  `json:"cites,omitempty"`
	// ConfidenceG and ConfidenceL are its confidence in each answer that has it.
	ConfidenceG *float64 `json:"confidence_g,omitempty"`
	ConfidenceL *float64 `json:"confidence_l,omitempty"`
}

// Integration is the outcome of GraphRAG-FI's integration for one question.
type Integration struct {
	GraphRAG CandidateSet `json:"graphrag"`
	// LLMOnly is nil when the model alone was not asked (its provider
	// returns no log-probabilities).
	LLMOnly *CandidateSet `json:"llm_only"`
	Final   []Final       `json:"final"`
	// Answer is the final answer: the combined candidates one per line,
	// GraphRAG's with their citations; or GraphRAG's own answer when
	// Fallback says why the integration could not run.
	Answer   string `json:"answer"`
	Fallback string `json:"fallback,omitempty"`
	// NoLogProbs is set when the fallback is for want of log-probabilities.
	NoLogProbs bool `json:"no_logprobs,omitempty"`
}

// logProbsSupporter is implemented by models that know whether their
// provider can return log-probabilities (llm.Client).
type logProbsSupporter interface{ SupportsLogProbs() bool }

// Integrate runs GraphRAG-FI's integration: graphrag are the messages that
// ask for the answer from the retrieved context (as a list: see
// ListAnswer), question is asked of the model alone with
// prompts/templates/llm_only.tmpl. Both calls run at once. When the model
// cannot return log-probabilities, or returns none, GraphRAG's answer
// stands and Fallback says so (the model alone is then not asked, or not
// used).
func Integrate(ctx context.Context, model llms.Model, graphrag []llms.MessageContent, question string, o IntegrateOptions) (*Integration, error) {
	if model == nil {
		return nil, errors.New("integrate: needs a language model")
	}
	supported := true
	if s, ok := model.(logProbsSupporter); ok {
		supported = s.SupportsLogProbs()
	}
	opts := []llms.CallOption{llms.WithTemperature(0)}
	if !supported {
		g, _, err := generate(ctx, model, graphrag, opts)
		if err != nil {
			return nil, fmt.Errorf("integrate: graphrag answer: %w", err)
		}
		in := &Integration{GraphRAG: candidateSet(g, nil, o.TauG)}
		in.fallback("the model's provider returns no token log-probabilities", true)
		return in, nil
	}
	opts = append(opts, llm.WithLogProbs(0))
	only, err := prompts.RenderLLMOnly(question)
	if err != nil {
		return nil, err
	}
	var (
		gText, lText string
		gTok, lTok   []llm.TokenLogProb
	)
	eg, ectx := errgroup.WithContext(ctx)
	eg.Go(func() (err error) {
		gText, gTok, err = generate(ectx, model, graphrag, opts)
		return wrap("integrate: graphrag answer", err)
	})
	eg.Go(func() (err error) {
		lText, lTok, err = generate(ectx, model, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, only)}, opts)
		return wrap("integrate: llm-only answer", err)
	})
	if err := eg.Wait(); err != nil {
		return nil, err
	}
	g, l := candidateSet(gText, gTok, o.TauG), candidateSet(lText, lTok, o.TauL)
	in := &Integration{GraphRAG: g, LLMOnly: &l}
	if !g.LogProbs || !l.LogProbs {
		in.fallback("the model returned no token log-probabilities", true)
		return in, nil
	}
	in.combine()
	if len(in.Final) == 0 {
		in.fallback(fmt.Sprintf("no candidate reached tau_G %g or tau_L %g", o.TauG, o.TauL), false)
	}
	return in, nil
}

// fallback makes GraphRAG's answer the final one, keeping every candidate.
func (in *Integration) fallback(why string, noLogProbs bool) {
	in.Fallback = why + "; GraphRAG's answer stands"
	in.NoLogProbs = noLogProbs
	in.Answer = strings.TrimSpace(in.GraphRAG.Answer)
	in.Final = nil
	for _, c := range in.GraphRAG.Candidates {
		in.Final = append(in.Final, Final{Text: c.Text, From: "graphrag", Cites: c.Cites})
	}
}

// combine is equation 6: the kept GraphRAG candidates, in their order,
// then the kept LLM-only candidates GraphRAG did not already give.
func (in *Integration) combine() {
	at := map[string]int{}
	add := func(c Candidate, from string) {
		conf := c.Confidence
		k := graphbuild.NormalizeKey(c.Text)
		if i, ok := at[k]; ok {
			in.Final[i].From = "both"
			in.Final[i].ConfidenceL = &conf
			return
		}
		f := Final{Text: c.Text, From: from, Cites: c.Cites}
		if from == "graphrag" {
			f.ConfidenceG = &conf
		} else {
			f.ConfidenceL = &conf
		}
		at[k] = len(in.Final)
		in.Final = append(in.Final, f)
	}
	for _, c := range in.GraphRAG.Candidates {
		if c.Kept {
			add(c, "graphrag")
		}
	}
	for _, c := range in.LLMOnly.Candidates {
		if c.Kept {
			add(c, "llm_only")
		}
	}
	lines := make([]string, len(in.Final))
	for i, f := range in.Final {
		lines[i] = f.Line()
	}
	in.Answer = strings.Join(lines, "\n")
}

// Line is the candidate as the final answer writes it: its text and its citations.
func (f Final) Line() string {
	var b strings.Builder
	b.WriteString(f.Text)
	for _, n := range f.Cites {
		fmt.Fprintf(&b, " [%d]", n)
	}
	return b.String()
}

// generate makes one call and returns the answer with its token
// log-probabilities (nil when there are none).
func generate(ctx context.Context, model llms.Model, msgs []llms.MessageContent, opts []llms.CallOption) (string, []llm.TokenLogProb, error) {
	resp, err := model.GenerateContent(ctx, msgs, opts...)
	if err != nil {
		return "", nil, err
	}
	if len(resp.Choices) == 0 {
		return "", nil, errors.New("the model returned no choices")
	}
	tokens, _ := llm.LogProbs(resp.Choices[0])
	return resp.Choices[0].Content, tokens, nil
}

// candidateSet reads an answer as candidates and applies the threshold
// (equation 4 or 5); without tokens nothing is kept.
func candidateSet(answer string, tokens []llm.TokenLogProb, tau float64) CandidateSet {
	cs := CandidateSet{Answer: answer, LogProbs: len(tokens) > 0, Threshold: tau}
	cs.Candidates = Candidates(answer, tokens)
	for i := range cs.Candidates {
		cs.Candidates[i].Kept = cs.LogProbs && MeetsThreshold(cs.Candidates[i].Confidence, tau)
	}
	return cs
}

// MeetsThreshold says whether a confidence reaches tau, allowing for the
// precision log-probabilities come in (see confidenceTolerance).
func MeetsThreshold(confidence, tau float64) bool {
	return confidence >= tau-confidenceTolerance
}

var (
	bullet      = regexp.MustCompile(`^(?:[-*•+]|\d{1,2}[.)])\s+`)
	answerLabel = regexp.MustCompile(`(?i)^(?:final\s+)?answers?\s*:\s*`)
	citeRun     = regexp.MustCompile(`\[\s*\d+(?:\s*[,;]\s*\d+)*\s*\]`)
)

// Candidates reads a list answer as candidates: one per line (bullets,
// numbering, an "Answer:" label, emphasis and quotes stripped), or one per
// item of a bracketed list such as [a, b]; the [n] citations on a line
// are recorded and left out of the candidate. Refusals ("I don't know")
// and repeats are dropped. With tokens, a candidate's confidence is the
// product of the probabilities of the tokens that overlap its text; when
// the tokens do not spell the answer exactly, the tokens' own text is read.
func Candidates(answer string, tokens []llm.TokenLogProb) []Candidate {
	text := answer
	var starts []int
	if len(tokens) > 0 {
		var b strings.Builder
		starts = make([]int, len(tokens)+1)
		for i, t := range tokens {
			starts[i] = b.Len()
			b.WriteString(t.Text())
		}
		starts[len(tokens)] = b.Len()
		text = b.String()
	}
	base := 0
	if i := strings.LastIndex(text, "</think>"); i >= 0 {
		base = i + len("</think>")
	}
	var out []Candidate
	seen := map[string]bool{}
	for _, line := range lineSpans(text, base) {
		cites := citationNumbers(text[line[0]:line[1]])
		for _, sp := range itemSpans(text, line) {
			s, e := cleanSpan(text, sp[0], sp[1])
			if s >= e {
				continue
			}
			cand := text[s:e]
			k := graphbuild.NormalizeKey(cand)
			if k == "" || seen[k] || refusal(k) {
				continue
			}
			seen[k] = true
			c := Candidate{Text: cand, Cites: cites}
			if len(tokens) > 0 {
				sum := 0.0
				for i, t := range tokens {
					if starts[i] < e && starts[i+1] > s {
						sum += t.LogProb
						c.Tokens++
					}
				}
				c.Confidence = math.Exp(sum)
			}
			out = append(out, c)
		}
	}
	return out
}

// lineSpans are the byte ranges of text's lines from base on.
func lineSpans(text string, base int) [][2]int {
	var out [][2]int
	for s := base; s < len(text); {
		e := strings.IndexByte(text[s:], '\n')
		if e < 0 {
			e = len(text)
		} else {
			e += s
		}
		out = append(out, [2]int{s, e})
		s = e + 1
	}
	return out
}

// itemSpans splits a line that is a bracketed list ([a, b] or ["a", "b"])
// into its items; any other line is one item. A line of citations only,
// such as [1][2], is no list.
func itemSpans(text string, line [2]int) [][2]int {
	s, e := line[0], line[1]
	for s < e && isSpace(text[s]) {
		s++
	}
	for e > s && (isSpace(text[e-1]) || text[e-1] == '.') {
		e--
	}
	if e-s < 2 || text[s] != '[' || text[e-1] != ']' || citeRun.MatchString(text[s:e]) && citeRun.ReplaceAllString(text[s:e], "") == "" {
		return [][2]int{line}
	}
	var out [][2]int
	from := s + 1
	for i := s + 1; i <= e-1; i++ {
		if i == e-1 || text[i] == ',' {
			out = append(out, [2]int{from, i})
			from = i + 1
		}
	}
	return out
}

// cleanSpan narrows [s, e) to the candidate: no surrounding space, bullet,
// label, emphasis, quotes or final punctuation, and nothing from the first
// citation on.
func cleanSpan(text string, s, e int) (int, int) {
	if loc := citeRun.FindStringIndex(text[s:e]); loc != nil {
		e = s + loc[0]
	}
	for {
		s0, e0 := s, e
		for s < e && strings.IndexByte(" \t\r*_`\"'", text[s]) >= 0 {
			s++
		}
		for e > s && strings.IndexByte(" \t\r*_`\"'.,;:", text[e-1]) >= 0 {
			e--
		}
		for _, q := range []string{"“", "”", "‘", "’", "«", "»"} {
			if strings.HasPrefix(text[s:e], q) {
				s += len(q)
			}
			if strings.HasSuffix(text[s:e], q) {
				e -= len(q)
			}
		}
		if loc := bullet.FindStringIndex(text[s:e]); loc != nil {
			s += loc[1]
		}
		if loc := answerLabel.FindStringIndex(text[s:e]); loc != nil {
			s += loc[1]
		}
		if s == s0 && e == e0 {
			return s, e
		}
	}
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\r' }

// citationNumbers are the [n] citations of a line, in order, each once.
func citationNumbers(line string) []int {
	var out []int
	seen := map[int]bool{}
	for _, m := range citeRun.FindAllString(line, -1) {
		for n := range Citations(m) {
			if !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	slices.Sort(out)
	return out
}

// refusal says whether a normalised candidate says there is no answer.
func refusal(key string) bool {
	switch key {
	case "none", "unknown", "n a", "no answer", "not known", "not available":
		return true
	}
	for _, p := range []string{"i dont know", "i do not know", "i cannot", "i cant", "cannot be determined",
		"the sources do not", "the context does not", "the paths do not", "not enough information", "no information"} {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}
