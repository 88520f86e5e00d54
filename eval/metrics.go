package eval

import (
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"
)

// Recall is HippoRAG's Recall@k for one question: the share of its gold
// passages among the first k retrieved (duplicates in retrieved count once).
func Recall(retrieved, gold []string, k int) float64 {
	if len(gold) == 0 {
		return 0
	}
	want := make(map[string]bool, len(gold))
	for _, g := range gold {
		want[g] = true
	}
	hit := 0
	for i, r := range retrieved {
		if i == k {
			break
		}
		if want[r] {
			hit++
			delete(want, r)
		}
	}
	return float64(hit) / float64(len(gold))
}

var (
	articles  = regexp.MustCompile(`\b(a|an|the)\b`)
	citations = regexp.MustCompile(`\[\d+\]`)
)

// Normalize is the SQuAD answer normalisation: lower case, no punctuation,
// no articles, single spaces.
func Normalize(s string) string {
	s = strings.ToLower(s)
	s = strings.Map(func(r rune) rune {
		if unicode.IsPunct(r) || unicode.IsSymbol(r) {
			return -1
		}
		return r
	}, s)
	s = articles.ReplaceAllString(s, " ")
	return strings.Join(strings.Fields(s), " ")
}

// CleanAnswer strips what an answer carries besides the answer itself:
// [n] citations, a sources list and surrounding Markdown emphasis.
func CleanAnswer(s string) string {
	if i := strings.Index(strings.ToLower(s), "\nsources:"); i >= 0 {
		s = s[:i]
	}
	s = citations.ReplaceAllString(s, "")
	s = strings.Trim(strings.TrimSpace(s), "*_`")
	return strings.TrimSpace(s)
}

// ExactMatch is 1 when the normalised prediction equals a normalised gold answer.
func ExactMatch(pred string, golds []string) float64 {
	p := Normalize(CleanAnswer(pred))
	for _, g := range golds {
		if p == Normalize(g) {
			return 1
		}
	}
	return 0
}

// F1 is the best token-overlap F1 between the prediction and a gold answer.
func F1(pred string, golds []string) float64 {
	pt := strings.Fields(Normalize(CleanAnswer(pred)))
	best := 0.0
	for _, g := range golds {
		gt := strings.Fields(Normalize(g))
		best = max(best, tokenF1(pt, gt))
	}
	return best
}

// Hit is 1 when a normalised gold answer appears, as whole words, in the
// normalised prediction: the KGQA hit rate GraphRAG-FI reports, fair to
// answers that list several candidates.
func Hit(pred string, golds []string) float64 {
	p := " " + Normalize(CleanAnswer(pred)) + " "
	for _, g := range golds {
		if n := Normalize(g); n != "" && strings.Contains(p, " "+n+" ") {
			return 1
		}
	}
	return 0
}

func tokenF1(pred, gold []string) float64 {
	if len(pred) == 0 || len(gold) == 0 {
		if len(pred) == len(gold) {
			return 1
		}
		return 0
	}
	counts := map[string]int{}
	for _, t := range gold {
		counts[t]++
	}
	common := 0
	for _, t := range pred {
		if counts[t] > 0 {
			counts[t]--
			common++
		}
	}
	if common == 0 {
		return 0
	}
	p := float64(common) / float64(len(pred))
	r := float64(common) / float64(len(gold))
	return 2 * p * r / (p + r)
}

// Percentile returns the q-th percentile (0 < q <= 100) of ds by the
// nearest-rank method; 0 for none.
func Percentile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	rank := int(q/100*float64(len(s)) + 0.999999)
	rank = min(max(rank, 1), len(s))
	return s[rank-1]
}

// Median returns the middle value of xs, the mean of the two middle ones
// when their number is even; 0 for none.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}
