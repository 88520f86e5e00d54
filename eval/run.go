package eval

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// Ks are the cut-offs recall is reported at.
var Ks = []int{2, 5}

// RetrieveFunc returns the ids of the documents retrieved for a question,
// best first (repeats are ignored).
type RetrieveFunc func(ctx context.Context, question string) ([]string, error)

// AnswerFunc answers a question; EM and F1 are computed when one is given.
type AnswerFunc func(ctx context.Context, question string) (string, error)

// Report is one method's scores on one dataset.
type Report struct {
	Dataset   string `json:"dataset"`
	Method    string `json:"method"`
	Questions int    `json:"questions"`
	// Recall is in percent, by k, over the questions with gold passages;
	// nil when none has any (MetaQA's answer-only sets).
	Recall map[int]float64 `json:"recall"`
	P50    time.Duration   `json:"p50_ns"`
	P95    time.Duration   `json:"p95_ns"`
	// EM and F1 are percentages over the answered questions (with an
	// LLM); Hit is the share of answers that contain a gold answer.
	EM       float64 `json:"em,omitempty"`
	F1       float64 `json:"f1,omitempty"`
	Hit      float64 `json:"hit,omitempty"`
	Answered int     `json:"answered,omitempty"`
	// Note says where a number comes from when not from this process.
	Note string `json:"note,omitempty"`
}

// Evaluate runs every question through retrieve, one at a time so the
// latencies are those of a single query, and answer when not nil. Recall
// counts the questions with gold passages (idx may be nil when none has).
func Evaluate(ctx context.Context, ds *Dataset, idx *Index, method string, retrieve RetrieveFunc, answer AnswerFunc) (*Report, error) {
	rep := &Report{Dataset: ds.Name, Method: method, Questions: len(ds.Questions), Recall: map[int]float64{}}
	lat := make([]time.Duration, 0, len(ds.Questions))
	var em, f1, hit float64
	withGold := 0
	for _, q := range ds.Questions {
		start := time.Now()
		docs, err := retrieve(ctx, q.Question)
		if err != nil {
			return nil, fmt.Errorf("%s on %s, question %s: %w", method, ds.Name, q.ID, err)
		}
		lat = append(lat, time.Since(start))
		if len(q.GoldIDs) > 0 && idx != nil {
			withGold++
			got := idx.expand(docs)
			for _, k := range Ks {
				rep.Recall[k] += Recall(got, q.GoldIDs, k)
			}
		}
		if answer != nil {
			a, err := answer(ctx, q.Question)
			if err != nil {
				return nil, fmt.Errorf("%s on %s, answer %s: %w", method, ds.Name, q.ID, err)
			}
			em += ExactMatch(a, q.Answers)
			f1 += F1(a, q.Answers)
			hit += Hit(a, q.Answers)
			rep.Answered++
		}
	}
	for _, k := range Ks {
		rep.Recall[k] = 100 * rep.Recall[k] / float64(max(withGold, 1))
	}
	if withGold == 0 {
		rep.Recall = nil
	}
	rep.P50, rep.P95 = Percentile(lat, 50), Percentile(lat, 95)
	if rep.Answered > 0 {
		n := float64(rep.Answered)
		rep.EM, rep.F1, rep.Hit = 100*em/n, 100*f1/n, 100*hit/n
	}
	return rep, nil
}

// expand maps retrieved documents to passage ids, each document once.
func (x *Index) expand(docs []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, d := range docs {
		if seen[d] {
			continue
		}
		seen[d] = true
		out = append(out, x.byDoc[d]...)
	}
	return out
}

var toolLine = regexp.MustCompile(`R@(\d+)=([\d.]+)`)
var toolMS = regexp.MustCompile(`([\d.]+) ms/q`)

// RunBM25Tool runs the shared BM25 baseline script (python3, standard
// library only) on the dataset and reads its recall line.
func RunBM25Tool(ctx context.Context, script string, ds *Dataset) (*Report, error) {
	args := []string{script, ds.Dir}
	for _, k := range Ks {
		args = append(args, strconv.Itoa(k))
	}
	out, err := runScript(ctx, "python3", args...)
	if err != nil {
		return nil, fmt.Errorf("bm25 tool %s: %w", script, err)
	}
	rep := &Report{Dataset: ds.Name, Method: "bm25 (tool)", Questions: len(ds.Questions), Recall: map[int]float64{},
		Note: "python3 " + filepath.Base(script) + ", SQLite FTS5 in memory"}
	for _, m := range toolLine.FindAllStringSubmatch(out.String(), -1) {
		k, _ := strconv.Atoi(m[1])
		v, _ := strconv.ParseFloat(m[2], 64)
		rep.Recall[k] = v
	}
	if len(rep.Recall) == 0 {
		return nil, fmt.Errorf("bm25 tool %s: no recall in its output %q", script, strings.TrimSpace(out.String()))
	}
	if m := toolMS.FindStringSubmatch(out.String()); m != nil {
		ms, _ := strconv.ParseFloat(m[1], 64)
		rep.P50 = time.Duration(ms * float64(time.Millisecond)) // the tool reports a mean
		rep.Note += "; latency is its mean"
	}
	return rep, nil
}

// FindBM25Tool returns the shared baseline script beside a dataset laid out
// as shared/data/NAME, or "" when there is none.
func FindBM25Tool(datasetDir string) string { return sharedTool(datasetDir, "bm25_baseline.py") }

// sharedTool returns shared/tools/name for a data directory laid out as
// shared/data/NAME, or "" when there is none.
func sharedTool(dataDir, name string) string {
	p := filepath.Join(filepath.Dir(filepath.Dir(filepath.Clean(dataDir))), "tools", name)
	if _, err := os.Stat(p); err == nil {
		return p
	}
	return ""
}

// runScript runs a baseline script and returns its standard output; a
// failure carries what the script wrote to standard error.
func runScript(ctx context.Context, python string, args ...string) (*bytes.Buffer, error) {
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, python, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%w: %s", err, strings.TrimSpace(errb.String()))
	}
	return &out, nil
}

// WriteTable prints reports as an aligned table, grouped by dataset, and
// after it the notes of the answer-side methods (which path answered, fall-backs).
func WriteTable(w io.Writer, reps []*Report) error {
	sort.SliceStable(reps, func(i, j int) bool { return reps[i].Dataset < reps[j].Dataset })
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	header := "dataset\tmethod\tquestions\t"
	for _, k := range Ks {
		header += fmt.Sprintf("R@%d\t", k)
	}
	header += "p50 ms\tp95 ms\tEM\tF1\tHit\t"
	fmt.Fprintln(tw, header)
	for _, r := range reps {
		line := fmt.Sprintf("%s\t%s\t%d\t", r.Dataset, r.Method, r.Questions)
		for _, k := range Ks {
			if v, ok := r.Recall[k]; ok {
				line += fmt.Sprintf("%.1f\t", v)
			} else {
				line += "-\t"
			}
		}
		line += fmt.Sprintf("%s\t%s\t", ms(r.P50), ms(r.P95))
		if r.Answered > 0 {
			line += fmt.Sprintf("%.1f\t%.1f\t%.1f\t", r.EM, r.F1, r.Hit)
		} else {
			line += "-\t-\t-\t"
		}
		fmt.Fprintln(tw, line)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range reps {
		if r.Note != "" && r.Answered > 0 {
			fmt.Fprintf(w, "note: %s %s: %s\n", r.Dataset, r.Method, r.Note)
		}
	}
	return nil
}

func ms(d time.Duration) string {
	if d == 0 {
		return "-"
	}
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64)
}
