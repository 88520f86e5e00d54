// Package web is the page `query serve` answers at "/": one HTML file, a
// style sheet and a script, embedded so that the server needs nothing at
// run time and nothing from a CDN. The page holds no data; it asks the
// JSON API for everything, so it is served without the API's token.
//
// It imports nothing of docgraph: the server mounts Handler beside its API.
package web

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"net/http"
	"path"
	"strings"
	"time"
)

//go:embed index.html assets
var files embed.FS

// CSP is the Content-Security-Policy of every response: script and style
// only from the page's own files (no inline script, no style attribute),
// data only from the same origin, and no framing.
const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// asset is one served file with its validator.
type asset struct {
	body  []byte
	ctype string
	etag  string // quoted, from the content's sha256
	hash  string // the first 12 hex digits of the sha256, the ?v= of its URL
}

func newAsset(name string, body []byte) asset {
	sum := sha256.Sum256(body)
	h := hex.EncodeToString(sum[:])
	ctype := "application/octet-stream"
	switch path.Ext(name) {
	case ".html":
		ctype = "text/html; charset=utf-8"
	case ".css":
		ctype = "text/css; charset=utf-8"
	case ".js":
		ctype = "text/javascript; charset=utf-8"
	case ".svg":
		ctype = "image/svg+xml"
	case ".txt", "":
		ctype = "text/plain; charset=utf-8"
	}
	return asset{body: body, ctype: ctype, etag: `"` + h[:32] + `"`, hash: h[:12]}
}

// site is the page and its assets, read once.
type site struct {
	index  asset
	assets map[string]asset // by URL path, "/assets/app.js"
}

// load reads the embedded files. The page names each asset with its hash
// (assets/app.js?v=HASH), so a browser may keep an asset for a year: a
// new build changes the URL.
func load() (*site, error) {
	s := &site{assets: map[string]asset{}}
	entries, err := files.ReadDir("assets")
	if err != nil {
		return nil, err
	}
	page, err := files.ReadFile("index.html")
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		b, err := files.ReadFile("assets/" + e.Name())
		if err != nil {
			return nil, err
		}
		a := newAsset(e.Name(), b)
		url := "/assets/" + e.Name()
		s.assets[url] = a
		// The page names its assets relative to itself (assets/app.js), so
		// it works under whatever prefix a program mounts the handler.
		rel := url[1:]
		page = bytes.ReplaceAll(page, []byte(`"`+rel+`"`), []byte(`"`+rel+"?v="+a.hash+`"`))
	}
	s.index = newAsset("index.html", page)
	return s, nil
}

var (
	loaded  *site
	loadErr error
	// modTime is zero: embedded files have none, and the ETag validates.
	modTime time.Time
)

func init() { loaded, loadErr = load() }

// Handler serves the page at "/" and its files under "/assets/"; any other
// path is 404. Every response carries the CSP; the page is revalidated on
// each load (its ETag makes that a 304), a hashed asset is kept a year.
func Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if loadErr != nil {
			http.Error(w, "the page's files are missing from this build", http.StatusInternalServerError)
			return
		}
		h := w.Header()
		h.Set("Content-Security-Policy", CSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			h.Set("Allow", "GET, HEAD")
			http.Error(w, "the page takes GET", http.StatusMethodNotAllowed)
			return
		}
		var a asset
		switch p := r.URL.Path; {
		case p == "/":
			a = loaded.index
			h.Set("Cache-Control", "no-cache")
		case strings.HasPrefix(p, "/assets/"):
			var ok bool
			if a, ok = loaded.assets[p]; !ok {
				http.NotFound(w, r)
				return
			}
			if r.URL.Query().Get("v") == a.hash {
				h.Set("Cache-Control", "public, max-age=31536000, immutable")
			} else {
				h.Set("Cache-Control", "no-cache")
			}
		default:
			http.NotFound(w, r)
			return
		}
		h.Set("Content-Type", a.ctype)
		h.Set("ETag", a.etag)
		http.ServeContent(w, r, "", modTime, bytes.NewReader(a.body))
	})
}

// Size is the bytes of the page and its assets, what a first visit loads.
func Size() int {
	if loadErr != nil {
		return 0
	}
	n := len(loaded.index.body)
	for _, a := range loaded.assets {
		n += len(a.body)
	}
	return n
}
