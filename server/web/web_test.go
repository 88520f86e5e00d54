package web

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

func get(t *testing.T, h http.Handler, method, target string, header ...string) *http.Response {
	t.Helper()
	r := httptest.NewRequest(method, target, nil)
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Result()
}

// TestHandler: the page names each asset with its hash; a hashed asset is
// kept a year, the page and an unhashed asset are revalidated by ETag;
// every response carries the CSP.
func TestHandler(t *testing.T) {
	h := Handler()
	resp := get(t, h, "GET", "/?q=who")
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" || resp.Header.Get("Cache-Control") != "no-cache" {
		t.Fatalf("GET /: %d %v", resp.StatusCode, resp.Header)
	}
	// Named relative to the page, which may be mounted under a prefix.
	urls := regexp.MustCompile(`"(assets/[^"?]+)\?v=([0-9a-f]{12})"`).FindAllStringSubmatch(string(body), -1)
	if len(urls) != 2 {
		t.Fatalf("want app.css and app.js named with their hashes, got %q", urls)
	}
	for _, u := range urls {
		hashed := get(t, h, "GET", "/"+u[0][1:len(u[0])-1])
		if hashed.StatusCode != 200 || hashed.Header.Get("Cache-Control") != "public, max-age=31536000, immutable" {
			t.Errorf("GET %s: %d %q", u[0], hashed.StatusCode, hashed.Header.Get("Cache-Control"))
		}
		plain := get(t, h, "GET", "/"+u[1])
		etag := plain.Header.Get("ETag")
		if plain.Header.Get("Cache-Control") != "no-cache" || etag == "" {
			t.Errorf("GET %s: %q, ETag %q", u[1], plain.Header.Get("Cache-Control"), etag)
		}
		if again := get(t, h, "GET", "/"+u[1], "If-None-Match", etag); again.StatusCode != http.StatusNotModified {
			t.Errorf("GET %s with its ETag: %d", u[1], again.StatusCode)
		}
		if stale := get(t, h, "GET", "/"+u[0][1:len(u[0])-1]+"0"); stale.Header.Get("Cache-Control") != "no-cache" {
			t.Errorf("GET %s with another hash: %q", u[1], stale.Header.Get("Cache-Control"))
		}
	}
	for _, c := range []struct {
		method, target string
		code           int
	}{
		{"GET", "/", 200}, {"HEAD", "/", 200}, {"GET", "/assets/app.js", 200},
		{"GET", "/assets/", 404}, {"GET", "/assets/nothing.js", 404}, {"GET", "/index.html", 404}, {"POST", "/", 405},
	} {
		r := get(t, h, c.method, c.target)
		if r.StatusCode != c.code || r.Header.Get("Content-Security-Policy") != CSP || r.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s %s: %d, CSP %q", c.method, c.target, r.StatusCode, r.Header.Get("Content-Security-Policy"))
		}
	}
	if Size() < 10_000 {
		t.Errorf("page weight %d bytes: are the assets embedded?", Size())
	}
}

// TestNoInlineCodeOrMarkupSinks: the page holds no inline script or
// style (the CSP would block them), and the script never parses a string
// as markup, so text from the store cannot become elements.
func TestNoInlineCodeOrMarkupSinks(t *testing.T) {
	page, _ := files.ReadFile("index.html")
	for _, m := range regexp.MustCompile(`(?is)<script([^>]*)>(.*?)</script>`).FindAllStringSubmatch(string(page), -1) {
		if !strings.Contains(m[1], "src=") || strings.TrimSpace(m[2]) != "" {
			t.Errorf("index.html: inline script %q", m[0])
		}
	}
	for _, re := range []string{`\sstyle\s*=`, `\son[a-z]+\s*=`, `<style`, `javascript:`} {
		if m := regexp.MustCompile(`(?i)` + re).FindString(string(page)); m != "" {
			t.Errorf("index.html: %q", m)
		}
	}
	script, _ := files.ReadFile("assets/app.js")
	for _, sink := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", "createContextualFragment", "DOMParser"} {
		if strings.Contains(string(script), sink) {
			t.Errorf("app.js uses %s", sink)
		}
	}
}
