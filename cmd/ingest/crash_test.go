package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docgraph/docgraph/internal/clitest"
	"github.com/docgraph/docgraph/store"
)

// TestIngestChild is not a test: it is the ingest command when run as a
// child of the process tests (crash, signals, exit statuses).
func TestIngestChild(t *testing.T) { clitest.Child(t, "ingest", main) }

// child is a running ingest process.
type child struct {
	cmd    *exec.Cmd
	stdout *lineBuffer
	stderr *lineBuffer
}

func startChild(t *testing.T, dir string, args ...string) *child {
	t.Helper()
	cmd := clitest.Command(t, "TestIngestChild", args...)
	cmd.Dir = dir // no docgraph.yaml there
	c := &child{cmd: cmd, stdout: newLineBuffer(), stderr: newLineBuffer()}
	cmd.Stdout, cmd.Stderr = c.stdout, c.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return c
}

// wait waits for the child to exit and returns its exit code (-1 when a
// signal killed it).
func (c *child) wait(t *testing.T) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	select {
	case err := <-done:
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatal(err)
		}
		return c.cmd.ProcessState.ExitCode()
	case <-time.After(2 * time.Minute):
		_ = c.cmd.Process.Kill()
		t.Fatalf("child did not exit; stderr:\n%s", c.stderr.String())
		return 0
	}
}

func (c *child) signal(t *testing.T, sig os.Signal) {
	t.Helper()
	if err := c.cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Fatal(err)
	}
}

// lineBuffer collects a child's output and lets a test wait for a line.
type lineBuffer struct {
	mu    chan struct{} // a one-slot lock that waiters can select on
	buf   bytes.Buffer
	grown chan struct{}
}

func newLineBuffer() *lineBuffer {
	return &lineBuffer{mu: make(chan struct{}, 1), grown: make(chan struct{}, 1)}
}

func (b *lineBuffer) Write(p []byte) (int, error) {
	b.mu <- struct{}{}
	n, err := b.buf.Write(p)
	<-b.mu
	select {
	case b.grown <- struct{}{}:
	default:
	}
	return n, err
}

func (b *lineBuffer) String() string {
	b.mu <- struct{}{}
	defer func() { <-b.mu }()
	return b.buf.String()
}

// waitLine waits until a line containing substr was written.
func (b *lineBuffer) waitLine(t *testing.T, substr string) {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		sc := bufio.NewScanner(strings.NewReader(b.String()))
		for sc.Scan() {
			if strings.Contains(sc.Text(), substr) {
				return
			}
		}
		select {
		case <-b.grown:
		case <-deadline:
			t.Fatalf("no line containing %q; output so far:\n%s", substr, b.String())
		}
	}
}

// corpus writes n generated documents under dir (in three subfolders).
func corpus(t *testing.T, dir string, n int, seed uint64) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	for i := range n {
		writeNote(t, filepath.Join(dir, fmt.Sprintf("part%d", i%3), fmt.Sprintf("note%02d.md", i)), r, i)
	}
}

// writeNote writes one generated document. Names recur across documents so
// that entities and relations are merged from many chunks, which is what
// makes partial writes and inexact deletes observable.
func writeNote(t *testing.T, path string, r *rand.Rand, i int) {
	t.Helper()
	people := []string{"Ada Lovelace", "Charles Babbage", "Alan Turing", "Grace Hopper", "Howard Aiken", "Konrad Zuse",
		"John von Neumann", "Claude Shannon", "Edsger Dijkstra", "Tony Hoare", "Barbara Liskov", "Donald Knuth",
		"Margaret Hamilton", "Dennis Ritchie", "Ken Thompson", "Frances Allen"}
	places := []string{"London", "Cambridge", "Princeton", "Harvard", "Bletchley Park", "Berlin", "Eindhoven",
		"Oxford", "Stanford", "Bell Labs", "Manchester", "Zurich"}
	works := []string{"the Analytical Engine", "the Difference Engine", "the Mark I", "the Z3", "the EDVAC report",
		"the ALGOL compiler", "the Unix kernel", "the Apollo guidance software", "the CLU language", "TeX"}
	verbs := []string{"worked with", "corresponded with", "debated", "visited", "admired", "criticised"}
	pick := func(s []string) string { return s[r.IntN(len(s))] }
	var b strings.Builder
	fmt.Fprintf(&b, "# Note %d\n\n", i)
	for range 2 + r.IntN(3) {
		for range 3 + r.IntN(4) {
			switch r.IntN(3) {
			case 0:
				fmt.Fprintf(&b, "%s %s %s in %s. ", pick(people), pick(verbs), pick(people), pick(places))
			case 1:
				fmt.Fprintf(&b, "%s studied %s at %s. ", pick(people), pick(works), pick(places))
			default:
				fmt.Fprintf(&b, "In %s, %s described %s to %s. ", pick(places), pick(people), pick(works), pick(people))
			}
		}
		b.WriteString("\n\n")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// storeArgs are the settings every run over one store shares.
func storeArgs(db string) []string {
	return []string{"--store", "sqlite://" + db, "--embedder", "hash:64", "--chunk-tokens", "64", "--chunk-overlap", "8", "--concurrency", "2"}
}

// ingestClean runs a complete ingest of paths into a new store in this
// process and returns the store's path.
func ingestClean(t *testing.T, paths ...string) string {
	t.Helper()
	db := filepath.Join(t.TempDir(), "clean.db")
	cmd := newRootCmd(streams{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard})
	cmd.SetArgs(append(storeArgs(db), paths...))
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		t.Fatalf("clean ingest: %v", err)
	}
	return db
}

// dump renders everything a store holds as sorted lines: documents, chunks
// (with a hash of text and vector), MENTIONED_IN edges, entities and
// relations with their merged descriptions, weights and vectors, and counts.
func dump(t *testing.T, db string) string {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, "sqlite://"+db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var lines []string
	add := func(format string, args ...any) { lines = append(lines, fmt.Sprintf(format, args...)) }
	docs, err := st.Documents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var chunkIDs []string
	for _, d := range docs {
		add("document %s path=%s status=%s error=%q chunks=%d hash=%s format=%s title=%q fp=%q",
			d.ID, d.Path, d.Status, d.Error, d.Chunks, d.Hash, d.Format, d.Title, d.Fingerprint)
		chunks, err := st.DocumentChunks(ctx, d.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range chunks {
			add("chunk %s doc=%s idx=%d span=%d-%d tokens=%d text=%s vec=%s", c.ID, c.DocID, c.Index, c.Start, c.End, c.Tokens, digest(c.Text), vecDigest(c.Embedding))
			chunkIDs = append(chunkIDs, c.ID)
		}
	}
	mentions, err := st.EntitiesOfChunks(ctx, chunkIDs)
	if err != nil {
		t.Fatal(err)
	}
	entitySet := map[string]bool{}
	for _, m := range mentions {
		add("mention %s -> %s (doc %s)", m.EntityID, m.ChunkID, m.DocID)
		entitySet[m.EntityID] = true
	}
	entityIDs := make([]string, 0, len(entitySet))
	for id := range entitySet {
		entityIDs = append(entityIDs, id)
	}
	sort.Strings(entityIDs)
	ents, err := st.Entities(ctx, entityIDs)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		add("entity %s name=%q type=%s mentions=%d desc=%q vec=%s", e.ID, e.Name, e.Type, e.Mentions, e.Description, vecDigest(e.Embedding))
	}
	rels, err := st.RelationsOf(ctx, entityIDs, math.MaxInt32)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rels {
		add("relation %s %s->%s type=%s weight=%.6f keywords=%q desc=%q vec=%s", r.ID, r.SourceID, r.TargetID, r.Type, r.Weight, r.Keywords, r.Description, vecDigest(r.Embedding))
	}
	stats, err := st.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	add("stats documents=%d chunks=%d entities=%d relations=%d mentions=%d done=%d", stats.Documents, stats.Chunks, stats.Entities, stats.Relations, stats.Mentions, stats.ByStatus[store.StatusDone])
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return fmt.Sprintf("%x", sum[:8])
}

func vecDigest(v []float32) string {
	h := sha256.New()
	for _, x := range v {
		fmt.Fprintf(h, "%.5f,", x)
	}
	return fmt.Sprintf("%x", h.Sum(nil)[:8])
}

// sameGraph fails the test with the differing lines when two dumps differ.
func sameGraph(t *testing.T, got, want string) {
	t.Helper()
	if got == want {
		return
	}
	inGot, inWant := map[string]bool{}, map[string]bool{}
	for _, l := range strings.Split(got, "\n") {
		inGot[l] = true
	}
	for _, l := range strings.Split(want, "\n") {
		inWant[l] = true
	}
	var diff []string
	for _, l := range strings.Split(got, "\n") {
		if !inWant[l] {
			diff = append(diff, "+ "+l)
		}
	}
	for _, l := range strings.Split(want, "\n") {
		if !inGot[l] {
			diff = append(diff, "- "+l)
		}
	}
	if len(diff) > 30 {
		diff = append(diff[:30], fmt.Sprintf("... and %d more", len(diff)-30))
	}
	t.Fatalf("graph differs from a clean ingest (+ only here, - only in the clean one):\n%s", strings.Join(diff, "\n"))
}

// storedDocs lists the documents the SQLite store at db holds.
func storedDocs(t *testing.T, db string) []store.Document {
	t.Helper()
	st, err := store.Open(context.Background(), "sqlite://"+db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	docs, err := st.Documents(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return docs
}

// unfinishedRows lists documents not done or failed.
func unfinishedRows(t *testing.T, db string) []string {
	t.Helper()
	var out []string
	for _, d := range storedDocs(t, db) {
		if d.Status == store.StatusPending || d.Status == store.StatusProcessing {
			out = append(out, string(d.Status)+" "+d.Path)
		}
	}
	return out
}

func doneCount(t *testing.T, db string) int {
	t.Helper()
	st, err := store.Open(context.Background(), "sqlite://"+db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s, err := st.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return s.ByStatus[store.StatusDone]
}

// TestCrashResume kills ingest with SIGKILL at random points over several
// runs, changing the files in between, and checks that a final run leaves
// exactly the graph a clean ingest of the same files builds.
func TestCrashResume(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns and kills ingest processes")
	}
	work := t.TempDir()
	docs := filepath.Join(work, "docs")
	corpus(t, docs, 36, 1)
	db := filepath.Join(work, "crash.db")

	// How long one full run takes here bounds the random kill points.
	start := time.Now()
	probe := startChild(t, work, append(storeArgs(filepath.Join(work, "probe.db")), docs)...)
	if code := probe.wait(t); code != 0 {
		t.Fatalf("probe run exited %d:\n%s", code, probe.stderr.String())
	}
	full := time.Since(start)

	seed := uint64(time.Now().UnixNano())
	t.Logf("kill points and edits seeded with %d; a full run takes %s", seed, full.Round(time.Millisecond))
	r := rand.New(rand.NewPCG(seed, 7))
	const kills = 6
	for run := range kills {
		if run > 0 {
			// Change the corpus before each run, so that every run has work
			// to interrupt: updates, deletions and additions.
			files, _ := filepath.Glob(filepath.Join(docs, "*", "*.md"))
			for range 8 {
				writeNote(t, files[r.IntN(len(files))], r, 100+run)
			}
			if err := os.Remove(files[r.IntN(len(files))]); err != nil && !errors.Is(err, os.ErrNotExist) {
				t.Fatal(err)
			}
			writeNote(t, filepath.Join(docs, "added", fmt.Sprintf("run%d.md", run)), r, 200+run)
		}
		c := startChild(t, work, append(storeArgs(db), "--prune", docs)...)
		time.Sleep(time.Duration(r.Int64N(int64(full))))
		c.signal(t, syscall.SIGKILL)
		code := c.wait(t)
		t.Logf("run %d: exit %d, %d documents done, unfinished rows %d", run, code, doneCount(t, db), len(unfinishedRows(t, db)))
	}
	final := startChild(t, work, append(storeArgs(db), "--prune", docs)...)
	if code := final.wait(t); code != 0 {
		t.Fatalf("final run exited %d:\n%s", code, final.stderr.String())
	}
	if left := unfinishedRows(t, db); len(left) > 0 {
		t.Fatalf("documents left unfinished after the final run: %v", left)
	}
	sameGraph(t, dump(t, db), dump(t, ingestClean(t, docs)))
}

// TestSignals checks the three ways a signal ends a run, and watch mode's
// stop. Each signal is sent while a document is in flight: claimed, and
// held there by the heldclaim store until the signal takes effect. More
// files follow it than the pipeline claims together (claimBatch, 256), so
// some are never claimed and a stop must leave them.
func TestSignals(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns and signals ingest processes")
	}
	work := t.TempDir()
	docs := filepath.Join(work, "docs")
	corpus(t, docs, 24, 2)
	held := filepath.Join(docs, "part0", "note00held.md")
	writeNote(t, held, rand.New(rand.NewPCG(3, 3)), 100)
	memos := filepath.Join(docs, "part3")
	if err := os.MkdirAll(memos, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 300 {
		line := fmt.Sprintf("Memo %d: Grace Hopper wrote to Alan Turing in %d.\n", i, 1900+i)
		if err := os.WriteFile(filepath.Join(memos, fmt.Sprintf("memo%03d.md", i)), []byte(line), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv(heldPathEnv, held)
	clean := dump(t, ingestClean(t, docs))
	run := func(t *testing.T, db string, extra ...string) *child {
		args := append(storeArgs(db), "--concurrency", "1")
		return startChild(t, work, append(append(args, extra...), docs)...)
	}
	// runHeld is run with the held document's claim waiting (the later
	// --store wins).
	runHeld := func(t *testing.T, db string, extra ...string) *child {
		return run(t, db, append([]string{"--store", "heldclaim://" + db}, extra...)...)
	}
	rerunEqualsClean := func(t *testing.T, db string) {
		again := run(t, db)
		if code := again.wait(t); code != 0 {
			t.Fatalf("re-run exited %d:\n%s", code, again.stderr.String())
		}
		sameGraph(t, dump(t, db), clean)
	}
	// inFlight waits until the held document's claim waits, and checks
	// that its row is claimed. It reads the SQLite file on a read-only
	// connection, which leaves the child's store alone: opening the store
	// would make this test a second writer.
	inFlight := func(t *testing.T, c *child, db string) {
		c.stderr.waitLine(t, heldLine+held)
		conn, err := sql.Open("sqlite", "file:"+db+"?mode=ro&_pragma=busy_timeout(10000)")
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		var status string
		if err := conn.QueryRow(`SELECT status FROM documents WHERE path = ?`, held).Scan(&status); err != nil {
			t.Fatalf("the held document's row: %v", err)
		}
		if status != string(store.StatusProcessing) {
			t.Fatalf("the held document is %s while its claim waits, want %s", status, store.StatusProcessing)
		}
	}
	stored := func(t *testing.T, db, path string) bool {
		st, err := store.Open(context.Background(), "sqlite://"+db, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		d, err := st.DocumentByPath(context.Background(), path)
		return err == nil && d.Status == store.StatusDone
	}

	t.Run("one signal finishes in-flight documents", func(t *testing.T) {
		t.Setenv(heldUntilEnv, "stop") // the claim returns once the run stops taking files
		db := filepath.Join(t.TempDir(), "g.db")
		c := runHeld(t, db)
		inFlight(t, c, db)
		c.signal(t, os.Interrupt)
		if code := c.wait(t); code != 130 {
			t.Fatalf("a batch run stopped by Ctrl-C should exit 130 (the shell's convention), got %d:\n%s", code, c.stderr.String())
		}
		if !stored(t, db, held) {
			t.Fatalf("the document in flight at the signal should have been finished:\n%s", c.stderr.String())
		}
		if !strings.Contains(c.stdout.String(), "files not started") {
			t.Fatalf("the summary should say files were left:\n%s", c.stdout.String())
		}
		if left := unfinishedRows(t, db); len(left) > 0 {
			t.Fatalf("a graceful stop must leave no unfinished rows: %v", left)
		}
		rerunEqualsClean(t, db)
	})

	t.Run("shutdown timeout rolls back", func(t *testing.T) {
		db := filepath.Join(t.TempDir(), "g.db")
		c := runHeld(t, db, "--shutdown-timeout", "1ms")
		inFlight(t, c, db)
		c.signal(t, syscall.SIGTERM)
		if code := c.wait(t); code != 128+int(syscall.SIGTERM) {
			t.Fatalf("a batch run stopped by SIGTERM should exit 143 even when the shutdown timeout rolled back, got %d:\n%s", code, c.stderr.String())
		}
		if !strings.Contains(c.stderr.String(), "rolled back") {
			t.Fatalf("the timeout should be reported:\n%s", c.stderr.String())
		}
		if stored(t, db, held) {
			t.Fatal("the document in flight should have been rolled back")
		}
		if left := unfinishedRows(t, db); len(left) > 0 {
			t.Fatalf("a rollback must leave no unfinished rows: %v", left)
		}
		rerunEqualsClean(t, db)
	})

	t.Run("second signal aborts", func(t *testing.T) {
		db := filepath.Join(t.TempDir(), "g.db")
		c := runHeld(t, db)
		inFlight(t, c, db)
		c.signal(t, os.Interrupt)
		c.signal(t, syscall.SIGTERM)
		// Two signals sent back to back may reach the process in either
		// order; either way it ends as stopped by a signal.
		if code := c.wait(t); code != 128+int(syscall.SIGTERM) && code != 128+int(syscall.SIGINT) {
			t.Fatalf("a second signal should end ingest with status 143 (or 130), got %d:\n%s", code, c.stderr.String())
		}
		if !strings.Contains(c.stderr.String(), "second signal") {
			t.Fatalf("the abort should be reported:\n%s", c.stderr.String())
		}
		if stored(t, db, held) {
			t.Fatal("the document in flight should not have been finished")
		}
		rerunEqualsClean(t, db)
	})

	t.Run("watch stops on SIGTERM", func(t *testing.T) {
		db := filepath.Join(t.TempDir(), "g.db")
		c := startChild(t, work, append(storeArgs(db), "--watch", "--debounce", "100ms", docs)...)
		c.stdout.waitLine(t, "watching 1 folder")
		extra := filepath.Join(docs, "part1", "late.md")
		if err := os.WriteFile(extra, []byte("Ada Lovelace met Alan Turing in Zurich.\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Remove(extra) })
		c.stdout.waitLine(t, "added     "+extra)
		c.signal(t, syscall.SIGTERM)
		if code := c.wait(t); code != 0 {
			t.Fatalf("watch should exit 0 on SIGTERM, got %d:\n%s", code, c.stderr.String())
		}
		if !strings.Contains(c.stdout.String(), "stopped watching") {
			t.Fatalf("watch output:\n%s", c.stdout.String())
		}
		if left := unfinishedRows(t, db); len(left) > 0 {
			t.Fatalf("unfinished rows after watch stopped: %v", left)
		}
	})
}
