package eval

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"sort"
	"strings"
	"time"

	"github.com/docgraph/docgraph/retrieve/graphalg"
	"github.com/docgraph/docgraph/retrieve/paths"
)

// igraphTopScript is igraph's side of the PPR comparison: the graph exactly
// as the shared baseline builds it (undirected, a vertex per distinct name
// in order of appearance, one edge per line), PRPACK Personalized PageRank
// from each question's topic with the same damping, and per question the
// time of PPR plus ranking and the top nodes with their scores, as JSON lines.
const igraphTopScript = `import json, re, sys, time
import igraph as ig
kb, qa, nq, topn, damping = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
names, idx, edges = [], {}, []
def vid(n):
    if n not in idx:
        idx[n] = len(names); names.append(n)
    return idx[n]
for line in open(kb, encoding="utf-8"):
    parts = line.rstrip("\n").split("|")
    if len(parts) != 3: continue
    edges.append((vid(parts[0]), vid(parts[2])))
g = ig.Graph(n=len(names), edges=edges, directed=False)
for line in open(qa, encoding="utf-8").read().splitlines()[:nq]:
    q = line.split("\t")[0]
    topic = re.search(r"\[(.+?)\]", q).group(1)
    t0 = time.perf_counter()
    pr = g.personalized_pagerank(reset_vertices=[idx[topic]], damping=damping)
    top = sorted(range(len(pr)), key=pr.__getitem__, reverse=True)[:topn]
    ms = (time.perf_counter() - t0) * 1000
    print(json.dumps({"topic": topic, "ms": ms, "top": [names[i] for i in top], "scores": [pr[i] for i in top]}))
`

// IgraphTop is igraph's answer for one question.
type IgraphTop struct {
	Topic  string    `json:"topic"`
	MS     float64   `json:"ms"`
	Top    []string  `json:"top"`
	Scores []float64 `json:"scores"`
}

// RunIgraphTop runs igraph's PPR (python3 with python-igraph) on the KB for
// the first n questions of a MetaQA qa file, returning each question's top
// `top` nodes. It fails when python3 or igraph is missing.
func RunIgraphTop(ctx context.Context, python, kb, qa string, n, top int, damping float64) ([]IgraphTop, error) {
	script, err := os.CreateTemp("", "igraph-top-*.py")
	if err != nil {
		return nil, err
	}
	defer os.Remove(script.Name())
	if _, err := script.WriteString(igraphTopScript); err != nil {
		script.Close()
		return nil, err
	}
	script.Close()
	out, err := runScript(ctx, python, script.Name(), kb, qa, fmt.Sprint(n), fmt.Sprint(top), fmt.Sprint(damping))
	if err != nil {
		return nil, fmt.Errorf("igraph PPR (%s): %w", python, err)
	}
	var res []IgraphTop
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var t IgraphTop
		if err := json.Unmarshal(sc.Bytes(), &t); err != nil {
			return nil, fmt.Errorf("igraph PPR: read its output: %w", err)
		}
		res = append(res, t)
	}
	return res, sc.Err()
}

// RunIgraphBaseline runs the shared baseline script as it is and returns
// its summary line.
func RunIgraphBaseline(ctx context.Context, python, script, kb, qa string, n, top int) (string, error) {
	out, err := runScript(ctx, python, script, kb, qa, fmt.Sprint(n), fmt.Sprint(top))
	if err != nil {
		return "", fmt.Errorf("igraph baseline %s: %w", script, err)
	}
	return strings.TrimSpace(out.String()), nil
}

// FindIgraphPython returns a python3 that can import igraph (the system
// one first, where apt installs python3-igraph), or "".
func FindIgraphPython() string {
	candidates := []string{"/usr/bin/python3"}
	if p, err := exec.LookPath("python3"); err == nil {
		candidates = append(candidates, p)
	}
	for _, p := range candidates {
		if exec.Command(p, "-c", "import igraph").Run() == nil {
			return p
		}
	}
	return ""
}

// FindIgraphBaseline returns the shared ppr_igraph_baseline.py beside a
// MetaQA directory laid out as shared/data/metaqa, or "".
func FindIgraphBaseline(metaqaDir string) string {
	return sharedTool(metaqaDir, "ppr_igraph_baseline.py")
}

// PPRReport compares docgraph's PPR with igraph's on one hop count's
// questions, over the same graph: median milliseconds per query (PPR plus
// picking the top nodes) for exact power iteration, forward push and
// igraph; the mean overlap of the top-N nodes of exact PPR and of push
// with igraph's (Overlap counts a node as shared when igraph ranks it in
// its top N; TieOverlap also when its igraph score ties igraph's N-th,
// since the order among equal scores is arbitrary); and answer recall in
// each top N, as the baseline script reports it.
type PPRReport struct {
	Hops           int     `json:"hops"`
	Questions      int     `json:"questions"`
	TopN           int     `json:"top_n"`
	ExactMS        float64 `json:"exact_ms"`
	PushMS         float64 `json:"push_ms"`
	IgraphMS       float64 `json:"igraph_ms"`
	Overlap        float64 `json:"overlap_exact_igraph"`
	TieOverlap     float64 `json:"tie_overlap_exact_igraph"`
	PushOverlap    float64 `json:"overlap_push_igraph"`
	PushTieOverlap float64 `json:"tie_overlap_push_igraph"`
	RecallExact    float64 `json:"recall_exact"`
	RecallPush     float64 `json:"recall_push"`
	RecallIgraph   float64 `json:"recall_igraph"`
	Speedup        float64 `json:"speedup_push"`
	SpeedupExact   float64 `json:"speedup_exact"`
	Damping        float64 `json:"damping"`
	PushEps        float64 `json:"push_eps"`
}

// ComparePPR runs exact PPR and push on kg (read WithExactNames from the
// same KB, so nodes and edges are igraph's) for the questions igraph
// answered in tops, one query at a time, and compares.
func ComparePPR(kg *paths.KG, qs []MetaQAQuestion, tops []IgraphTop, topN int, damping, tol, eps float64) (*PPRReport, error) {
	if len(tops) == 0 || len(qs) < len(tops) {
		return nil, fmt.Errorf("ppr comparison: %d igraph answers for %d questions", len(tops), len(qs))
	}
	g := kg.Graph()
	push := graphalg.NewPusher(g)
	rep := &PPRReport{Hops: qs[0].Hops, Questions: len(tops), TopN: topN, Damping: damping, PushEps: eps}
	var exactT, pushT, igT []float64
	for i, t := range tops {
		q := qs[i]
		if q.Topic != t.Topic {
			return nil, fmt.Errorf("ppr comparison: question %d is about %q, igraph's about %q", i, q.Topic, t.Topic)
		}
		seed, ok := kg.Lookup(q.Topic)
		if !ok {
			return nil, fmt.Errorf("ppr comparison: topic %q not in the graph", q.Topic)
		}
		seeds := map[int]float64{seed: 1}

		start := time.Now()
		dense := graphalg.PPR(g, seeds, damping, tol, 10000)
		exact := topNodes(dense, nil, damping, topN)
		exactT = append(exactT, ms64(time.Since(start)))

		start = time.Now()
		found := push.PPR(seeds, damping, eps)
		approx := topNodes(nil, found, damping, topN)
		pushT = append(pushT, ms64(time.Since(start)))
		igT = append(igT, t.MS)

		igSet := map[string]bool{}
		for _, name := range t.Top {
			igSet[name] = true
		}
		last := t.Scores[len(t.Scores)-1]
		// A node outside igraph's list ties when its score (ours, equal to
		// igraph's up to solver tolerance) equals igraph's N-th score.
		igScore := func(node int) float64 { return dense[node] }
		overlap := func(nodes []int) (plain, tie float64) {
			for _, n := range nodes {
				_, name := kg.Entity(n)
				switch {
				case igSet[name]:
					plain++
					tie++
				case math.Abs(igScore(n)-last) <= 1e-9*math.Max(last, 1e-300)+1e-15:
					tie++
				}
			}
			d := float64(len(t.Top))
			return plain / d, tie / d
		}
		a, b := overlap(exact)
		rep.Overlap += a
		rep.TieOverlap += b
		a, b = overlap(approx)
		rep.PushOverlap += a
		rep.PushTieOverlap += b

		answers := map[string]bool{}
		for _, a := range q.Answers {
			answers[a] = true
		}
		recall := func(names []string) float64 {
			found := 0
			for _, n := range names {
				if answers[n] {
					found++
				}
			}
			return float64(found) / float64(len(q.Answers))
		}
		nameOf := func(nodes []int) []string {
			out := make([]string, len(nodes))
			for i, n := range nodes {
				_, out[i] = kg.Entity(n)
			}
			return out
		}
		rep.RecallExact += recall(nameOf(exact))
		rep.RecallPush += recall(nameOf(approx))
		rep.RecallIgraph += recall(t.Top)
	}
	n := float64(len(tops))
	rep.Overlap, rep.TieOverlap, rep.PushOverlap, rep.PushTieOverlap = rep.Overlap/n, rep.TieOverlap/n, rep.PushOverlap/n, rep.PushTieOverlap/n
	rep.RecallExact, rep.RecallPush, rep.RecallIgraph = 100*rep.RecallExact/n, 100*rep.RecallPush/n, 100*rep.RecallIgraph/n
	rep.ExactMS, rep.PushMS, rep.IgraphMS = Median(exactT), Median(pushT), Median(igT)
	if rep.PushMS > 0 {
		rep.Speedup = rep.IgraphMS / rep.PushMS
	}
	if rep.ExactMS > 0 {
		rep.SpeedupExact = rep.IgraphMS / rep.ExactMS
	}
	return rep, nil
}

// topNodes returns the n best nodes of a dense vector or a push's list
// (ranked as path retrieval ranks them, residual share included), ties by
// node index (igraph's order among equal scores).
func topNodes(dense []float64, sparse []graphalg.NodeScore, damping float64, n int) []int {
	type ns struct {
		node  int
		score float64
	}
	var all []ns
	if dense != nil {
		all = make([]ns, 0, len(dense))
		for u, s := range dense {
			if s > 0 {
				all = append(all, ns{u, s})
			}
		}
	} else {
		all = make([]ns, len(sparse))
		for i, s := range sparse {
			all[i] = ns{int(s.Node), s.Score + (1-damping)*s.Residual}
		}
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].score != all[j].score {
			return all[i].score > all[j].score
		}
		return all[i].node < all[j].node
	})
	out := make([]int, 0, n)
	for _, a := range all[:min(n, len(all))] {
		out = append(out, a.node)
	}
	return out
}

func ms64(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// WritePPRTable prints PPR comparisons as an aligned table.
func WritePPRTable(w io.Writer, reps []*PPRReport) error {
	fmt.Fprintf(w, "%-5s %5s %9s %8s %9s %8s %8s %12s %12s %10s %10s %7s %7s %7s\n",
		"hops", "qs", "igraph ms", "exact ms", "push ms", "speedup", "x exact",
		"ovl exact", "ovl push", "tie exact", "tie push", "R ig", "R ex", "R push")
	for _, r := range reps {
		fmt.Fprintf(w, "%-5d %5d %9.1f %8.1f %9.2f %7.0fx %7.1fx %12.3f %12.3f %10.3f %10.3f %7.1f %7.1f %7.1f\n",
			r.Hops, r.Questions, r.IgraphMS, r.ExactMS, r.PushMS, r.Speedup, r.SpeedupExact,
			r.Overlap, r.PushOverlap, r.TieOverlap, r.PushTieOverlap, r.RecallIgraph, r.RecallExact, r.RecallPush)
	}
	return nil
}
