package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/docgraph/docgraph/eval"

	"github.com/docgraph/docgraph/server"
)

// BenchmarkServeLoad measures `query serve` under load from another
// process on loopback, against the in-process engine and the one-shot CLI
// in the same run, on the 2wiki store (mix mode, 2wiki's questions in turn):
//
//	go run ./cmd/query eval --dataset ../shared/data/2wiki --mode mix --questions 1 --store-dir .docgraph/eval
//	go test ./cmd/query -run '^$' -bench ServeLoad -benchtime 1x -timeout 60m
//
// The store is DOCGRAPH_BENCH_STORE (default .docgraph/eval/2wiki.db); the
// server is DOCGRAPH_QUERY_BIN when set (go build -o bin/ ./cmd/query),
// else this test binary. Sizes: DOCGRAPH_BENCH_REQUESTS (10000 after 1000
// of warm-up, split 1:3:6 over 1, 4 and 16 clients; in process a thirtieth,
// at most 300, per client count), DOCGRAPH_BENCH_ONESHOT (10).
func BenchmarkServeLoad(b *testing.B) {
	db := os.Getenv("DOCGRAPH_BENCH_STORE")
	if db == "" {
		db, _ = filepath.Abs("../../.docgraph/eval/2wiki.db")
	}
	if _, err := os.Stat(db); err != nil {
		b.Skipf("no 2wiki store at %s (build it with query eval --store-dir .docgraph/eval)", db)
	}
	data, err := eval.FindData(".")
	if err != nil {
		b.Skip(err)
	}
	ds, err := eval.Load(filepath.Join(data, "2wiki"))
	if err != nil {
		b.Skip(err)
	}
	var questions []string
	for _, q := range ds.Questions {
		questions = append(questions, q.Question)
	}
	total := envInt("DOCGRAPH_BENCH_REQUESTS", 10000)
	oneshot := envInt("DOCGRAPH_BENCH_ONESHOT", 10)
	storeURL := "sqlite://" + db
	b.Logf("load before: %s", loadavg())

	b.Run("oneshot-cli", func(b *testing.B) {
		var lat []time.Duration
		for i := 0; i < oneshot; i++ {
			cmd := queryCommand("--store", storeURL, "--config", "", "--json", questions[i%len(questions)])
			var stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = io.Discard, &stderr
			t := time.Now()
			if err := cmd.Run(); err != nil {
				b.Fatalf("%v: %s", err, stderr.String())
			}
			lat = append(lat, time.Since(t))
		}
		reportLatency(b, "oneshot-cli", 1, lat, 0, sum(lat))
	})

	b.Run("in-process", func(b *testing.B) {
		f := &serverFlags{}
		fs := pflag.NewFlagSet("bench", pflag.ContinueOnError)
		f.add(fs)
		_ = fs.Parse([]string{"--store", storeURL})
		e, err := openTestEngine(f)
		if err != nil {
			b.Fatal(err)
		}
		defer e.Close()
		if err := e.Warm(context.Background()); err != nil {
			b.Fatal(err)
		}
		n := min(total/30, 300)
		for c, clients := range []int{1, 4, 16} {
			lat, errs, wall := drive(clients, n, func(i int) error {
				_, err := e.Query(context.Background(), &server.Request{Question: questions[(c*n+i)%len(questions)]}, nil)
				return err
			})
			reportLatency(b, fmt.Sprintf("in-process c=%d", clients), clients, lat, errs, wall)
		}
	})

	b.Run("serve", func(b *testing.B) {
		port := freePort(b)
		addr := "127.0.0.1:" + strconv.Itoa(port)
		cmd := queryCommand("serve", "--store", storeURL, "--config", "", "--addr", addr, "--access-log=false")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		start := time.Now()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		defer func() {
			_ = cmd.Process.Signal(os.Interrupt)
			_ = cmd.Wait()
		}()
		base := "http://" + addr
		for {
			if r, err := http.Get(base + "/healthz"); err == nil {
				r.Body.Close()
				break
			}
			if time.Since(start) > 2*time.Minute {
				b.Fatalf("server did not come up: %s", stderr.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
		b.Logf("serve: up in %s, RSS %s", time.Since(start).Round(time.Millisecond), rss(cmd.Process.Pid))
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 32}}
		post := func(q string) error {
			body, _ := json.Marshal(map[string]any{"question": q, "mode": "mix"})
			resp, err := client.Post(base+"/v1/query", "application/json", bytes.NewReader(body))
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			if _, err := io.Copy(io.Discard, resp.Body); err != nil {
				return err
			}
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("status %d", resp.StatusCode)
			}
			return nil
		}
		warm := min(total/10, 1000)
		_, errs, _ := drive(4, warm, func(i int) error { return post(questions[i%len(questions)]) })
		warmRSS := rss(cmd.Process.Pid)
		b.Logf("serve: after %d warm-up requests (%d errors): RSS %s; %s", warm, errs, warmRSS, heap(client, base))
		done := 0
		for _, c := range []struct{ clients, share int }{{1, 1}, {4, 3}, {16, 6}} {
			n := total * c.share / 10
			off := done
			lat, errs, wall := drive(c.clients, n, func(i int) error { return post(questions[(off+i)%len(questions)]) })
			done += n
			reportLatency(b, fmt.Sprintf("serve c=%d", c.clients), c.clients, lat, errs, wall)
			b.Logf("serve: after %d requests: RSS %s; %s", done, rss(cmd.Process.Pid), heap(client, base))
		}
		b.Logf("serve: %d requests after warm-up; RSS after warm-up %s, now %s", done, warmRSS, rss(cmd.Process.Pid))
	})
	b.Logf("load after: %s", loadavg())
}

// queryCommand is the query command as a child process.
func queryCommand(args ...string) *exec.Cmd {
	if bin := os.Getenv("DOCGRAPH_QUERY_BIN"); bin != "" {
		return exec.Command(bin, args...)
	}
	return commandOf(args...)
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

func freePort(b *testing.B) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// drive runs n calls of fn from clients goroutines and returns each
// call's latency, the number of errors and the wall time.
func drive(clients, n int, fn func(i int) error) ([]time.Duration, int, time.Duration) {
	lat := make([]time.Duration, n)
	var next, errs atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				t := time.Now()
				if fn(i) != nil {
					errs.Add(1)
				}
				lat[i] = time.Since(t)
			}
		}()
	}
	wg.Wait()
	return lat, int(errs.Load()), time.Since(start)
}

func sum(ds []time.Duration) (s time.Duration) {
	for _, d := range ds {
		s += d
	}
	return s
}

func reportLatency(b *testing.B, name string, clients int, lat []time.Duration, errs int, wall time.Duration) {
	s := slices.Clone(lat)
	slices.Sort(s)
	pct := func(p float64) time.Duration { return s[min(len(s)-1, int(p*float64(len(s))))] }
	rps := float64(len(s)) / wall.Seconds()
	b.Logf("%-20s clients %2d  requests %5d  %7.1f req/s  p50 %7.1f ms  p99 %7.1f ms  errors %d  (load %s)",
		name, clients, len(s), rps, ms(pct(0.5)), ms(pct(0.99)), errs, loadavg())
	b.ReportMetric(rps, strings.ReplaceAll(name, " ", "_")+"-req/s")
	b.ReportMetric(ms(pct(0.5)), strings.ReplaceAll(name, " ", "_")+"-p50-ms")
	b.ReportMetric(ms(pct(0.99)), strings.ReplaceAll(name, " ", "_")+"-p99-ms")
	b.ReportMetric(float64(errs), strings.ReplaceAll(name, " ", "_")+"-errors")
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// rss is a process's resident set from /proc: now and at its peak, and
// now split into anonymous memory (the Go heap and SQLite's caches: what
// would grow with a leak) and mapped file pages (the database and vector
// sidecars, shared with the page cache).
func rss(pid int) string {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	v := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, val, _ := strings.Cut(sc.Text(), ":")
		v[k] = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(val), "kB"))
	}
	mb := func(k string) string {
		n, _ := strconv.Atoi(v[k])
		return strconv.Itoa(n/1024) + " MB"
	}
	return fmt.Sprintf("%s (peak %s; anonymous %s, file %s)", mb("VmRSS"), mb("VmHWM"), mb("RssAnon"), mb("RssFile"))
}

// heap is the server's Go heap and goroutines, from /v1/stats.
func heap(client *http.Client, base string) string {
	resp, err := client.Get(base + "/v1/stats")
	if err != nil {
		return "stats: " + err.Error()
	}
	defer resp.Body.Close()
	var s struct {
		HeapBytes  uint64 `json:"heap_bytes"`
		Goroutines int    `json:"goroutines"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		return "stats: " + err.Error()
	}
	return fmt.Sprintf("Go heap %d MB, %d goroutines", s.HeapBytes>>20, s.Goroutines)
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:3], " ")
}
