// Command scalebench measures how docgraph's cost grows with its corpus: it
// builds distinct copies of a passage set with ../shared/tools/scale_corpus.py
// (x1, x4, and x16 behind -x16), ingests each through the CLI into a fresh
// SQLite store, and prints one table: ingest seconds and bytes written,
// store size and its multiple of the text, one-shot `query` p50, `query
// serve` p50/p99 at 1 and 4 clients, serve RSS and start time, Recall@5 of
// the original (copy 0) questions, and SQLite FTS5 BM25 (the shared
// baseline script) query time on the same passages, measured in the same run.
// With -rounds N each scale is ingested N times, the scales alternating,
// and the ingest columns are the medians, with every round's ratio beside
// them: on a loaded machine one pair of runs can be off by a fifth.
//
//	go build -o bin/ ./cmd/... && go run ./eval/internal/scalebench -scales 1,4
//
// Everything it builds stays under -work (default .docgraph/scale); the
// table is printed and, with -out, appended to a report with the label.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"

	"flag"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/docgraph/docgraph/eval"
)

type options struct {
	src, shared, work, bin, out, label string
	// vsBin, when set, holds a second query binary (a baseline) whose
	// one-shot p50 is measured on the same store, its runs alternating
	// with bin's, so that the two are compared under the same load.
	vsBin              string
	scales             []int
	oneshot, questions int
	clients            []int
	keep               bool
	ingestArgs         []string
	// storeURL, when set, is an existing store server (Neo4j) to ingest
	// into and query instead of a fresh SQLite store; storeDir is then the
	// server's database folder, when local, for the size columns.
	storeURL, storeDir string
	// rounds is how many times each scale is ingested; the ingest columns
	// are the rounds' medians. Rounds alternate between the scales (x1, x4,
	// x1, x4, ...), so a ratio of two scales is taken under the same load;
	// the last round's ingests are the measured stores', with the smaller
	// scale's queries (a few minutes) between them.
	rounds int
	// vsIngest, when set, holds a baseline ingest binary: each round of
	// each scale in vsScales also ingests that scale with it, next to
	// bin's ingest (after it; in the last round, whose ingest is measure's,
	// just before it), so that a machine whose speed drifts from hour to
	// hour still gives a ratio of the two taken under the same load.
	vsIngest string
	vsScales []int
}

func main() {
	var o options
	var scales, clients, ingestArgs string
	var x16 bool
	flag.StringVar(&o.shared, "shared", "../shared", "the shared benchmark folder (data/ and tools/)")
	flag.StringVar(&o.src, "src", "", "passage set to scale (default SHARED/data/2wiki)")
	flag.StringVar(&o.work, "work", ".docgraph/scale", "folder for corpora and stores")
	flag.StringVar(&o.bin, "bin", "bin", "folder holding the ingest and query binaries")
	flag.StringVar(&o.vsBin, "vs-bin", "", "folder holding a baseline query binary: its one-shot p50 is measured on the same stores, alternating with -bin's")
	flag.StringVar(&o.out, "out", "", "append the table to this report (e.g. bench/scale.txt)")
	flag.StringVar(&o.label, "label", "", "label of this run in the report (e.g. before, after)")
	flag.StringVar(&scales, "scales", "1,4", "corpus multiples to measure")
	flag.BoolVar(&x16, "x16", false, "also measure 16 copies (about 100k files; takes long)")
	flag.IntVar(&o.oneshot, "oneshot", 15, "one-shot query processes per scale")
	flag.IntVar(&o.questions, "questions", 0, "questions served per client count (0: all)")
	flag.StringVar(&clients, "clients", "1,4", "served client counts")
	flag.BoolVar(&o.keep, "keep", false, "keep each scale's store (default: remove it after measuring)")
	flag.StringVar(&ingestArgs, "ingest-args", "", "extra ingest flags, space-separated")
	flag.StringVar(&o.storeURL, "store-url", "", "measure this store server instead of SQLite, e.g. neo4j://127.0.0.1:7687 (emptied of docgraph nodes before each scale; credentials from NEO4J_USER/NEO4J_PASSWORD)")
	flag.StringVar(&o.storeDir, "store-dir", "", "with -store-url: the server's local data folder, measured for the store size columns")
	flag.IntVar(&o.rounds, "rounds", 1, "ingests of each scale, alternating between the scales; the ingest columns are their medians")
	flag.StringVar(&o.vsIngest, "vs-ingest", "", "folder holding a baseline ingest binary: the -vs-ingest-scales are also ingested with it in every round, each run next to -bin's of the same round")
	var vsScales string
	flag.StringVar(&vsScales, "vs-ingest-scales", "1", "with -vs-ingest: the scales ingested with the baseline too")
	flag.Parse()
	if o.rounds < 1 {
		fatal(fmt.Errorf("-rounds: want 1 or more, got %d", o.rounds))
	}
	var err error
	if o.vsIngest != "" {
		if o.vsScales, err = ints(vsScales); err != nil {
			fatal(fmt.Errorf("-vs-ingest-scales: %w", err))
		}
		if _, err := os.Stat(filepath.Join(o.vsIngest, "ingest")); err != nil {
			fatal(fmt.Errorf("-vs-ingest: %w", err))
		}
	}
	if o.scales, err = ints(scales); err != nil {
		fatal(fmt.Errorf("-scales: %w", err))
	}
	if x16 && !slices.Contains(o.scales, 16) {
		o.scales = append(o.scales, 16)
	}
	if o.clients, err = ints(clients); err != nil {
		fatal(fmt.Errorf("-clients: %w", err))
	}
	o.ingestArgs = strings.Fields(ingestArgs)
	if o.src == "" {
		o.src = filepath.Join(o.shared, "data", "2wiki")
	}
	for _, k := range o.scales {
		if err := buildCorpus(context.Background(), o, k); err != nil {
			fatal(fmt.Errorf("x%d: %w", k, err))
		}
	}
	// The rounds before the last only ingest; measure's ingest is the last.
	early := map[int][]ingestRun{}
	vs := map[int][]ingestRun{}
	for round := 1; round <= o.rounds; round++ {
		for _, k := range o.scales {
			if round < o.rounds {
				run, err := ingestRound(context.Background(), o, o.bin, k)
				if err != nil {
					fatal(fmt.Errorf("x%d, round %d: %w", k, round, err))
				}
				fmt.Fprintf(os.Stderr, "x%d, round %d: ingest %.1fs (CPU %.1fs)\n", k, round, run.wall.Seconds(), run.cpu.Seconds())
				early[k] = append(early[k], run)
			}
			// In the last round the baseline's ingest comes first: -bin's is
			// measure's, below.
			if o.vsIngest != "" && slices.Contains(o.vsScales, k) {
				run, err := ingestRound(context.Background(), o, o.vsIngest, k)
				if err != nil {
					fatal(fmt.Errorf("x%d, round %d, %s: %w", k, round, o.vsIngest, err))
				}
				fmt.Fprintf(os.Stderr, "x%d, round %d: %s ingest %.1fs (CPU %.1fs)\n", k, round, o.vsIngest, run.wall.Seconds(), run.cpu.Seconds())
				vs[k] = append(vs[k], run)
			}
		}
	}
	var rows []row
	for _, k := range o.scales {
		r, err := measure(context.Background(), o, k, early[k])
		if err != nil {
			fatal(fmt.Errorf("x%d: %w", k, err))
		}
		r.vsRounds = vs[k]
		rows = append(rows, r)
		fmt.Fprintln(os.Stderr, r.line())
	}
	var buf bytes.Buffer
	report(&buf, o, rows)
	os.Stdout.Write(buf.Bytes())
	if o.out != "" {
		f, err := os.OpenFile(o.out, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			fatal(err)
		}
		f.Write(buf.Bytes())
		f.Close()
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "scalebench:", err)
	os.Exit(1)
}

func ints(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("bad number %q", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// row is one scale's measurements.
type row struct {
	k                   int
	files               int
	textBytes           int64
	ingest              time.Duration // the rounds' median
	ingestCPU           time.Duration // the rounds' median
	rounds              []ingestRun   // in the order run
	vsRounds            []ingestRun   // the baseline ingests (-vs-ingest), each paired with the run of rounds at its index
	written             int64         // of the last round, as are peakRSS and the store
	peakRSS             int64
	storeBytes          int64
	storeFiles          map[string]int64
	oneshotP50          time.Duration
	oneshotVsP50        time.Duration // the -vs-bin binary's, same store
	served              []servedLoad
	serveStart          time.Duration
	serveFirst          time.Duration
	serveRSS, serveAnon int64
	servePSS            int64 // shared file pages counted once
	recall5             float64
	recallN             int
	bm25                time.Duration
	bm25Recall          string
}

type servedLoad struct {
	clients      int
	n            int
	p50, p99     time.Duration
	errors       int
	reqPerSecond float64
}

func (r row) line() string {
	return fmt.Sprintf("x%d: ingest %.1fs, %.2f GB written, store %.0f MB, one-shot p50 %v, R@5 %.1f, bm25 %v", r.k,
		r.ingest.Seconds(), float64(r.written)/1e9, float64(r.storeBytes)/1e6, r.oneshotP50.Round(time.Millisecond), 100*r.recall5, r.bm25.Round(10*time.Microsecond))
}

// corpusDir is scale k's corpus folder under -work.
func corpusDir(o options, k int) string { return filepath.Join(o.work, fmt.Sprintf("x%d", k)) }

// storeFor is where scale k's store lives: a folder under -work for SQLite,
// or the server (and its data folder) of -store-url.
func storeFor(o options, k int) (storeURL, storeDir string) {
	if o.storeURL != "" {
		return o.storeURL, o.storeDir
	}
	storeDir = filepath.Join(o.work, fmt.Sprintf("x%d-store", k))
	return "sqlite://" + filepath.Join(storeDir, "graph.db"), storeDir
}

// ingestRun is one ingest through the CLI into an empty store.
type ingestRun struct {
	wall, cpu time.Duration
	written   int64 // bytes the process wrote to storage
	peakRSS   int64
}

// ingestRound ingests scale k's corpus, already built, into an empty store,
// and removes the store after (a server's graph stays until the next
// wipe).
func ingestRound(ctx context.Context, o options, bin string, k int) (ingestRun, error) {
	storeURL, storeDir := storeFor(o, k)
	if o.storeURL == "" {
		defer os.RemoveAll(storeDir)
	}
	return ingest(ctx, o, bin, k, storeURL, storeDir)
}

// ingest empties the store and ingests scale k's corpus into it through
// bin's CLI, as a user would.
func ingest(ctx context.Context, o options, bin string, k int, storeURL, storeDir string) (ingestRun, error) {
	var run ingestRun
	if o.storeURL != "" {
		if err := wipeNeo4j(ctx, storeURL); err != nil {
			return run, err
		}
	} else if err := os.RemoveAll(storeDir); err != nil {
		return run, err
	}
	args := append([]string{"--store", storeURL, "--config", "", "--json"}, o.ingestArgs...)
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "ingest"), append(args, filepath.Join(corpusDir(o, k), "docs"))...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	start := time.Now()
	err := cmd.Run()
	run.wall = time.Since(start)
	if err != nil {
		return run, fmt.Errorf("ingest: %w: %s", err, tail(stderr.String(), 2000))
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		// ru_oublock counts 512-byte blocks written to storage.
		run.written = ru.Oublock * 512
		run.peakRSS = ru.Maxrss * 1024
		run.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return run, nil
}

// buildCorpus makes scale k's corpus with scale_corpus.py unless it is there.
func buildCorpus(ctx context.Context, o options, k int) error {
	corpus := corpusDir(o, k)
	if _, err := os.Stat(filepath.Join(corpus, "questions.jsonl")); err == nil {
		return nil
	}
	fmt.Fprintf(os.Stderr, "x%d: building the corpus in %s\n", k, corpus)
	cmd := exec.CommandContext(ctx, "python3", filepath.Join(o.shared, "tools", "scale_corpus.py"), o.src, corpus, strconv.Itoa(k))
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("scale_corpus.py: %w", err)
	}
	return nil
}

// measure ingests scale k (its last round, after the earlier ones) and
// measures the store and its queries.
func measure(ctx context.Context, o options, k int, earlier []ingestRun) (row, error) {
	r := row{k: k}
	corpus := corpusDir(o, k)
	docs := filepath.Join(corpus, "docs")
	if err := filepath.WalkDir(docs, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err == nil {
			r.files++
			r.textBytes += info.Size()
		}
		return err
	}); err != nil {
		return r, err
	}
	storeURL, storeDir := storeFor(o, k)
	if o.storeURL == "" {
		defer func() {
			if !o.keep {
				os.RemoveAll(storeDir)
			}
		}()
	}
	fmt.Fprintf(os.Stderr, "x%d: ingesting %d files\n", k, r.files)
	run, err := ingest(ctx, o, o.bin, k, storeURL, storeDir)
	if err != nil {
		return r, err
	}
	r.rounds = append(slices.Clone(earlier), run)
	r.written, r.peakRSS = run.written, run.peakRSS
	var walls, cpus []float64
	for _, run := range r.rounds {
		walls, cpus = append(walls, float64(run.wall)), append(cpus, float64(run.cpu))
	}
	r.ingest, r.ingestCPU = time.Duration(eval.Median(walls)), time.Duration(eval.Median(cpus))
	r.storeFiles = map[string]int64{}
	if storeDir != "" {
		filepath.WalkDir(storeDir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				if info, err := d.Info(); err == nil {
					r.storeBytes += info.Size()
					// A server's folder holds many files: sum them by the
					// first two levels (databases/neo4j, transactions/neo4j).
					rel, _ := filepath.Rel(storeDir, p)
					if parts := strings.Split(rel, string(filepath.Separator)); len(parts) > 2 {
						rel = filepath.Join(parts[:2]...)
					}
					r.storeFiles[rel] += info.Size()
				}
			}
			return nil
		})
	}

	ds, err := eval.Load(corpus)
	if err != nil {
		return r, err
	}
	questions := ds.Questions

	// BM25 baseline on the same passages, same run.
	fmt.Fprintf(os.Stderr, "x%d: bm25 baseline\n", k)
	out, err := exec.CommandContext(ctx, "python3", filepath.Join(o.shared, "tools", "bm25_baseline.py"), corpus, "5").Output()
	if err != nil {
		return r, fmt.Errorf("bm25_baseline.py: %w", err)
	}
	if m := regexp.MustCompile(`([0-9.]+) ms/q`).FindStringSubmatch(string(out)); m != nil {
		ms, _ := strconv.ParseFloat(m[1], 64)
		r.bm25 = time.Duration(ms * float64(time.Millisecond))
	}
	if m := regexp.MustCompile(`R@5=([0-9.]+)`).FindStringSubmatch(string(out)); m != nil {
		r.bm25Recall = m[1]
	}

	// One-shot query processes.
	fmt.Fprintf(os.Stderr, "x%d: %d one-shot queries\n", k, o.oneshot)
	var lat, latVs []time.Duration
	oneShot := func(bin, q string) (time.Duration, error) {
		cmd := exec.CommandContext(ctx, filepath.Join(bin, "query"), "--store", storeURL, "--config", "", "--json", "--top-k", "5", q)
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = io.Discard, &stderr
		t := time.Now()
		if err := cmd.Run(); err != nil {
			return 0, fmt.Errorf("one-shot query (%s): %w: %s", bin, err, tail(stderr.String(), 1000))
		}
		return time.Since(t), nil
	}
	for i := 0; i < o.oneshot && i < len(questions); i++ {
		q := questions[(i*37)%len(questions)].Question
		d, err := oneShot(o.bin, q)
		if err != nil {
			return r, err
		}
		lat = append(lat, d)
		if o.vsBin != "" {
			if d, err = oneShot(o.vsBin, q); err != nil {
				return r, err
			}
			latVs = append(latVs, d)
		}
	}
	r.oneshotP50 = eval.Percentile(lat, 50)
	if len(latVs) > 0 {
		r.oneshotVsP50 = eval.Percentile(latVs, 50)
	}

	// Served load from this process, on loopback.
	if err := serve(ctx, o, storeURL, questions, &r); err != nil {
		return r, err
	}
	return r, nil
}

func serve(ctx context.Context, o options, storeURL string, questions []eval.Question, r *row) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := exec.CommandContext(sctx, filepath.Join(o.bin, "query"), "serve", "--store", storeURL, "--config", "", "--addr", addr, "--max-concurrent", "8")
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	fmt.Fprintf(os.Stderr, "x%d: serving on %s\n", r.k, addr)
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() {
		cancel()
		cmd.Wait()
	}()
	client := &http.Client{Timeout: 120 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	base := "http://" + addr
	for {
		resp, err := client.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Since(start) > 5*time.Minute {
			return fmt.Errorf("query serve did not start: %s", tail(logs.String(), 2000))
		}
		time.Sleep(5 * time.Millisecond)
	}
	r.serveStart = time.Since(start)
	if _, err := ask(client, base, questions[0].Question); err != nil {
		return fmt.Errorf("first query: %w (%s)", err, tail(logs.String(), 1000))
	}
	r.serveFirst = time.Since(start)
	// A short warm-up, then every client count over the questions.
	for i := 1; i <= 10 && i < len(questions); i++ {
		ask(client, base, questions[i].Question)
	}
	n := o.questions
	if n <= 0 || n > len(questions) {
		n = len(questions)
	}
	for _, c := range o.clients {
		load, got := runLoad(client, base, questions[:n], c)
		r.served = append(r.served, load)
		if c == 1 {
			var sum float64
			for i, q := range questions[:n] {
				sum += eval.Recall(got[i], q.GoldIDs, 5)
			}
			r.recall5, r.recallN = sum/float64(n), n
		}
	}
	r.serveRSS, r.serveAnon = rss(cmd.Process.Pid)
	r.servePSS = pss(cmd.Process.Pid)
	return nil
}

func runLoad(client *http.Client, base string, qs []eval.Question, clients int) (servedLoad, [][]string) {
	got := make([][]string, len(qs))
	lat := make([]time.Duration, len(qs))
	errs := 0
	var mu sync.Mutex
	next := 0
	var wg sync.WaitGroup
	start := time.Now()
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= len(qs) {
					return
				}
				t := time.Now()
				ids, err := ask(client, base, qs[i].Question)
				d := time.Since(t)
				mu.Lock()
				lat[i], got[i] = d, ids
				if err != nil {
					errs++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	return servedLoad{clients: clients, n: len(qs), p50: eval.Percentile(lat, 50), p99: eval.Percentile(lat, 99),
		errors: errs, reqPerSecond: float64(len(qs)) / wall.Seconds()}, got
}

// ask posts one mix query for the top 5 and returns the passage ids of
// the documents found, as scale_corpus.py names them (cN-ID).
func ask(client *http.Client, base, question string) ([]string, error) {
	body, _ := json.Marshal(map[string]any{"question": question, "top_k": 5})
	resp, err := client.Post(base+"/v1/query", "application/json", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("status %d: %s", resp.StatusCode, tail(string(data), 300))
	}
	var reply struct {
		Passages []struct {
			DocPath string `json:"doc_path"`
		} `json:"passages"`
	}
	if err := json.Unmarshal(data, &reply); err != nil {
		return nil, err
	}
	var ids []string
	for _, p := range reply.Passages {
		if id := passageID(p.DocPath); id != "" && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// passageID maps .../docs/c03/17/p12.md to c3-p12, the id scale_corpus.py
// gives that passage in corpus.jsonl.
func passageID(path string) string {
	dir, file := filepath.Split(path)
	copyDir := filepath.Base(filepath.Dir(filepath.Clean(dir)))
	c, err := strconv.Atoi(strings.TrimPrefix(copyDir, "c"))
	if err != nil || !strings.HasPrefix(copyDir, "c") {
		return ""
	}
	return fmt.Sprintf("c%d-%s", c, strings.TrimSuffix(file, filepath.Ext(file)))
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// rss reads a process's resident set and its anonymous part, in bytes.
func rss(pid int) (total, anon int64) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		n, _ := strconv.ParseInt(fields[1], 10, 64)
		switch fields[0] {
		case "VmRSS:":
			total = n * 1024
		case "RssAnon:":
			anon = n * 1024
		}
	}
	return total, anon
}

// pss is the process's proportional set size: RSS counts a page of the
// store once for every SQLite connection that maps the file (four readers
// map the same pages), PSS once in all.
func pss(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "Pss:" {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n * 1024
		}
	}
	return 0
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

func report(w io.Writer, o options, rows []row) {
	host, _ := os.Hostname()
	fmt.Fprintf(w, "\n## %s scalebench %s (%s, %d CPUs, %s)\n", time.Now().UTC().Format("2006-01-02 15:04"), o.label, host, runtime.NumCPU(), loadavg())
	commit := "unknown"
	if out, err := exec.Command("git", "describe", "--always", "--dirty").Output(); err == nil {
		commit = strings.TrimSpace(string(out))
	}
	fmt.Fprintf(w, "corpus %s, binaries %s (tree %s), ingest flags %q\n", o.src, o.bin, commit, strings.Join(o.ingestArgs, " "))
	if o.storeURL != "" {
		fmt.Fprintf(w, "store %s (server data folder %q); written GB counts only the ingest client's own writes\n", o.storeURL, o.storeDir)
	}
	if o.vsBin != "" {
		fmt.Fprintf(w, "one-shot p50 also of %s/query on the same stores, its runs alternating with %s/query's: ", o.vsBin, o.bin)
		for i, r := range rows {
			if i > 0 {
				fmt.Fprint(w, ", ")
			}
			fmt.Fprintf(w, "x%d %.0f ms (%s: %.0f ms)", r.k, ms(r.oneshotVsP50), o.bin, ms(r.oneshotP50))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "scale\tfiles\ttext MB\tingest s\tingest CPU s\tingest peak RSS MB\twritten GB\twritten/store\tstore MB\tstore/text\tone-shot p50 ms\t"+
		servedHeader(o.clients)+"serve start ms\tfirst answer ms\tserve RSS MB (anon)\tserve PSS MB\tR@5\tBM25 R@5\tBM25 ms/q")
	for _, r := range rows {
		fmt.Fprintf(tw, "x%d\t%d\t%.1f\t%.1f\t%.1f\t%.0f\t%.2f\t%.1f\t%.0f\t%.0f\t%.0f\t%s%.0f\t%.0f\t%.0f (%.0f)\t%.0f\t%.1f\t%s\t%.1f\n",
			r.k, r.files, float64(r.textBytes)/1e6, r.ingest.Seconds(), r.ingestCPU.Seconds(), float64(r.peakRSS)/1e6,
			float64(r.written)/1e9, float64(r.written)/float64(max(r.storeBytes, 1)),
			float64(r.storeBytes)/1e6, float64(r.storeBytes)/float64(max(r.textBytes, 1)),
			ms(r.oneshotP50), servedCells(r.served), ms(r.serveStart), ms(r.serveFirst),
			float64(r.serveRSS)/1e6, float64(r.serveAnon)/1e6, float64(r.servePSS)/1e6, 100*r.recall5, r.bm25Recall, ms(r.bm25))
	}
	tw.Flush()
	fmt.Fprintln(w)
	for _, r := range rows {
		names := make([]string, 0, len(r.storeFiles))
		for n := range r.storeFiles {
			names = append(names, n)
		}
		slices.Sort(names)
		var parts []string
		for _, n := range names {
			parts = append(parts, fmt.Sprintf("%s %.1f MB", n, float64(r.storeFiles[n])/1e6))
		}
		fmt.Fprintf(w, "x%d store files: %s\n", r.k, strings.Join(parts, ", "))
	}
	if len(rows) > 1 {
		a, b := rows[0], rows[len(rows)-1]
		fmt.Fprintf(w, "x%d/x%d: ingest %.2fx, store %.2fx, one-shot p50 %.2fx", b.k, a.k, ratio(b.ingest, a.ingest),
			float64(b.storeBytes)/float64(max(a.storeBytes, 1)), ratio(b.oneshotP50, a.oneshotP50))
		for i := range a.served {
			if i < len(b.served) {
				fmt.Fprintf(w, ", served p50 c=%d %.2fx", a.served[i].clients, ratio(b.served[i].p50, a.served[i].p50))
			}
		}
		fmt.Fprintf(w, ", BM25 %.2fx\n", ratio(b.bm25, a.bm25))
		if len(a.rounds) > 1 {
			roundsLine(w, a, b)
		}
		if o.vsBin != "" {
			fmt.Fprintf(w, "x%d/x%d with %s: one-shot p50 %.2fx\n", b.k, a.k, o.vsBin, ratio(b.oneshotVsP50, a.oneshotVsP50))
		}
	}
	for _, r := range rows {
		if len(r.vsRounds) > 0 {
			vsLine(w, o, r)
		}
	}
	for _, r := range rows {
		for _, s := range r.served {
			if s.errors > 0 {
				fmt.Fprintf(w, "x%d: %d of %d requests at %d clients failed\n", r.k, s.errors, s.n, s.clients)
			}
		}
	}
}

// roundsLine prints each scale's ingest rounds and b's multiple of a's:
// round by round (the two ran under the same load), as the medians', and
// as the fastest rounds'. A neighbour on a shared host only ever adds
// time, so the fastest round is the one least disturbed; the three
// agree on a quiet machine and tell how noisy it was when they do not.
func roundsLine(w io.Writer, a, b row) {
	fmt.Fprintf(w, "ingest rounds, the scales alternating: x%d %s s; x%d %s s;", a.k, seconds(a.rounds), b.k, seconds(b.rounds))
	wallOf := func(r ingestRun) time.Duration { return r.wall }
	cpuOf := func(r ingestRun) time.Duration { return r.cpu }
	wall, wallMed := perRound(b.rounds, a.rounds, "%.2f", wallOf)
	cpu, cpuMed := perRound(b.rounds, a.rounds, "%.2f", cpuOf)
	fmt.Fprintf(w, " x%d/x%d per round %s (median %.2f), CPU %s (median %.2f); of the medians: %.2fx, CPU %.2fx; of the fastest: %.2fx, CPU %.2fx\n",
		b.k, a.k, wall, wallMed, cpu, cpuMed, ratio(b.ingest, a.ingest), ratio(b.ingestCPU, a.ingestCPU),
		ratio(fastest(b.rounds, wallOf), fastest(a.rounds, wallOf)), ratio(fastest(b.rounds, cpuOf), fastest(a.rounds, cpuOf)))
}

// fastest is the least duration of returns for the runs (0 for none).
func fastest(runs []ingestRun, of func(ingestRun) time.Duration) time.Duration {
	var least time.Duration
	for i, r := range runs {
		if d := of(r); i == 0 || d < least {
			least = d
		}
	}
	return least
}

// vsLine prints scale r's ingests with the baseline binary, and -bin's
// multiple of them round by round (each pair ran next to each other) and
// as the medians'.
func vsLine(w io.Writer, o options, r row) {
	var vsWall []float64
	for _, run := range r.vsRounds {
		vsWall = append(vsWall, float64(run.wall))
	}
	med := time.Duration(eval.Median(vsWall))
	each, eachMed := perRound(r.rounds, r.vsRounds, "%.3f", func(r ingestRun) time.Duration { return r.wall })
	fmt.Fprintf(w, "x%d ingest of %s: %s s (median %.1f s); %s's multiple of it per round %s (median %.3f); of the medians: %.3fx\n",
		r.k, o.vsIngest, seconds(r.vsRounds), med.Seconds(), o.bin, each, eachMed, ratio(r.ingest, med))
}

// seconds lists the runs' wall times in seconds.
func seconds(runs []ingestRun) string {
	var out []string
	for _, run := range runs {
		out = append(out, fmt.Sprintf("%.1f", run.wall.Seconds()))
	}
	return strings.Join(out, ", ")
}

// perRound lists num's multiple of den round by round, in the given
// format, over the rounds both have, with the median of those ratios.
func perRound(num, den []ingestRun, format string, of func(ingestRun) time.Duration) (string, float64) {
	var out []string
	var rs []float64
	for i := range min(len(num), len(den)) {
		q := ratio(of(num[i]), of(den[i]))
		out, rs = append(out, fmt.Sprintf(format, q)), append(rs, q)
	}
	return strings.Join(out, ", "), eval.Median(rs)
}

func servedHeader(clients []int) string {
	var sb strings.Builder
	for _, c := range clients {
		fmt.Fprintf(&sb, "served c=%d p50/p99 ms\treq/s c=%d\t", c, c)
	}
	return sb.String()
}

func servedCells(ls []servedLoad) string {
	var sb strings.Builder
	for _, l := range ls {
		fmt.Fprintf(&sb, "%.1f / %.1f\t%.1f\t", msf(l.p50), msf(l.p99), l.reqPerSecond)
	}
	return sb.String()
}

func ms(d time.Duration) float64  { return float64(d) / float64(time.Millisecond) }
func msf(d time.Duration) float64 { return ms(d) }

func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "load unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "load unknown"
	}
	return "load " + strings.Join(f[:3], " ")
}
