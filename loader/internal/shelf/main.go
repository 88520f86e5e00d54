// Command shelf measures the loader on a folder of real PDFs against poppler's pdftotext:
// per-file and total load time, and the multiset word recall of our text against pdftotext's.
//
// It is a measurement tool, not a test: nothing in `make test` runs it.
// Every loader is a binary run per file, so one run can compare builds of
// different commits (build this command in each checkout and pass each with
// -bin) and every file is timed for all of them back to back, which keeps
// the ratios honest on a busy machine.
//
//	go build -o /tmp/shelf-after ./loader/internal/shelf
//	/tmp/shelf-after -dir /work/pdfshelf -bin after=/tmp/shelf-after -bin before=/tmp/shelf-before
//
// With -extract FILE it is the per-file worker: it loads FILE with the
// loader it was built with and prints the result as JSON.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

	"github.com/docgraph/docgraph/loader"
)

// extraction is what a worker reports for one file.
type extraction struct {
	Text     string   `json:"text"`
	Title    string   `json:"title"`
	Warnings []string `json:"warnings"`
	Err      string   `json:"err,omitempty"`
	Seconds  float64  `json:"seconds"` // Load alone, inside the worker
}

type binFlags []string

func (b *binFlags) String() string     { return strings.Join(*b, ",") }
func (b *binFlags) Set(s string) error { *b = append(*b, s); return nil }

func main() {
	extract := flag.String("extract", "", "worker mode: load this PDF and print the result as JSON")
	dir := flag.String("dir", os.Getenv("DOCGRAPH_PDF_SHELF"), "folder of PDFs (default $DOCGRAPH_PDF_SHELF)")
	out := flag.String("out", "", "write per-file results as JSON here")
	only := flag.String("only", "", "comma-separated file names to measure (default all)")
	cpuprofile := flag.String("cpuprofile", "", "with -extract: write a CPU profile of the load here")
	missing := flag.Int("missing", 12, "how many missing and extra words to list for the worst files")
	flag.IntVar(&repeat, "repeat", 1, "run each program up to this many times per file (while under 3 s in all) and keep the fastest")
	var bins binFlags
	flag.Var(&bins, "bin", "NAME=PATH of a shelf binary to measure (repeatable; default this binary as 'ours')")
	flag.Parse()

	if *extract != "" {
		if *cpuprofile != "" {
			f, err := os.Create(*cpuprofile)
			if err != nil {
				log.Fatal(err)
			}
			if err := pprof.StartCPUProfile(f); err != nil {
				log.Fatal(err)
			}
			defer pprof.StopCPUProfile()
		}
		runExtract(*extract)
		return
	}
	if *dir == "" {
		log.Fatal("shelf: -dir (or DOCGRAPH_PDF_SHELF) must name a folder of PDFs")
	}
	if len(bins) == 0 {
		self, err := os.Executable()
		if err != nil {
			log.Fatal(err)
		}
		bins = binFlags{"ours=" + self}
	}
	var names, paths []string
	for _, b := range bins {
		name, path, ok := strings.Cut(b, "=")
		if !ok || name == "" || path == "" {
			log.Fatalf("shelf: -bin %q is not NAME=PATH", b)
		}
		names, paths = append(names, name), append(paths, path)
	}
	files, err := filepath.Glob(filepath.Join(*dir, "*.pdf"))
	if err != nil || len(files) == 0 {
		log.Fatalf("shelf: no PDFs in %s", *dir)
	}
	if *only != "" {
		keep := map[string]bool{}
		for _, n := range strings.Split(*only, ",") {
			keep[n] = true
		}
		files = slices.DeleteFunc(files, func(f string) bool { return !keep[filepath.Base(f)] })
	}
	sort.Strings(files)
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("shelf: %d PDFs in %s; load average at start: %s", len(files), *dir, load)

	var results []fileResult
	for i, f := range files {
		r := measure(f, names, paths)
		results = append(results, r)
		fmt.Fprintf(os.Stderr, "[%d/%d] %s ref %.2fs", i+1, len(files), r.File, r.RefSeconds)
		for _, n := range names {
			fmt.Fprintf(os.Stderr, " | %s %.2fs (%.1fx) recall %.3f", n, r.Runs[n].Wall, r.Runs[n].Wall/r.RefSeconds, r.Runs[n].Recall)
		}
		fmt.Fprintln(os.Stderr)
	}
	report(os.Stdout, results, names, *missing)
	load, _ = os.ReadFile("/proc/loadavg")
	fmt.Printf("load average at end: %s", load)
	if *out != "" {
		data, _ := json.MarshalIndent(results, "", " ")
		if err := os.WriteFile(*out, data, 0o644); err != nil {
			log.Fatal(err)
		}
	}
}

var ligatures = strings.NewReplacer("\uFB00", "ff", "\uFB01", "fi", "\uFB02", "fl", "\uFB03", "ffi", "\uFB04", "ffl", "\uFB05", "st", "\uFB06", "st")

func runExtract(path string) {
	start := time.Now()
	doc, err := loader.New().Load(context.Background(), path)
	x := extraction{Seconds: time.Since(start).Seconds()}
	if err != nil {
		x.Err = err.Error()
	} else {
		x.Text, x.Title, x.Warnings = doc.Text, doc.Title, doc.Warnings
	}
	if err := json.NewEncoder(os.Stdout).Encode(x); err != nil {
		log.Fatal(err)
	}
}

// repeat is how many times a quick program is run on a file: process
// start and a busy machine make single timings of small files noisy.
var repeat = 1

// timed runs cmd (made fresh by mk) up to repeat times, stopping once 3 s
// have been spent, and returns the fastest run's output and wall time.
func timed(mk func() *exec.Cmd) ([]byte, float64, error) {
	var out []byte
	var err error
	best, spent := math.Inf(1), 0.0
	for i := 0; i < max(repeat, 1) && (i == 0 || spent < 3); i++ {
		start := time.Now()
		o, e := mk().Output()
		wall := time.Since(start).Seconds()
		spent += wall
		if wall < best {
			best, out, err = wall, o, e
		}
	}
	return out, best, err
}

type run struct {
	Wall     float64  `json:"wall"`   // seconds, process start to exit
	Inside   float64  `json:"inside"` // seconds inside Load
	Recall   float64  `json:"recall"` // multiset word recall against pdftotext
	Words    int      `json:"words"`
	Err      string   `json:"err,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
	Missing  []string `json:"missing,omitempty"` // most frequent reference words we lack
	Extra    []string `json:"extra,omitempty"`   // most frequent words we have and the reference lacks
}

type fileResult struct {
	File       string         `json:"file"`
	RefSeconds float64        `json:"ref_seconds"`
	RefWords   int            `json:"ref_words"`
	Runs       map[string]run `json:"runs"`
}

func measure(path string, names, bins []string) fileResult {
	r := fileResult{File: filepath.Base(path), Runs: map[string]run{}}
	ref, wall, err := timed(func() *exec.Cmd { return exec.Command("pdftotext", "-enc", "UTF-8", path, "-") })
	r.RefSeconds = wall
	if err != nil {
		log.Printf("pdftotext %s: %v", path, err)
	}
	refWords := words(string(ref))
	r.RefWords = len(refWords)
	for i, bin := range bins {
		outb, wall, err := timed(func() *exec.Cmd { return exec.Command(bin, "-extract", path) })
		var x extraction
		if err == nil {
			err = json.Unmarshal(outb, &x)
		}
		if err != nil {
			x.Err = "worker: " + err.Error()
		}
		got := words(x.Text)
		rec, miss, extra := recall(refWords, got)
		r.Runs[names[i]] = run{Wall: wall, Inside: x.Seconds, Recall: rec, Words: len(got), Err: x.Err,
			Warnings: x.Warnings, Missing: miss, Extra: extra}
	}
	return r
}

// words splits text as the recall measure sees it: on white space, with
// punctuation trimmed from both ends, since the two extractors disagree on
// little more than where a closing bracket or a dot leader goes, and
// without the invisible direction marks pdftotext puts around
// right-to-left text. Latin ligature characters (U+FB00-FB06), which
// pdftotext keeps and the loader spells out, count as their letters.
func words(s string) []string {
	s = strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Cf, r) {
			return -1
		}
		return r
	}, s)
	s = ligatures.Replace(s)
	var out []string
	for _, w := range strings.Fields(s) {
		w = strings.TrimFunc(w, func(r rune) bool { return unicode.IsPunct(r) || unicode.IsSymbol(r) })
		if w != "" {
			out = append(out, w)
		}
	}
	return out
}

// recall is the share of ref's words (as a multiset) found in got, with
// the most frequent words missing from got and those got has in excess.
func recall(ref, got []string) (float64, []string, []string) {
	have := map[string]int{}
	for _, w := range got {
		have[w]++
	}
	missing := map[string]int{}
	found := 0
	for _, w := range ref {
		if have[w] > 0 {
			have[w]--
			found++
		} else {
			missing[w]++
		}
	}
	if len(ref) == 0 {
		return 1, nil, nil
	}
	return float64(found) / float64(len(ref)), top(missing, 40), top(have, 40)
}

func top(m map[string]int, n int) []string {
	type kv struct {
		k string
		v int
	}
	var all []kv
	for k, v := range m {
		if v > 0 {
			all = append(all, kv{k, v})
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].v > all[j].v || all[i].v == all[j].v && all[i].k < all[j].k })
	var out []string
	for _, e := range all[:min(n, len(all))] {
		out = append(out, fmt.Sprintf("%s×%d", e.k, e.v))
	}
	return out
}

func report(w *os.File, results []fileResult, names []string, nMissing int) {
	var refTotal float64
	for _, r := range results {
		refTotal += r.RefSeconds
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "\nloader\ttotal s\tvs pdftotext\tmedian ratio\tworst ratio\tmedian recall\trecall>=0.95\tfailed\n")
	fmt.Fprintf(tw, "pdftotext\t%.1f\t1.0x\t\t\t\t\t\n", refTotal)
	for _, n := range names {
		var total float64
		var ratios, recalls []float64
		worst, failed, good := "", 0, 0
		worstRatio := 0.0
		for _, r := range results {
			x := r.Runs[n]
			total += x.Wall
			ratio := x.Wall / r.RefSeconds
			ratios = append(ratios, ratio)
			if ratio > worstRatio {
				worstRatio, worst = ratio, r.File
			}
			recalls = append(recalls, x.Recall)
			if x.Err != "" {
				failed++
			}
			if x.Recall >= 0.95 {
				good++
			}
		}
		fmt.Fprintf(tw, "%s\t%.1f\t%.1fx\t%.1fx\t%.1fx (%s)\t%.3f\t%d/%d\t%d\n", n, total, total/refTotal,
			median(ratios), worstRatio, worst, median(recalls), good, len(results), failed)
	}
	tw.Flush()

	for _, n := range names {
		fmt.Fprintf(w, "\n== %s: slowest against pdftotext\n", n)
		byRatio := slices.Clone(results)
		sort.Slice(byRatio, func(i, j int) bool {
			return byRatio[i].Runs[n].Wall/byRatio[i].RefSeconds > byRatio[j].Runs[n].Wall/byRatio[j].RefSeconds
		})
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "file\tours s\tpdftotext s\tratio\n")
		for _, r := range byRatio[:min(8, len(byRatio))] {
			x := r.Runs[n]
			fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t%.1fx\n", r.File, x.Wall, r.RefSeconds, x.Wall/r.RefSeconds)
		}
		tw.Flush()
		fmt.Fprintf(w, "\n== %s: lowest recall\n", n)
		byRecall := slices.Clone(results)
		sort.Slice(byRecall, func(i, j int) bool { return byRecall[i].Runs[n].Recall < byRecall[j].Runs[n].Recall })
		for _, r := range byRecall[:min(8, len(byRecall))] {
			x := r.Runs[n]
			fmt.Fprintf(w, "%-32s recall %.3f  words %d/%d", r.File, x.Recall, x.Words, r.RefWords)
			if x.Err != "" {
				fmt.Fprintf(w, "  error: %s", x.Err)
			}
			fmt.Fprintln(w)
			if len(x.Warnings) > 0 {
				fmt.Fprintf(w, "    warnings: %q\n", x.Warnings)
			}
			fmt.Fprintf(w, "    missing: %s\n    extra:   %s\n", strings.Join(x.Missing[:min(nMissing, len(x.Missing))], " "),
				strings.Join(x.Extra[:min(nMissing, len(x.Extra))], " "))
		}
	}
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
