package graphalg

import (
	"fmt"
	"math"
	"sort"
)

// allows reports whether node v may be walked: every node when allowed is nil.
func allows(allowed []bool, v int32) bool { return allowed == nil || allowed[v] }

// ShortestPaths returns the shortest paths from src to each of targets
// within maxHop hops, walking only allowed nodes (nil allows every node):
// all of them when there are several (parallel edges make distinct paths),
// but at most perTarget per target and limit in all (0 means no bound).
// Paths come grouped by target in the order targets lists them; targets
// that are src, not allowed or not reached are skipped.
func ShortestPaths(g *MultiGraph, src int, targets []int, allowed []bool, maxHop, perTarget, limit int) []Path {
	if src < 0 || src >= g.NumNodes() {
		panic(fmt.Sprintf("graphalg: source %d outside nodes 0..%d", src, g.NumNodes()-1))
	}
	dist := bfs(g, int32(src), allowed, maxHop)
	var out []Path
	for _, t := range targets {
		d := int(dist[t])
		if d <= 0 {
			continue
		}
		budget := perTarget
		if limit > 0 && (budget <= 0 || budget > limit-len(out)) {
			budget = limit - len(out)
		}
		out = appendShortest(g, dist, int32(src), int32(t), d, budget, out)
		if limit > 0 && len(out) >= limit {
			break
		}
	}
	return out
}

// bfs returns the hop distance from src to every allowed node within
// maxHop, -1 for the others.
func bfs(g *MultiGraph, src int32, allowed []bool, maxHop int) []int8 {
	if maxHop > 127 {
		maxHop = 127
	}
	dist := make([]int8, g.NumNodes())
	for i := range dist {
		dist[i] = -1
	}
	dist[src] = 0
	frontier := []int32{src}
	for d := 1; d <= maxHop && len(frontier) > 0; d++ {
		var next []int32
		for _, u := range frontier {
			for _, s := range g.Steps(int(u)) {
				if dist[s.To] >= 0 || !allows(allowed, s.To) {
					continue
				}
				dist[s.To] = int8(d)
				next = append(next, s.To)
			}
		}
		frontier = next
	}
	return dist
}

// appendShortest appends up to budget (0: all) shortest paths src..t by
// walking back from t through nodes one hop nearer to src.
func appendShortest(g *MultiGraph, dist []int8, src, t int32, d, budget int, out []Path) []Path {
	rev := make([]Step, d) // rev[i] is the step taken at hop i
	found := 0
	var walk func(v int32, hop int) bool
	walk = func(v int32, hop int) bool {
		if hop == 0 {
			out = append(out, Path{Start: src, Steps: append([]Step(nil), rev...)})
			found++
			return budget > 0 && found >= budget
		}
		for _, s := range g.Steps(int(v)) {
			if int(dist[s.To]) != hop-1 {
				continue
			}
			// s walks v -> u; the path walks u -> v along the same edge.
			rev[hop-1] = Step{To: v, Edge: s.Edge, Reverse: !s.Reverse}
			if walk(s.To, hop-1) {
				return true
			}
		}
		return false
	}
	walk(t, d)
	return out
}

// CompletePaths returns every path from src of 1 to maxHop hops that never
// repeats a node, walking only allowed nodes (nil allows all), level by
// level: all one-hop paths first, then two-hop ones, and so on, each level
// in step order. It stops after limit paths (0 means no bound): on hubs the
// count grows with the product of degrees.
func CompletePaths(g *MultiGraph, src int, allowed []bool, maxHop, limit int) []Path {
	if src < 0 || src >= g.NumNodes() {
		panic(fmt.Sprintf("graphalg: source %d outside nodes 0..%d", src, g.NumNodes()-1))
	}
	var out []Path
	frontier := []Path{{Start: int32(src)}}
	for hop := 1; hop <= maxHop && len(frontier) > 0; hop++ {
		var next []Path
		for _, p := range frontier {
			for _, s := range g.Steps(p.End()) {
				if !allows(allowed, s.To) || p.visits(s.To) {
					continue
				}
				q := p.extend(s)
				out = append(out, q)
				next = append(next, q)
				if limit > 0 && len(out) >= limit {
					return out
				}
			}
		}
		frontier = next
	}
	return out
}

// ScoredPath is a path with the score a beam search gave it.
type ScoredPath struct {
	Path
	Score float64
}

// PathScorer scores candidate paths for a beam search, higher is better;
// it returns one score per candidate.
type PathScorer func(candidates []Path) ([]float64, error)

// BeamOptions configure BeamSearch.
type BeamOptions struct {
	// Width is how many paths survive each step (8 when 0).
	Width int
	// MaxHop is the number of steps (3 when 0).
	MaxHop int
	// Allowed restricts the walk to these nodes (nil: every node).
	Allowed []bool
	// Dynamic keeps every candidate scoring at least the step's mean score
	// instead of the best Width: flat score distributions then keep many
	// paths and peaked ones few.
	Dynamic bool
	// MaxBeam bounds how many paths dynamic pruning keeps (16*Width when 0).
	MaxBeam int
}

// BeamSearch runs an iterative path search from src (LEGO-GraphRAG's
// Algorithm 1): at each of MaxHop steps every surviving path is extended by
// every step to an allowed node it has not visited, the candidates are
// scored together, and the best survive; every survivor of every step is
// returned with its score, step by step, best first within a step. Ties
// keep the order candidates were generated in, so results are deterministic.
func BeamSearch(g *MultiGraph, src int, opts BeamOptions, score PathScorer) ([]ScoredPath, error) {
	if src < 0 || src >= g.NumNodes() {
		panic(fmt.Sprintf("graphalg: source %d outside nodes 0..%d", src, g.NumNodes()-1))
	}
	width, hops := opts.Width, opts.MaxHop
	if width <= 0 {
		width = 8
	}
	if hops <= 0 {
		hops = 3
	}
	maxBeam := opts.MaxBeam
	if maxBeam <= 0 {
		maxBeam = 16 * width
	}
	var out []ScoredPath
	beams := []Path{{Start: int32(src)}}
	for hop := 1; hop <= hops && len(beams) > 0; hop++ {
		var cands []Path
		for _, p := range beams {
			for _, s := range g.Steps(p.End()) {
				if allows(opts.Allowed, s.To) && !p.visits(s.To) {
					cands = append(cands, p.extend(s))
				}
			}
		}
		if len(cands) == 0 {
			break
		}
		scores, err := score(cands)
		if err != nil {
			return out, fmt.Errorf("beam step %d: score %d candidates: %w", hop, len(cands), err)
		}
		if len(scores) != len(cands) {
			return out, fmt.Errorf("beam step %d: scorer returned %d scores for %d candidates", hop, len(scores), len(cands))
		}
		order := make([]int, len(cands))
		for i := range order {
			order[i] = i
		}
		sort.SliceStable(order, func(a, b int) bool { return scores[order[a]] > scores[order[b]] })
		keep := min(width, len(order))
		if opts.Dynamic {
			var mean float64
			for _, s := range scores {
				mean += s
			}
			mean /= float64(len(scores))
			// Keep everything at or above the mean, allowing for rounding
			// so that equal scores all stay.
			tol := 1e-12 * math.Max(1, math.Abs(mean))
			keep = 0
			for keep < len(order) && scores[order[keep]] >= mean-tol {
				keep++
			}
			keep = max(1, min(keep, maxBeam))
		}
		beams = beams[:0]
		for _, i := range order[:keep] {
			beams = append(beams, cands[i])
			out = append(out, ScoredPath{Path: cands[i], Score: scores[i]})
		}
	}
	return out, nil
}
