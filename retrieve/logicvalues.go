package retrieve

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The compute operator of logic-form retrieval works on numbers and dates
// read from what earlier steps found: from each item (an entity's
// description, a passage's text, a value) the first number or date, or
// the first after the word near, or else the nearest before it.

// quantity is a number or a date found in a text.
type quantity struct {
	text    string // as written
	pos     int    // byte offset in the text
	num     float64
	date    bool
	y, m, d int // a date's parts; m and d are 0 when not given
}

var (
	monthNames = map[string]int{
		"january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7,
		"august": 8, "september": 9, "october": 10, "november": 11, "december": 12,
		"jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "sept": 9, "oct": 10, "nov": 11, "dec": 12,
	}
	monthRE  = `(January|February|March|April|May|June|July|August|September|October|November|December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec)\.?`
	isoDate  = regexp.MustCompile(`\b(\d{4})-(\d{2})-(\d{2})\b`)
	dayMonth = regexp.MustCompile(`(?i)\b(\d{1,2})(?:st|nd|rd|th)?\s+` + monthRE + `,?\s+(\d{3,4})\b`)
	monthDay = regexp.MustCompile(`(?i)\b` + monthRE + `\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{3,4})\b`)
	monthYr  = regexp.MustCompile(`(?i)\b` + monthRE + `\s+(\d{3,4})\b`)
	yearRE   = regexp.MustCompile(`\b(1\d{3}|20\d{2})\b`)
	numberRE = regexp.MustCompile(`\d[\d,]*(?:\.\d+)?`)
)

// dates finds the dates in text, full dates before partial ones at the
// same place, each place once.
func dates(text string) []quantity {
	var out []quantity
	taken := make([]bool, len(text)+1)
	add := func(loc []int, y, m, d int) {
		for i := loc[0]; i < loc[1]; i++ {
			if taken[i] {
				return
			}
		}
		for i := loc[0]; i < loc[1]; i++ {
			taken[i] = true
		}
		out = append(out, quantity{text: text[loc[0]:loc[1]], pos: loc[0], date: true, y: y, m: m, d: d, num: float64(y)})
	}
	atoi := func(s string) int { n, _ := strconv.Atoi(s); return n }
	for _, m := range isoDate.FindAllStringSubmatchIndex(text, -1) {
		add(m, atoi(text[m[2]:m[3]]), atoi(text[m[4]:m[5]]), atoi(text[m[6]:m[7]]))
	}
	for _, m := range dayMonth.FindAllStringSubmatchIndex(text, -1) {
		add(m, atoi(text[m[6]:m[7]]), monthNames[strings.ToLower(text[m[4]:m[5]])], atoi(text[m[2]:m[3]]))
	}
	for _, m := range monthDay.FindAllStringSubmatchIndex(text, -1) {
		add(m, atoi(text[m[6]:m[7]]), monthNames[strings.ToLower(text[m[2]:m[3]])], atoi(text[m[4]:m[5]]))
	}
	for _, m := range monthYr.FindAllStringSubmatchIndex(text, -1) {
		add(m, atoi(text[m[4]:m[5]]), monthNames[strings.ToLower(text[m[2]:m[3]])], 0)
	}
	for _, m := range yearRE.FindAllStringSubmatchIndex(text, -1) {
		add(m, atoi(text[m[2]:m[3]]), 0, 0)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].pos < out[j].pos })
	return out
}

// numbers finds the numbers in text that stand on their own (not inside a
// word such as UTF-8 or A-0).
func numbers(text string) []quantity {
	var out []quantity
	for _, loc := range numberRE.FindAllStringIndex(text, -1) {
		s, e := loc[0], loc[1]
		if s > 0 && (isWordByte(text[s-1]) || text[s-1] == '-' && s > 1 && isWordByte(text[s-2])) {
			continue
		}
		if e < len(text) && isWordByte(text[e]) {
			continue
		}
		raw := strings.TrimRight(text[s:e], ",")
		f, err := strconv.ParseFloat(strings.ReplaceAll(raw, ",", ""), 64)
		if err != nil {
			continue
		}
		out = append(out, quantity{text: raw, pos: s, num: f})
	}
	return out
}

func isWordByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '_'
}

// pick chooses the quantity near a word: the first that ends after it starts,
// else the last before it; without the word, the first.
func pick(qs []quantity, text, near string) (quantity, bool) {
	if len(qs) == 0 {
		return quantity{}, false
	}
	near = strings.ToLower(strings.TrimSpace(near))
	if near == "" {
		return qs[0], true
	}
	at := strings.Index(strings.ToLower(text), near)
	if at < 0 {
		// "released" also finds "release"; the stem is enough.
		if stem := strings.TrimRight(near, "eds"); len(stem) >= 4 {
			at = strings.Index(strings.ToLower(text), stem)
		}
	}
	if at < 0 {
		return qs[0], true
	}
	for _, q := range qs {
		if q.pos+len(q.text) > at {
			return q, true
		}
	}
	return qs[len(qs)-1], true
}

// operand is one labelled input of compute.
type operand struct {
	label string
	text  string
}

// compute runs one compute operation over the values: literals, or $N for
// the items step N found.
func (lr *logicRun) compute(op string, values []string, near string) ([]LogicItem, string) {
	var ops []operand
	var missing []string
	for _, v := range values {
		if m := stepRef.FindStringSubmatch(v); m != nil && m[0] == strings.TrimSpace(v) {
			k, _ := strconv.Atoi(m[1])
			if k < 1 || k > len(lr.steps) || len(lr.steps[k-1].Items) == 0 {
				missing = append(missing, v)
				continue
			}
			for _, it := range lr.steps[k-1].Items {
				ops = append(ops, operand{label: it.Name, text: lr.itemText(it)})
			}
			continue
		}
		ops = append(ops, operand{label: v, text: v})
	}
	note := ""
	if len(missing) > 0 {
		note = "nothing to read from " + strings.Join(missing, ", ")
	}
	if op == "count" {
		labels := make([]string, len(ops))
		for i, o := range ops {
			labels[i] = o.label
		}
		if len(ops) == 0 {
			return nil, note
		}
		return []LogicItem{{Kind: "value", Name: strconv.Itoa(len(ops)), Text: "count of " + strings.Join(labels, ", ")}}, note
	}
	type read struct {
		operand
		q quantity
	}
	var got []read
	for _, o := range ops {
		if q, ok := readQuantity(op, o.text, near); ok {
			got = append(got, read{o, q})
		}
	}
	if len(got) == 0 {
		return nil, joinNotes(note, "no number or date found")
	}
	inputs := make([]string, len(got))
	for i, g := range got {
		inputs[i] = g.label + ": " + g.q.text
	}
	explain := strings.Join(inputs, "; ")
	switch op {
	case "sum":
		s := 0.0
		for _, g := range got {
			s += g.q.num
		}
		return []LogicItem{{Kind: "value", Name: formatNum(s), Text: "sum of " + explain}}, note
	case "min", "max", "earliest", "latest":
		best := 0
		for i, g := range got {
			less := g.q.before(got[best].q)
			if (op == "min" || op == "earliest") && less || (op == "max" || op == "latest") && got[best].q.before(g.q) {
				best = i
			}
		}
		b := got[best]
		return []LogicItem{{Kind: "value", Name: b.label, Text: fmt.Sprintf("%s: %s, of %s", op, b.q.text, explain)}}, note
	case "diff":
		if len(got) < 2 {
			return nil, joinNotes(note, "diff needs two values; found "+explain)
		}
		a, b := got[0].q, got[1].q
		if a.date && b.date && a.m > 0 && b.m > 0 {
			days := a.time().Sub(b.time()).Hours() / 24
			y, unit := yearsBetween(b, a), " years"
			if math.Abs(y) == 1 {
				unit = " year"
			}
			return []LogicItem{{Kind: "value", Name: formatNum(y) + unit,
				Text: fmt.Sprintf("%s minus %s: %s days", got[0].label+" "+a.text, got[1].label+" "+b.text, formatNum(math.Round(days)))}}, note
		}
		return []LogicItem{{Kind: "value", Name: formatNum(a.num - b.num),
			Text: fmt.Sprintf("%s minus %s", got[0].label+" "+a.text, got[1].label+" "+b.text)}}, note
	}
	return nil, joinNotes(note, "unknown compute op "+op)
}

// readQuantity reads the operand of op from text: a date for earliest and
// latest; for diff a full date when there is one (so that two birth dates
// give an age), else a number; a number otherwise.
func readQuantity(op, text, near string) (quantity, bool) {
	switch op {
	case "earliest", "latest":
		return pick(dates(text), text, near)
	case "diff":
		if q, ok := pick(dates(text), text, near); ok && q.m > 0 {
			return q, true
		}
	}
	return pick(numbers(text), text, near)
}

// before orders quantities: dates by year, month, day (a missing part
// first), numbers by value.
func (q quantity) before(o quantity) bool {
	if q.date && o.date {
		if q.y != o.y {
			return q.y < o.y
		}
		if q.m != o.m {
			return q.m < o.m
		}
		return q.d < o.d
	}
	return q.num < o.num
}

func (q quantity) time() time.Time {
	d := max(q.d, 1)
	return time.Date(q.y, time.Month(q.m), d, 0, 0, 0, 0, time.UTC)
}

// yearsBetween is the number of whole years from a to b (negative when b
// comes first), as an age is counted.
func yearsBetween(a, b quantity) float64 {
	sign := 1.0
	if b.before(a) {
		a, b, sign = b, a, -1
	}
	y := b.y - a.y
	if b.m < a.m || b.m == a.m && b.d < a.d {
		y--
	}
	return sign * float64(y)
}

func formatNum(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}
