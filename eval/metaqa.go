package eval

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/docgraph/docgraph/retrieve/paths"
)

// MetaQAQuestion is one line of a MetaQA qa file: the question, its topic
// entity (the name in brackets) and its answers.
type MetaQAQuestion struct {
	Hops     int
	Question string
	Topic    string
	Answers  []string
}

// LoadMetaQA reads the first limit questions (all when limit <= 0) of
// DIR/{N}-hop/qa_dev.txt for each hop count N, in file order: the same
// questions the igraph baseline script reads.
func LoadMetaQA(dir string, hops []int, limit int) (map[int][]MetaQAQuestion, error) {
	out := map[int][]MetaQAQuestion{}
	for _, h := range hops {
		path := filepath.Join(dir, fmt.Sprintf("%d-hop", h), "qa_dev.txt")
		qs, err := readMetaQA(path, h, limit)
		if err != nil {
			return nil, err
		}
		out[h] = qs
	}
	return out, nil
}

func readMetaQA(path string, hops, limit int) ([]MetaQAQuestion, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("metaqa: %w", err)
	}
	defer f.Close()
	var out []MetaQAQuestion
	sc := bufio.NewScanner(f)
	line := 0
	for sc.Scan() && (limit <= 0 || len(out) < limit) {
		line++
		text := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(text) == "" {
			continue
		}
		q, a, ok := strings.Cut(text, "\t")
		i, j := strings.IndexByte(q, '['), strings.IndexByte(q, ']')
		if !ok || i < 0 || j < i {
			return nil, fmt.Errorf("metaqa %s:%d: want question with [topic]<TAB>answer|answer", path, line)
		}
		out = append(out, MetaQAQuestion{Hops: hops, Question: q, Topic: q[i+1 : j], Answers: strings.Split(a, "|")})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("metaqa %s: %w", path, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("metaqa %s: no questions", path)
	}
	return out, nil
}

// MetaQAReport is one path spec's scores on one hop count, percentages
// over the questions: Hit is the share with at least one answer among the
// end entities of the top-k paths, Recall the mean share of answers found
// there, Hits1 the share whose best path ends at an answer, and
// SubgraphRecall the mean share of answers subgraph extraction kept.
type MetaQAReport struct {
	Spec           string        `json:"spec"`
	Hops           int           `json:"hops"`
	Questions      int           `json:"questions"`
	TopK           int           `json:"top_k"`
	Hit            float64       `json:"hit"`
	Recall         float64       `json:"recall"`
	Hits1          float64       `json:"hits1"`
	SubgraphRecall float64       `json:"subgraph_recall"`
	Paths          float64       `json:"mean_paths"`
	Candidates     float64       `json:"mean_candidates"`
	MissingTopic   int           `json:"missing_topic,omitempty"`
	P50            time.Duration `json:"p50_ns"`
	P95            time.Duration `json:"p95_ns"`
}

// EvaluateMetaQA runs each question through the retriever, seeded by its
// topic entity, one at a time so latencies are those of single queries.
// Answers are matched to entities through the KG's Lookup (so a store's
// case folding applies to answers as it does to names).
func EvaluateMetaQA(ctx context.Context, r *paths.Retriever, qs []MetaQAQuestion) (*MetaQAReport, error) {
	kg := r.KG()
	rep := &MetaQAReport{Spec: r.Spec().String(), Questions: len(qs)}
	lat := make([]time.Duration, 0, len(qs))
	for _, q := range qs {
		rep.Hops = q.Hops
		seed, ok := kg.Lookup(q.Topic)
		if !ok {
			rep.MissingTopic++
			lat = append(lat, 0)
			continue
		}
		seedID, _ := kg.Entity(seed)
		answers := map[string]bool{}
		for _, a := range q.Answers {
			if n, ok := kg.Lookup(a); ok {
				id, _ := kg.Entity(n)
				answers[id] = true
			}
		}
		start := time.Now()
		res, err := r.Retrieve(ctx, q.Question, []string{seedID})
		if err != nil {
			return nil, fmt.Errorf("metaqa %d-hop %q: %w", q.Hops, q.Question, err)
		}
		lat = append(lat, time.Since(start))
		found := map[string]bool{}
		for _, p := range res.Paths {
			if id := p.End().ID; answers[id] {
				found[id] = true
			}
		}
		n := float64(len(q.Answers))
		if len(found) > 0 {
			rep.Hit++
		}
		rep.Recall += float64(len(found)) / n
		if len(res.Paths) > 0 && answers[res.Paths[0].End().ID] {
			rep.Hits1++
		}
		rep.Paths += float64(len(res.Paths))
		rep.Candidates += float64(res.Candidates)
		if sub, err := r.Extract(ctx, q.Question, []int{seed}); err == nil {
			kept := 0
			for _, node := range sub.Nodes {
				if id, _ := kg.Entity(node); answers[id] {
					kept++
				}
			}
			rep.SubgraphRecall += float64(kept) / n
		}
	}
	if n := float64(len(qs)); n > 0 {
		rep.Hit, rep.Recall, rep.Hits1, rep.SubgraphRecall = 100*rep.Hit/n, 100*rep.Recall/n, 100*rep.Hits1/n, 100*rep.SubgraphRecall/n
		rep.Paths, rep.Candidates = rep.Paths/n, rep.Candidates/n
	}
	rep.P50, rep.P95 = Percentile(lat, 50), Percentile(lat, 95)
	return rep, nil
}

// WriteMetaQATable prints MetaQA reports as an aligned table.
func WriteMetaQATable(w io.Writer, reps []*MetaQAReport) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "spec\thops\tquestions\thit\trecall\thits@1\tsubgraph recall\tpaths\tcandidates\tp50 ms\tp95 ms\t")
	for _, r := range reps {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.0f\t%s\t%s\t\n", r.Spec, r.Hops, r.Questions,
			r.Hit, r.Recall, r.Hits1, r.SubgraphRecall, r.Paths, r.Candidates, ms(r.P50), ms(r.P95))
	}
	return tw.Flush()
}
