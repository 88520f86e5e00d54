package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tmc/langchaingo/llms"

	"github.com/docgraph/docgraph/internal/termtext"
	"github.com/docgraph/docgraph/llm"
	"github.com/docgraph/docgraph/retrieve"
	"github.com/docgraph/docgraph/retrieve/paths"
)

// A question run start to end as `query` runs it: Session.Ask retrieves
// and builds what the model gets, Run.Answer asks the model (streaming
// the answer when told where), and Run.Response is the JSON document of
// the whole. A caller prints what each stage found as it comes: a plan or
// the paths before the answer that follows them.

// IntegrateLogits is the Question.Integrate of GraphRAG-FI's integration:
// the retrieved answer and the model's own, weighed by their tokens'
// log-probabilities.
const IntegrateLogits = "logits"

// CheckAnswerMethods checks the answer-side settings of a run over
// modes, integrate applying to those in integrated: integrate names a
// known method and modes it works with, o's thresholds are probabilities,
// and what needs a model (logic mode, integration) has one. Its messages
// name query's flags.
func CheckAnswerMethods(modes, integrated []string, integrate string, o retrieve.IntegrateOptions, haveModel bool) error {
	for _, t := range []struct {
		name string
		v    float64
	}{{"tau-g", o.TauG}, {"tau-l", o.TauL}} {
		if t.v < 0 || t.v > 1 {
			return fmt.Errorf("--%s %v: a confidence is between 0 and 1", t.name, t.v)
		}
	}
	switch integrate {
	case "":
	case IntegrateLogits:
		for _, m := range integrated {
			if m != retrieve.ModeMix && m != ModePath {
				return fmt.Errorf("--integrate logits works with --mode mix or path, not %s", m)
			}
		}
		if !haveModel {
			return errors.New("--integrate logits needs --llm: it weighs the model's answers by their token log-probabilities, and offline there is no model to ask")
		}
	default:
		return fmt.Errorf("--integrate %q: unknown method (available: logits)", integrate)
	}
	for _, m := range modes {
		if m == retrieve.ModeLogic && !haveModel {
			return errors.New("--mode logic needs --llm: the model decomposes the question into steps and checks their result (offline, use --mode mix)")
		}
	}
	return nil
}

// Question is one question and how to answer it.
type Question struct {
	Text string
	// Mode is a retrieval mode (Modes).
	Mode string
	// ContextOnly stops once what the model would get is built: Ask then
	// leaves out what only the answer needs (path mode's passages).
	ContextOnly bool
	// Integrate is "" or IntegrateLogits (mix and path modes), with
	// IntegrateOptions its thresholds.
	Integrate        string
	IntegrateOptions retrieve.IntegrateOptions
	// Spec and Paths are path mode's modules and settings; Seeds are the
	// entities its paths start from (none: those the question names).
	Spec  paths.Spec
	Paths PathConfig
	Seeds []string
}

// Run is what a Question found, stage by stage.
type Run struct {
	Question Question
	// Result is the passage retrieval that answers (every mode but path;
	// in logic mode the logic form's, or mix's when it could not answer)
	// and Context what the model gets from it.
	Result  *retrieve.Result
	Context *retrieve.Context
	// Logic is logic mode's plan, pre-check and verdict.
	Logic *retrieve.LogicOutcome
	// Path is path mode's paths and answer prompt, Passages the chunks
	// they came from and PathSources where each chunk lives.
	Path        *PathRun
	Passages    []retrieve.Passage
	PathSources map[string]PathSource
	// AnswerResult is the model's cited answer (passage and logic modes),
	// PathAnswer its answer to path mode's prompt.
	AnswerResult *retrieve.AnswerResult
	PathAnswer   string
	// Integration is GraphRAG-FI's answer (Question.Integrate); Sources
	// are then the context's passages with those it cites marked, and
	// CandidateChunks (path mode) the chunks of the paths naming each
	// candidate.
	Integration     *retrieve.Integration
	Sources         []retrieve.Source
	CandidateChunks map[string][]string

	s     *Session
	start time.Time
}

// Ask retrieves for q and builds what the model gets; Answer asks it.
func (s *Session) Ask(ctx context.Context, q Question) (*Run, error) {
	r := &Run{Question: q, s: s, start: time.Now()}
	var err error
	switch {
	case q.Mode == ModePath:
		if r.Path, err = s.Paths(ctx, q.Text, q.Spec, q.Paths, q.Seeds); err != nil || q.ContextOnly {
			return r, err
		}
		r.Passages, r.PathSources, err = s.Passages(ctx, r.Path)
	case q.Mode == retrieve.ModeLogic:
		if r.Logic, err = s.Logic(ctx, q.Text); err != nil {
			return nil, err
		}
		r.Result, r.Context = r.Logic.Result, r.Logic.Context
		Step(ctx, "answer")
	case q.Integrate != "":
		// Integration needs the answer as a list of candidates.
		if r.Result, err = s.Retrieve(ctx, q.Text, q.Mode); err == nil {
			r.Context, err = s.Context(r.Result, retrieve.ListAnswer)
		}
	default:
		if r.Result, err = s.Retrieve(ctx, q.Text, q.Mode); err == nil {
			r.Context, err = s.Assemble(ctx, r.Result, s.cfg.ResponseType)
		}
	}
	if err != nil {
		return nil, err
	}
	return r, nil
}

// ContextText is what the model gets: the assembled context, or path
// mode's answer prompt.
func (r *Run) ContextText() string {
	if r.Path != nil {
		return r.Path.Prompt
	}
	return r.Context.String()
}

// Answerable says whether Answer asks the model for an answer: there is
// a model and something was retrieved, or the question integrates.
func (r *Run) Answerable() bool {
	if r.Question.Integrate != "" || r.Logic != nil {
		return true
	}
	if r.s.Model == nil {
		return false
	}
	if r.Path != nil {
		return len(r.Path.Result.Paths) > 0
	}
	return len(r.Result.Passages) > 0
}

// Answer asks the model: GraphRAG-FI's integration when the question
// integrates, else the answer to the context or path prompt, streamed to
// stream unless it is nil. It does nothing when the run is not
// Answerable. An answer that breaks off after part of it streamed fails
// with an error saying the part printed is incomplete.
func (r *Run) Answer(ctx context.Context, stream io.Writer) error {
	err := r.answer(ctx, stream)
	if r.Path == nil && r.Result != nil {
		r.Result.Timings["total"] = time.Since(r.start)
	}
	return err
}

func (r *Run) answer(ctx context.Context, stream io.Writer) error {
	var err error
	q := r.Question
	if q.Integrate != "" {
		var msgs []llms.MessageContent
		timings := map[string]time.Duration(nil)
		if r.Path != nil {
			msgs, timings = []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, r.Path.Prompt)}, r.Path.Result.Timings
		} else if msgs, err = r.Context.Messages(); err != nil {
			return err
		} else {
			timings = r.Result.Timings
		}
		if r.Integration, err = r.s.Integrate(ctx, msgs, q.Text, q.IntegrateOptions, timings); err != nil {
			return err
		}
		if r.Path != nil {
			r.CandidateChunks = CandidateChunks(r.Path.Result.Paths, r.Integration)
		} else {
			r.Sources = CitedSources(r.Context.Sources, r.Integration)
		}
		return nil
	}
	if r.Path != nil {
		Step(ctx, "answer")
	}
	if !r.Answerable() {
		return nil
	}
	Step(ctx, "answer")
	lw := &lineWriter{w: stream}
	var w io.Writer
	if stream != nil {
		w = lw
	}
	t := time.Now()
	if r.Path != nil {
		msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, r.Path.Prompt)}
		r.PathAnswer, err = retrieve.Generate(ctx, r.s.Model, msgs, w)
		if err != nil {
			err = fmt.Errorf("answer: %w", err)
		} else if stream == nil {
			r.Path.Result.Timings["answer"] = time.Since(t)
		}
	} else if r.AnswerResult, err = retrieve.Answer(ctx, r.s.Model, r.Context, w); err == nil && stream == nil {
		r.Result.Timings["answer"] = time.Since(t)
	}
	if stream != nil {
		lw.endLine()
		return lw.cut(err)
	}
	return err
}

// Response is the JSON document of the run (`query --json`).
func (r *Run) Response() *Response {
	if r.Path != nil {
		doc := NewPathResponse(r.Path.Result, r.Passages)
		doc.Answer = r.PathAnswer
		if in := r.Integration; in != nil {
			doc.Answer, doc.Integration, doc.CandidateChunks = in.Answer, in, r.CandidateChunks
		}
		return doc
	}
	doc := NewResponse(r.Result, r.Context)
	if r.AnswerResult != nil {
		doc.SetAnswer(r.AnswerResult)
	}
	if in := r.Integration; in != nil {
		doc.Answer, doc.Sources, doc.Integration = in.Answer, r.Sources, in
	}
	if l := r.Logic; l != nil {
		doc.Mode = retrieve.ModeLogic
		doc.Logic, doc.Precheck, doc.AnsweredBy, doc.FallbackReason = l.Logic.Logic, l.Precheck, l.AnsweredBy, l.Reason
	}
	return doc
}

// Verdict says which retrieval answers a logic-mode run, and why mix
// does when the logic form could not.
func (r *Run) Verdict() string {
	if r.Logic.AnsweredBy != retrieve.ModeLogic {
		return "answered by mix: " + r.Logic.Reason
	}
	return "answered by the logic form (pre-check: yes)"
}

// WriteLogic prints a logic-mode run's plan, the history of its steps and
// the verdict.
func (r *Run) WriteLogic(w io.Writer) {
	plan := r.Logic.Logic.Logic
	fmt.Fprintf(w, "logic form: %d step(s)\n", len(plan.Steps))
	if plan.Error != "" {
		fmt.Fprintln(w, "  plan unusable:", plan.Error)
	}
	for _, l := range retrieve.LogicHistory(r.Logic.Logic) {
		fmt.Fprintln(w, l)
	}
	fmt.Fprintf(w, "\n%s\n\n", r.Verdict())
}

// WritePaths prints a path-mode run: the seeds, what the search did, and
// each path with the chunks it came from, in the two lists of a filter
// that ranked them.
func (r *Run) WritePaths(w io.Writer) {
	res := r.Path.Result
	var seeds []string
	for _, s := range res.Seeds {
		seeds = append(seeds, termtext.Escape(s.Name))
	}
	if len(seeds) == 0 {
		fmt.Fprintln(w, "no entity of the graph is named in the question (try --seed NAME)")
		return
	}
	fmt.Fprintf(w, "seeds: %s\n", strings.Join(seeds, ", "))
	fmt.Fprintf(w, "%s: %d entities in the subgraph, %d candidate paths, %d kept (%s)\n",
		res.Spec, res.Subgraph, res.Candidates, len(res.Paths), res.Timings["total"].Round(100*time.Microsecond))
	for _, n := range res.Notes {
		fmt.Fprintln(w, "note:", termtext.OneLine(n, 0))
	}
	list := func(title string, ps []paths.Path) {
		if title != "" {
			fmt.Fprintf(w, "\n%s:\n", title)
		} else {
			fmt.Fprintln(w)
		}
		for i, p := range ps {
			fmt.Fprintf(w, "[%d] %.4f  %s\n", i+1, p.Score, termtext.Escape(p.Text))
			if from := r.chunksFrom(p.Chunks()); from != "" {
				fmt.Fprintf(w, "    from: %s\n", from)
			}
		}
	}
	if r.Path.Additional != nil || res.Priority != nil {
		list("High priority paths", r.Path.Priority)
		list("Additional paths", r.Path.Additional)
		return
	}
	list("", r.Path.Priority)
}

// chunksFrom names where chunks live, grouped by document in their order:
// "a.md chunks 1, 4; b.md chunk 2".
func (r *Run) chunksFrom(chunks []string) string {
	var docs []string
	byDoc := map[string][]string{}
	for _, c := range chunks {
		s, ok := r.PathSources[c]
		if !ok {
			continue
		}
		d := DisplayPath(s.DocPath)
		if _, seen := byDoc[d]; !seen {
			docs = append(docs, d)
		}
		byDoc[d] = append(byDoc[d], strconv.Itoa(s.Index))
	}
	var from []string
	for _, d := range docs {
		word := "chunk"
		if len(byDoc[d]) > 1 {
			word = "chunks"
		}
		from = append(from, fmt.Sprintf("%s %s %s", d, word, strings.Join(byDoc[d], ", ")))
	}
	return strings.Join(from, "; ")
}

// WriteIntegration prints the run's integrated answer, one candidate a
// line with where it comes from and its confidence; in path mode each
// candidate's line is followed by the chunks of the paths naming it.
func (r *Run) WriteIntegration(w io.Writer) {
	in := r.Integration
	if in.Fallback != "" {
		fmt.Fprintln(w, strings.TrimSpace(in.Answer))
		return
	}
	width := 0
	lines := make([]string, len(in.Final))
	for i, f := range in.Final {
		lines[i] = f.Line()
		width = max(width, len(lines[i]))
	}
	for i, f := range in.Final {
		var why string
		switch f.From {
		case "graphrag":
			why = fmt.Sprintf("retrieved, confidence %.2f", *f.ConfidenceG)
		case "llm_only":
			why = fmt.Sprintf("model alone, confidence %.2f", *f.ConfidenceL)
		default:
			why = fmt.Sprintf("retrieved %.2f and model alone %.2f", *f.ConfidenceG, *f.ConfidenceL)
		}
		fmt.Fprintf(w, "%-*s  (%s)\n", width, lines[i], why)
		if r.Path == nil {
			continue
		}
		var where []string
		for _, id := range r.CandidateChunks[f.Text] {
			if s, ok := r.PathSources[id]; ok {
				where = append(where, fmt.Sprintf("%s chunk %d", DisplayPath(s.DocPath), s.Index))
			}
		}
		if len(where) > 0 {
			fmt.Fprintf(w, "    from: %s\n", strings.Join(where, "; "))
		}
	}
}

// WriteText prints the run for people, streaming the answer when it
// asks the model for one (Answer; an integrated answer must be in
// already): the logic plan or the paths, then the answer and the sources
// it cites; without a model, the ranked passages.
func (r *Run) WriteText(ctx context.Context, w io.Writer) error {
	switch {
	case r.Path != nil:
		r.WritePaths(w)
		if r.Integration != nil {
			fmt.Fprintln(w, "\nAnswer:")
			r.WriteIntegration(w)
		} else if r.Answerable() {
			fmt.Fprintln(w, "\nAnswer:")
			return r.Answer(ctx, w)
		}
	case r.Integration != nil:
		r.WriteIntegration(w)
		var cited []retrieve.Source
		for _, s := range r.Sources {
			if s.Cited {
				cited = append(cited, s)
			}
		}
		WriteSources(w, cited)
	case r.Logic != nil:
		r.WriteLogic(w)
		if err := r.Answer(ctx, w); err != nil {
			return err
		}
		WriteSources(w, r.AnswerResult.Cited())
	case len(r.Result.Passages) == 0:
		fmt.Fprintln(w, "no passages found (has anything been ingested into this store?)")
	case r.s.Model == nil:
		for i, p := range r.Result.Passages {
			fmt.Fprintf(w, "[%d] %.4f  %s  (chunk %d)\n", i+1, p.Score, DisplayPath(p.DocPath), p.Index)
			fmt.Fprintf(w, "    %s\n\n", termtext.Escape(termtext.Snippet(p.Text, 320)))
		}
	default:
		if err := r.Answer(ctx, w); err != nil {
			return err
		}
		fmt.Fprintln(w, "\nSources:")
		for _, s := range r.AnswerResult.Cited() {
			fmt.Fprintf(w, "[%d] %s (chunk %d)\n", s.N, DisplayPath(s.DocPath), s.Index)
		}
	}
	return nil
}

// WriteSources prints sources under a "Sources:" heading, nothing when
// there are none.
func WriteSources(w io.Writer, sources []retrieve.Source) {
	if len(sources) == 0 {
		return
	}
	fmt.Fprintln(w, "\nSources:")
	for _, s := range sources {
		fmt.Fprintf(w, "[%d] %s (chunk %d)\n", s.N, DisplayPath(s.DocPath), s.Index)
	}
}

// DisplayPath is p relative to the working directory when it lies under
// it, escaped for a terminal.
func DisplayPath(p string) string {
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, p); err == nil && !strings.HasPrefix(rel, "..") {
			return termtext.Escape(rel)
		}
	}
	return termtext.Escape(p)
}

// lineWriter passes a streamed answer through and remembers whether it
// left a line open, so the next output (sources, or an error on stderr
// after a partial answer) starts on a line of its own, and how much of the
// answer it printed, so that an answer that breaks off says so.
type lineWriter struct {
	w    io.Writer
	open bool
	n    int
}

func (l *lineWriter) Write(p []byte) (int, error) {
	if len(p) > 0 {
		l.open = p[len(p)-1] != '\n'
	}
	n, err := l.w.Write(p)
	l.n += n
	return n, err
}

func (l *lineWriter) endLine() {
	if l.open {
		fmt.Fprintln(l.w)
		l.open = false
	}
}

// cut is err, the failure of a streamed answer, saying that what was
// printed of it is not the whole answer when some of it was.
func (l *lineWriter) cut(err error) error {
	if err == nil || l.n == 0 {
		return err
	}
	return &cutAnswer{n: l.n, err: err}
}

// cutAnswer is a streamed answer that failed after part of it was printed:
// a user reading the screen must not take that part for the answer.
type cutAnswer struct {
	n   int
	err error
}

func (e *cutAnswer) Error() string {
	return fmt.Sprintf("the answer printed above is incomplete: it broke off after %d bytes: %v", e.n, e.err)
}

func (e *cutAnswer) Unwrap() error { return e.err }

// deadline is the cause of a run stopped by its deadline.
type deadline struct{ d time.Duration }

func (e deadline) Error() string {
	return fmt.Sprintf("no result within --deadline %s (raise it, or 0 for none)", e.d)
}

// WithDeadline bounds the run under ctx by d (0: no bound) and counts its
// model calls (llm.WithUsage, which Response.Write reports). When the
// deadline ends the run, settle, given the run's error, says which step
// it ran out in and what it waited for: the calls of model (a chat
// model's spec, "" without one) in flight, with the attempts so far, or
// the step itself. Call settle once the run is over; it releases the
// deadline's resources.
func WithDeadline(ctx context.Context, d time.Duration, model string) (_ context.Context, settle func(error) error) {
	u := &llm.Usage{}
	ctx = llm.WithUsage(ctx, u)
	if d <= 0 {
		return ctx, func(err error) error { return err }
	}
	ctx, cancel := context.WithTimeoutCause(ctx, d, deadline{d})
	expiring := ctx
	prog := &progress{model: model, Steps: NewSteps(func() bool { return expiring.Err() != nil })}
	ctx = WithSteps(ctx, prog.Steps)
	Step(ctx, "opening the store and models")
	return ctx, func(err error) error {
		defer cancel()
		var dl deadline
		if err != nil && errors.As(context.Cause(expiring), &dl) {
			return prog.deadlineError(dl.d, u, err)
		}
		return err
	}
}

// progress is the step a query is at and the model calls it waits for,
// so that a query whose deadline ran out can say what it was waiting for.
type progress struct {
	*Steps
	model string // the chat model's spec, "" without one
}

// deadlineError says which step the deadline d ran out in: the model
// calls in flight, with the attempts so far, or the step itself. What
// failed on the expired context (a store read, a fallback) is left out
// when it is only the deadline seen from inside: it would hide which step
// ran out.
func (p *progress) deadlineError(d time.Duration, u *llm.Usage, err error) error {
	e := p.stepError(d, u, err)
	var cut *cutAnswer
	if sd, ok := e.(*stepDeadline); ok && errors.As(err, &cut) {
		// The message replaces the stream's error, but not its news.
		sd.msg += fmt.Sprintf(": the answer printed above is incomplete (%d bytes)", cut.n)
	}
	return e
}

func (p *progress) stepError(d time.Duration, u *llm.Usage, err error) error {
	step, waitingFor := p.Snapshot()
	model := p.model
	const raise = "raise --deadline, or 0 for none"
	waiting, attempts := u.Waiting()
	switch {
	case len(waitingFor) > 0 && model != "":
		// llm.Usage counts the attempts of the latest call: of two side
		// by side, that count would mix both.
		tries := "after " + plural(attempts, "attempt")
		if len(waitingFor) > 1 {
			tries = fmt.Sprintf("%d calls side by side", len(waitingFor))
		}
		return &stepDeadline{err: err, msg: fmt.Sprintf("deadline of %s reached while waiting for the %s from %s (%s; %s)",
			d, strings.Join(waitingFor, " and the "), termtext.Escape(model), tries, raise)}
	case step == "":
		return fmt.Errorf("deadline of %s reached (%s): %w", d, raise, err)
	case waiting && model != "":
		return &stepDeadline{err: err, msg: fmt.Sprintf("deadline of %s reached during %s while waiting for %s (after %s; %s)",
			d, step, termtext.Escape(model), plural(attempts, "attempt"), raise)}
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled):
		return &stepDeadline{err: err, msg: fmt.Sprintf("deadline of %s reached during %s (%s)", d, step, raise)}
	}
	return fmt.Errorf("deadline of %s reached during %s (%s): %w", d, step, raise, err)
}

// stepDeadline is a query stopped by its deadline: its message names the
// step or the wait, and it still unwraps to the error.
type stepDeadline struct {
	msg string
	err error
}

func (e *stepDeadline) Error() string { return e.msg }
func (e *stepDeadline) Unwrap() error { return e.err }

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
