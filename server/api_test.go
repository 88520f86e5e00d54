package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/docgraph/docgraph/store"
)

func startAPI(t *testing.T, e *Engine, cfg HandlerConfig) *httptest.Server {
	t.Helper()
	if cfg.Timeout == 0 {
		cfg.Timeout = 30 * time.Second
	}
	srv := httptest.NewServer(NewHandler(e, cfg))
	t.Cleanup(srv.Close)
	return srv
}

type reply struct {
	Status int
	Header http.Header
	Body   []byte
}

func do(t *testing.T, method, url, body string, header ...string) reply {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return reply{resp.StatusCode, resp.Header, b}
}

func decode[T any](t *testing.T, b []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("decode %T: %v\n%s", v, err, b)
	}
	return v
}

// unreachableStore is a store whose graph cannot be read, with an error
// that names where it is, as the real stores' errors do.
type unreachableStore struct{ store.Store }

func (unreachableStore) GraphVersion(context.Context) (string, error) {
	return "", errors.New("sqlite store /srv/private/graph.db: graph version: disk I/O error")
}

func (unreachableStore) ScanMentions(context.Context, func(store.Mention) error) error {
	return errors.New("sqlite store /srv/private/graph.db: scan: disk I/O error")
}

// TestServeHealth: /healthz says ok or unavailable to anyone, and more
// (uptime, the store's error) only with the token; HEAD answers the same
// status with no body.
func TestServeHealth(t *testing.T) {
	const token = "a-token-of-enough-length"
	healthy := startAPI(t, testEngine(t), HandlerConfig{Token: token})
	broken := testEngine(t)
	broken.st = unreachableStore{broken.st}
	down := startAPI(t, broken, HandlerConfig{Token: token})
	open := startAPI(t, broken, HandlerConfig{})
	auth := []string{"Authorization", "Bearer " + token}
	for _, c := range []struct {
		name, method, url string
		header            []string
		status            int
		body              string // exact, "" for none; "*" for details
	}{
		{"healthy", "GET", healthy.URL, nil, 200, `{"status":"ok"}`},
		{"healthy, wrong token", "GET", healthy.URL, []string{"Authorization", "Bearer wrong-token-of-enough-length"}, 200, `{"status":"ok"}`},
		{"healthy, token", "GET", healthy.URL, auth, 200, "*"},
		{"healthy HEAD", "HEAD", healthy.URL, nil, 200, ""},
		{"down", "GET", down.URL, nil, 503, `{"status":"unavailable"}`},
		{"down, no token set", "GET", open.URL, nil, 503, `{"status":"unavailable"}`},
		{"down, token", "GET", down.URL, auth, 503, "*"},
		{"down HEAD", "HEAD", down.URL, nil, 503, ""},
	} {
		r := do(t, c.method, c.url+"/healthz", "", c.header...)
		got := strings.TrimSpace(string(r.Body))
		if r.Status != c.status || (c.body != "*" && got != c.body) {
			t.Errorf("%s: %d %s, want %d %s", c.name, r.Status, got, c.status, c.body)
		}
		if c.body == "*" {
			h := decode[map[string]any](t, r.Body)
			if _, ok := h["uptime_seconds"]; !ok || (c.status == 503) != strings.Contains(fmt.Sprint(h["error"]), "graph.db") {
				t.Errorf("%s: details %s", c.name, r.Body)
			}
		}
		if c.method == "HEAD" && r.Header.Get("Content-Type") == "" {
			t.Errorf("%s: no content type", c.name)
		}
	}
}
