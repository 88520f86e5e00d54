package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docgraph/docgraph/server"
	"github.com/docgraph/docgraph/server/web"
)

// The page in a real browser: headless Chromium driven through
// chromedriver's W3C WebDriver API, which is JSON over HTTP, so the test
// needs no module beyond the standard library. It skips where Debian's
// chromium and chromium-driver packages are not installed.

// browser is one WebDriver session.
type browser struct {
	t       *testing.T
	session string // http://127.0.0.1:PORT/session/ID
}

// startBrowser starts chromedriver and a headless Chromium session with a
// window of w by h pixels, both ended when the test ends.
func startBrowser(t *testing.T, w, h int) *browser {
	t.Helper()
	chromium, err := lookPathAny("chromium", "chromium-browser", "google-chrome")
	if err != nil {
		t.Skip("no Chromium (apt-get install chromium chromium-driver)")
	}
	driver, err := lookPathAny("chromedriver")
	if err != nil {
		t.Skip("no chromedriver (apt-get install chromium-driver)")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(driver, fmt.Sprintf("--port=%d", port))
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	for deadline := time.Now().Add(20 * time.Second); ; {
		if r, err := http.Get(base + "/status"); err == nil {
			r.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("chromedriver did not answer within 20 s:\n%s", logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	b := &browser{t: t}
	caps := map[string]any{"capabilities": map[string]any{"alwaysMatch": map[string]any{
		"browserName": "chrome",
		"goog:chromeOptions": map[string]any{"binary": chromium, "args": []string{
			"--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
			"--disable-background-networking", "--disable-component-update", "--disable-sync",
			"--no-first-run", "--hide-scrollbars", "--force-device-scale-factor=1",
			"--user-data-dir=" + t.TempDir(), fmt.Sprintf("--window-size=%d,%d", w, h),
		}},
	}}}
	var created struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(b.call("POST", base+"/session", caps), &created); err != nil || created.SessionID == "" {
		t.Fatalf("new session: %v", err)
	}
	b.session = base + "/session/" + created.SessionID
	t.Cleanup(func() { b.on(t).call("DELETE", b.session, nil) })
	return b
}

func lookPathAny(names ...string) (string, error) {
	var err error
	for _, n := range names {
		var p string
		if p, err = exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", err
}

// call makes one WebDriver request and returns its value.
func (b *browser) call(method, url string, body any) json.RawMessage {
	b.t.Helper()
	var in io.Reader
	if body != nil {
		j, _ := json.Marshal(body)
		in = bytes.NewReader(j)
	}
	req, _ := http.NewRequest(method, url, in)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.t.Fatalf("webdriver %s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	var out struct {
		Value json.RawMessage `json:"value"`
	}
	raw, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(raw, &out); err != nil || resp.StatusCode != http.StatusOK {
		b.t.Fatalf("webdriver %s %s: %d %.500s", method, url, resp.StatusCode, raw)
	}
	return out.Value
}

// on is b reporting to t, for a subtest.
func (b *browser) on(t *testing.T) *browser {
	c := *b
	c.t = t
	return &c
}

func (b *browser) open(u string) { b.call("POST", b.session+"/url", map[string]string{"url": u}) }

// eval runs script (a function body) in the page and decodes its result into out.
func (b *browser) eval(out any, script string, args ...any) {
	b.t.Helper()
	if args == nil {
		args = []any{}
	}
	v := b.call("POST", b.session+"/execute/sync", map[string]any{"script": script, "args": args})
	if out != nil {
		if err := json.Unmarshal(v, out); err != nil {
			b.t.Fatalf("%s: %v (%s)", script, err, v)
		}
	}
}

// wait polls script until it returns true; what names it in the failure.
func (b *browser) wait(what, script string, args ...any) {
	b.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var ok bool
		b.eval(&ok, script, args...)
		if ok {
			return
		}
		if time.Now().After(deadline) {
			var status, body string
			b.eval(&status, `return document.getElementById('status').textContent`)
			b.eval(&body, `return document.body.innerText.slice(0, 1500)`)
			b.t.Fatalf("waited 30 s for %s; status %q, page:\n%s", what, status, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// element finds the element css selects.
func (b *browser) element(css string) string {
	b.t.Helper()
	var ref map[string]string
	if err := json.Unmarshal(b.call("POST", b.session+"/element", map[string]string{"using": "css selector", "value": css}), &ref); err != nil {
		b.t.Fatal(err)
	}
	for _, id := range ref {
		return id
	}
	b.t.Fatalf("no element %s", css)
	return ""
}

// click clicks the element css selects, as a user's pointer would.
func (b *browser) click(css string) {
	b.call("POST", b.session+"/element/"+b.element(css)+"/click", map[string]any{})
}

// press sends key (a WebDriver key code) to the focused element.
func (b *browser) press(key string) {
	b.call("POST", b.session+"/actions", map[string]any{"actions": []any{map[string]any{
		"type": "key", "id": "keyboard", "actions": []any{
			map[string]string{"type": "keyDown", "value": key}, map[string]string{"type": "keyUp", "value": key},
		}}}})
}

func (b *browser) typeInto(css, text string) {
	b.call("POST", b.session+"/element/"+b.element(css)+"/value", map[string]string{"text": text})
}

func (b *browser) text(css string) string {
	b.t.Helper()
	var s string
	b.eval(&s, `const e = document.querySelector(arguments[0]); return e ? e.innerText : ''`, css)
	return s
}

func (b *browser) resize(w, h int) {
	b.call("POST", b.session+"/window/rect", map[string]int{"width": w, "height": h})
}

func (b *browser) screenshot() []byte {
	b.t.Helper()
	var s string
	if err := json.Unmarshal(b.call("GET", b.session+"/screenshot", nil), &s); err != nil {
		b.t.Fatal(err)
	}
	png, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		b.t.Fatal(err)
	}
	return png
}

const (
	enterKey  = "\uE007"
	escapeKey = "\uE00C"
)

// nodeNames are the entity names the drawn graph shows.
func (b *browser) nodeNames() []string {
	var names []string
	b.eval(&names, `return [...document.querySelectorAll('#graph .node text')].map(t => t.textContent)`)
	return names
}

// nodeSelector selects the drawn node of the entity called name.
func (b *browser) nodeSelector(name string) string {
	b.t.Helper()
	var id string
	b.eval(&id, `const g = [...document.querySelectorAll('#graph .node')].find(g => g.querySelector('title').textContent.split(' (')[0] === arguments[0]);
		return g ? g.dataset.id : ''`, name)
	if id == "" {
		b.t.Fatalf("no node %q in the graph; it shows %q", name, b.nodeNames())
	}
	return fmt.Sprintf(`#graph .node[data-id=%q]`, id)
}

// TestWebPage drives the page in one browser, a case a subtest, on a
// store of testdata/corpus (and, for escaping, a store of its own).
func TestWebPage(t *testing.T) {
	b := startBrowser(t, 1000, 700)
	db := corpusStore(t)
	for _, c := range []struct {
		name string
		run  func(*testing.T, *browser, string)
	}{
		{"AsksAndExplores", webAsksAndExplores},
		{"StreamsTheAnswer", webStreamsTheAnswer},
		{"EscapesStoreText", webEscapesStoreText},
		{"AsksForTheToken", webAsksForTheToken},
		{"UnderAPrefix", webUnderAPrefix},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := b.on(t)
			b.resize(1000, 700)
			c.run(t, b, db)
		})
	}
}

// webUnderAPrefix: a program that mounts the handler under a path of its
// own (as ExampleGraph_Handler does) gets a working page there: the page,
// its assets, the API calls and its own links stay under the prefix.
func webUnderAPrefix(t *testing.T, b *browser, db string) {
	h := server.NewHandler(testEngine(t, db), server.HandlerConfig{Timeout: 30 * time.Second, MaxConcurrent: 4})
	mux := http.NewServeMux()
	mux.Handle("/docgraph/", http.StripPrefix("/docgraph", h))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	b.open(srv.URL + "/docgraph/?q=" + url.QueryEscape("Who designed the Go programming language"))
	b.wait("passages", `return document.querySelectorAll('#passages .passage').length > 0`)
	if where := b.text("#passages .passage .where"); !strings.Contains(where, "go-language.md") {
		t.Errorf("first passage from %q, want go-language.md", where)
	}
	b.click(`nav.views a[data-view="documents"]`)
	b.wait("the documents view", `return document.querySelectorAll('#docs tbody tr').length === 10`)
	var path string
	b.eval(&path, `return location.pathname`)
	if path != "/docgraph/" {
		t.Errorf("the documents view is at %q, want under /docgraph/", path)
	}
}

// webAsksAndExplores: a shared /?q= link shows the passages, the graph
// around them, an entity's panel reached by a click and by the keyboard,
// one more hop, the document's text, the documents and the stats; on a
// narrow screen the columns stack.
func webAsksAndExplores(t *testing.T, b *browser, db string) {
	srv := startAPI(t, testEngine(t, db), server.HandlerConfig{})

	b.open(srv.URL + "/?q=" + url.QueryEscape("Who designed the Go programming language"))
	b.wait("passages", `return document.querySelectorAll('#passages .passage').length > 0`)
	var passages []struct{ Title, Where, Text string }
	b.eval(&passages, `return [...document.querySelectorAll('#passages .passage')].map(li => ({
		title: li.querySelector('h3').textContent, where: li.querySelector('.where').textContent, text: li.querySelector('.text').textContent}))`)
	if !strings.Contains(passages[0].Where, "go-language.md") || passages[0].Title != "The Go programming language" ||
		!strings.Contains(passages[0].Text, "Robert Griesemer, Rob Pike and Ken Thompson") {
		t.Errorf("first passage %+v, want go-language.md's", passages[0])
	}
	var resultMs string
	b.eval(&resultMs, `return document.documentElement.dataset.resultMs || ''`)
	t.Logf("%d passages, first result %s ms after the page began to load", len(passages), resultMs)

	// The graph: drawn in SVG, naming the passage's entities, with relations.
	b.wait("the graph", `return document.querySelectorAll('#graph .node').length > 0`)
	names := b.nodeNames()
	for _, want := range []string{"Rob Pike", "Robert Griesemer", "Google"} {
		if !slices.Contains(names, want) {
			t.Errorf("graph lacks %q: %q", want, names)
		}
	}
	var edges int
	b.eval(&edges, `return document.querySelectorAll('#graph line.edge').length`)
	if edges == 0 {
		t.Error("the graph draws no relation")
	}

	// A click on an entity opens its panel: description, passages, neighbours.
	b.click(b.nodeSelector("Rob Pike"))
	b.wait("Rob Pike's panel", `const h = document.getElementById('entity-name'); return !!h && h.textContent === 'Rob Pike'`)
	panel := b.text("#entity")
	for _, want := range []string{"Neighbours", "Passages", "Google", "The Go programming language", "Expand one more hop"} {
		if !strings.Contains(panel, want) {
			t.Errorf("Rob Pike's panel lacks %q:\n%s", want, panel)
		}
	}
	var selected string
	b.eval(&selected, `return document.querySelector('#graph .node.selected title').textContent`)
	if !strings.HasPrefix(selected, "Rob Pike") {
		t.Errorf("selected node %q", selected)
	}

	// The keyboard reaches an entity too: focus its node, press Enter.
	b.eval(nil, `document.querySelector(arguments[0]).focus()`, b.nodeSelector("Ken Thompson"))
	b.press(enterKey)
	b.wait("Ken Thompson's panel by keyboard", `const h = document.getElementById('entity-name'); return !!h && h.textContent === 'Ken Thompson'`)

	// Escape closes the panel and gives the focus back to the node.
	b.press(escapeKey)
	var back struct {
		Hidden bool
		Focus  string
	}
	b.eval(&back, `return {hidden: document.getElementById('entity').hidden, focus: document.activeElement.getAttribute('aria-label') || ''}`)
	if !back.Hidden || !strings.HasPrefix(back.Focus, "Ken Thompson") {
		t.Errorf("after Escape: %+v", back)
	}
	b.press(enterKey)
	b.wait("Ken Thompson's panel again", `const h = document.getElementById('entity-name'); return !!h && h.textContent === 'Ken Thompson'`)

	// One more hop adds Ken Thompson's neighbours the passages do not name.
	before := len(b.nodeNames())
	b.click("#entity .actions button")
	b.wait("the hop", `return /^Added|^No more/.test(document.getElementById('status').textContent)`)
	after := b.nodeNames()
	if status := b.text("#status"); len(after) <= before || !strings.HasPrefix(status, fmt.Sprintf("Added %d entit", len(after)-before)) {
		t.Errorf("one more hop: %d nodes before, %d after, status %q", before, len(after), status)
	}

	if path := os.Getenv("DOCGRAPH_WEB_SCREENSHOT"); path != "" {
		b.click(b.nodeSelector("Rob Pike"))
		b.wait("Rob Pike's panel again", `const h = document.getElementById('entity-name'); return !!h && h.textContent === 'Rob Pike'`)
		// A viewport of 1000 by 700 pixels, the window's frame added.
		var frame struct{ W, H int }
		b.eval(&frame, `return {w: window.outerWidth - window.innerWidth, h: window.outerHeight - window.innerHeight}`)
		b.resize(1000+frame.W, 700+frame.H)
		// The question, the passages' heads, the graph and the panel's top.
		b.eval(nil, `window.scrollTo(0, document.getElementById('ask-form').getBoundingClientRect().top + window.scrollY - 8)`)
		if err := os.WriteFile(path, b.screenshot(), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// The passage's document, its stored text.
	b.click("#passage-1 .actions a")
	b.wait("the document", `return !document.getElementById('doc-view').hidden && document.querySelectorAll('#doc-text .seg').length > 0`)
	if title, text := b.text("#doc-title"), b.text("#doc-text"); title != "The Go programming language" || !strings.Contains(text, "Go is a statically typed") {
		t.Errorf("document view: title %q, text %q", title, text)
	}

	// The documents view lists the corpus with status and chunks.
	b.click(`nav.views a[data-view="documents"]`)
	b.wait("the documents", `return document.querySelectorAll('#docs tbody tr').length > 0`)
	var rows []string
	b.eval(&rows, `return [...document.querySelectorAll('#docs tbody tr')].map(tr => tr.innerText.replace(/\s+/g, ' '))`)
	if len(rows) != 10 || !strings.Contains(b.text("#doc-summary"), "of 10") {
		t.Errorf("documents view: %d rows, summary %q", len(rows), b.text("#doc-summary"))
	}
	if !containsMatch(rows, "go-language.md", "done") {
		t.Errorf("no done row for go-language.md: %q", rows)
	}

	// The stats, and the way to the API's description.
	b.click(`nav.views a[data-view="stats"]`)
	b.wait("the stats", `return document.querySelectorAll('#stats dt').length > 0`)
	if s := b.text("#stats"); !strings.Contains(s, "Documents\n10 (10 done)") || !strings.Contains(s, "Entities") {
		t.Errorf("stats view:\n%s", s)
	}
	var api string
	b.eval(&api, `return new URL(document.querySelector('#stats-view a').href).pathname`)
	if api != "/v1/openapi.json" {
		t.Errorf("API link %q", api)
	}

	// Back in history is the question again; on a phone the graph goes
	// under the passages, and nothing was blocked by the CSP.
	b.open(srv.URL + "/?q=" + url.QueryEscape("Who designed the Go programming language"))
	b.resize(390, 844)
	b.wait("the graph on a narrow screen", `return document.querySelectorAll('#graph .node').length > 0`)
	var layout struct{ PassagesLeft, GraphLeft, PassagesBottom, GraphTop, PageWidth, ViewWidth float64 }
	b.eval(&layout, `const p = document.getElementById('passages-box').getBoundingClientRect(), g = document.getElementById('graph-box').getBoundingClientRect();
		return {passagesLeft: p.left, graphLeft: g.left, passagesBottom: p.bottom, graphTop: g.top,
			pageWidth: document.documentElement.scrollWidth, viewWidth: window.innerWidth}`)
	if layout.PassagesLeft != layout.GraphLeft || layout.GraphTop < layout.PassagesBottom || layout.PageWidth > layout.ViewWidth {
		t.Errorf("narrow screen: passages and graph not stacked, or the page scrolls sideways: %+v", layout)
	}
	var violations string
	b.eval(&violations, `return document.documentElement.dataset.cspViolations`)
	if violations != "0" {
		t.Errorf("%s CSP violations", violations)
	}
}

// webStreamsTheAnswer: with a model the answer streams in, and its [n]
// link to the passage they cite.
func webStreamsTheAnswer(t *testing.T, b *browser, db string) {
	llm := fakeLLM(t, "Alan Turing led the work on Enigma at Bletchley Park [1].")
	llm.SetChunkSize(4)
	srv := startAPI(t, testEngine(t, db, "--llm", "openai:test-model", "--llm-cache", "off"), server.HandlerConfig{})
	b.open(srv.URL + "/?q=" + url.QueryEscape("Who broke Enigma messages at Bletchley Park?"))
	b.wait("the answer", `return document.querySelectorAll('#answer a.cite').length > 0`)
	if a := b.text("#answer"); a != "Alan Turing led the work on Enigma at Bletchley Park [1]." {
		t.Errorf("answer %q", a)
	}
	var cited struct{ Href, Where string }
	b.eval(&cited, `const a = document.querySelector('#answer a.cite'), li = document.querySelector(a.getAttribute('href'));
		return {href: a.getAttribute('href'), where: li ? li.querySelector('.where').textContent : ''}`)
	if !strings.Contains(cited.Where, "alan-turing.txt") {
		t.Errorf("[1] links to %q, which is %q", cited.Href, cited.Where)
	}
	var logic bool
	b.eval(&logic, `const o = document.querySelector('#mode option[value="logic"]'); return !o.hidden && !o.disabled`)
	if !logic {
		t.Error("the logic mode is not offered with a model")
	}
}

// webEscapesStoreText: markup in a document's text, title and file name
// is shown as text on every view, and none of it runs.
func webEscapesStoreText(t *testing.T, b *browser, _ string) {
	dir := t.TempDir()
	files := map[string]string{
		"mallory.md": "# Mallory <img src=x onerror=\"window.pwned=1\">\n\nMallory hid <script>window.pwned=2; document.title='pwned'</script> " +
			"and <img src=x onerror=\"window.pwned=3\"> in the Zanzibar harbour ledger kept by Trudy Example.\n",
		`<img src=x onerror=window.pwned=4>.txt`: "Zanzibar harbour ledger: Trudy Example wrote <b onmouseover=\"window.pwned=5\">bold</b> notes.\n",
		`<svg onload=window.pwned=6>.pdf`:        "%PDF-1.4 not really a PDF",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	db := "sqlite://" + filepath.Join(t.TempDir(), "g.db")
	ingestDir(t, db, dir)
	srv := startAPI(t, testEngine(t, db), server.HandlerConfig{})

	// ran says whether any of the markup took effect.
	ran := func(where string) {
		t.Helper()
		var state struct {
			Pwned      any
			Title      string
			Elements   int
			Violations string
		}
		b.eval(&state, `return {pwned: window.pwned ?? null, title: document.title,
			elements: document.querySelectorAll('img, b, main script, [onerror], [onload], [onmouseover]').length,
			violations: document.documentElement.dataset.cspViolations}`)
		if state.Pwned != nil || state.Title != "docgraph" || state.Elements != 0 || state.Violations != "0" {
			t.Errorf("%s: markup from the store took effect: %+v", where, state)
		}
	}

	b.open(srv.URL + "/?q=" + url.QueryEscape("Zanzibar harbour ledger Mallory"))
	b.wait("passages", `return document.querySelectorAll('#passages .passage').length >= 2`)
	passages := b.text("#passages")
	for _, want := range []string{`<script>window.pwned=2; document.title='pwned'</script>`, `<img src=x onerror="window.pwned=3">`,
		`Mallory <img src=x onerror="window.pwned=1">`, `<img src=x onerror=window.pwned=4>.txt`, `<b onmouseover="window.pwned=5">bold</b>`} {
		if !strings.Contains(passages, want) {
			t.Errorf("passages do not show %q as text:\n%s", want, passages)
		}
	}
	ran("passages")
	b.wait("the graph", `return document.querySelectorAll('#graph .node').length > 0`)
	b.click("#graph .node")
	b.wait("an entity panel", `return !!document.getElementById('entity-name')`)
	ran("entity panel")

	b.click("#passage-1 .actions a")
	b.wait("the document", `return document.querySelectorAll('#doc-text .seg').length > 0`)
	if text := b.text("#doc-text"); !strings.Contains(text, "<script>") {
		t.Errorf("document text does not show the markup:\n%s", text)
	}
	ran("document")

	b.open(srv.URL + "/?view=documents")
	b.wait("the documents", `return document.querySelectorAll('#docs tbody tr').length === 3`)
	docs := b.text("#docs")
	if !strings.Contains(docs, "<svg onload=window.pwned=6>.pdf") || !strings.Contains(docs, "Failed: ") {
		t.Errorf("documents view lacks the failed PDF and its cause:\n%s", docs)
	}
	ran("documents")
}

// webAsksForTheToken: with a token the page still loads, asks for the
// token once, keeps it for the session and sends it.
func webAsksForTheToken(t *testing.T, b *browser, db string) {
	const token = "a-token-of-enough-length"
	srv := startAPI(t, testEngine(t, db), server.HandlerConfig{Token: token})
	b.open(srv.URL + "/?q=" + url.QueryEscape("Who designed the Go programming language"))
	b.wait("the token form", `return !document.getElementById('token-view').hidden`)
	b.typeInto("#token", "wrong-token-of-enough-length")
	b.click("#token-form button")
	b.wait("the refusal", `return document.getElementById('token-error').textContent !== ''`)
	b.typeInto("#token", token)
	b.click("#token-form button")
	b.wait("passages", `return document.querySelectorAll('#passages .passage').length > 0`)
	// Another view in the same tab does not ask again.
	b.open(srv.URL + "/?view=stats")
	b.wait("the stats", `return document.querySelectorAll('#stats dt').length > 0`)
	var stored string
	b.eval(&stored, `return sessionStorage.getItem('docgraph.token')`)
	if stored != token {
		t.Errorf("session token %q", stored)
	}
}

// TestServeWebPage: the page and its files are served without the token,
// with the CSP and cache validators; other unknown paths stay JSON 404s
// (401s behind a token) and the API stays guarded.
func TestServeWebPage(t *testing.T) {
	db := corpusStore(t)
	e := testEngine(t, db)
	const token = "a-token-of-enough-length"
	for _, c := range []struct {
		token string
		path  string
		code  int
		ctype string
	}{
		{"", "/", 200, "text/html"},
		{"", "/?q=Go", 200, "text/html"},
		{"", "/assets/app.js", 200, "text/javascript"},
		{"", "/assets/app.css", 200, "text/css"},
		{"", "/assets/none.js", 404, "text/plain"},
		{"", "/index.html", 404, "application/json"},
		{token, "/", 200, "text/html"},
		{token, "/assets/app.js", 200, "text/javascript"},
		{token, "/v1/stats", 401, "application/json"},
		{token, "/nowhere", 401, "application/json"},
	} {
		srv := startAPI(t, e, server.HandlerConfig{Token: c.token})
		r := do(t, "GET", srv.URL+c.path, "")
		if r.Status != c.code || !strings.HasPrefix(r.Header.Get("Content-Type"), c.ctype) {
			t.Errorf("token %v, GET %s: %d %s, want %d %s", c.token != "", c.path, r.Status, r.Header.Get("Content-Type"), c.code, c.ctype)
		}
		if c.code == 200 && r.Header.Get("Content-Security-Policy") != web.CSP {
			t.Errorf("GET %s: CSP %q", c.path, r.Header.Get("Content-Security-Policy"))
		}
	}
	srv := startAPI(t, e, server.HandlerConfig{})
	if r := do(t, "POST", srv.URL+"/", ""); r.Status != http.StatusMethodNotAllowed {
		t.Errorf("POST /: %d", r.Status)
	}
}

// containsMatch says whether an item of list holds every one of parts.
func containsMatch(list []string, parts ...string) bool {
	for _, x := range list {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(x, p)
		}
		if all {
			return true
		}
	}
	return false
}

// TestServeDocumentText: a document's segments, in order, are its text,
// the overlap between chunks left out.
func TestServeDocumentText(t *testing.T) {
	dir := t.TempDir()
	var text strings.Builder
	for i := range 600 {
		fmt.Fprintf(&text, "Paragraph %d tells how harbour %d traded with town %d in year %d.\n\n", i, i%17, i%29, 1700+i)
	}
	if err := os.WriteFile(filepath.Join(dir, "long.txt"), []byte(text.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	db := "sqlite://" + filepath.Join(t.TempDir(), "g.db")
	ingestDir(t, db, dir)
	srv := startAPI(t, testEngine(t, db), server.HandlerConfig{})
	page := decode[server.DocPage](t, do(t, "GET", srv.URL+"/v1/documents", "").Body)
	d := page.Documents[0]
	if d.Chunks < 3 {
		t.Fatalf("want a document of several chunks, got %d", d.Chunks)
	}
	for _, ref := range []string{d.ID, url.PathEscape(d.Path)} {
		r := do(t, "GET", srv.URL+"/v1/documents/"+ref, "")
		got := decode[server.DocumentTextJSON](t, r.Body)
		if r.Status != http.StatusOK || len(got.Segments) != d.Chunks || got.Truncated {
			t.Fatalf("GET /v1/documents/%s: %d, %d segments of %d chunks, truncated %v", ref, r.Status, len(got.Segments), d.Chunks, got.Truncated)
		}
		var joined strings.Builder
		for i, s := range got.Segments {
			if s.Index != i {
				t.Errorf("segment %d is chunk %d", i, s.Index)
			}
			joined.WriteString(s.Text)
		}
		// The splitter trims the blanks at a chunk's ends; all else is kept.
		if a, b := strings.Fields(joined.String()), strings.Fields(text.String()); !slices.Equal(a, b) {
			t.Errorf("the segments are not the text: %d words, want %d", len(a), len(b))
		}
	}
	if r := do(t, "GET", srv.URL+"/v1/documents/missing", ""); r.Status != http.StatusNotFound {
		t.Errorf("missing document: %d", r.Status)
	}
}

// TestServeSubgraph: the graph around passages holds the entities they
// mention, named entities first, and only relations between its nodes.
func TestServeSubgraph(t *testing.T) {
	srv := startAPI(t, testEngine(t, corpusStore(t)), server.HandlerConfig{})
	res := decode[struct {
		Passages []struct {
			ChunkID string `json:"chunk_id"`
			DocPath string `json:"doc_path"`
		}
	}](t, do(t, "POST", srv.URL+"/v1/query", `{"question": "Who designed the Go programming language"}`).Body)
	goChunk := res.Passages[0].ChunkID
	if !strings.HasSuffix(res.Passages[0].DocPath, "go-language.md") {
		t.Fatalf("top passage %s", res.Passages[0].DocPath)
	}
	enigma := decode[struct{ Entities []server.EntityJSON }](t, do(t, "GET", srv.URL+"/v1/entities?name=Bletchley%20Park", "").Body).Entities[0]
	get := func(q string) server.SubgraphJSON {
		t.Helper()
		r := do(t, "GET", srv.URL+"/v1/subgraph?"+q, "")
		if r.Status != http.StatusOK {
			t.Fatalf("%s: %d %s", q, r.Status, r.Body)
		}
		return decode[server.SubgraphJSON](t, r.Body)
	}
	q := "chunk=" + url.QueryEscape(goChunk) + "&entity=" + enigma.ID
	g := get(q)
	if g.Nodes[0].ID != enigma.ID || !g.Nodes[0].Seed || len(g.Nodes[0].Chunks) != 0 {
		t.Errorf("the named entity is not first: %+v", g.Nodes[0])
	}
	in := map[string]bool{}
	var pike *server.SubgraphNode
	for i, n := range g.Nodes {
		in[n.ID] = true
		if n.Name == "Rob Pike" {
			pike = &g.Nodes[i]
		}
	}
	if pike == nil || !slices.Equal(pike.Chunks, []string{goChunk}) || pike.Seed {
		t.Errorf("Rob Pike: %+v", pike)
	}
	if len(g.Edges) == 0 {
		t.Error("no relations")
	}
	for _, e := range g.Edges {
		if !in[e.Source] || !in[e.Target] {
			t.Errorf("relation %s-%s leaves the graph", e.SourceName, e.TargetName)
		}
	}
	if small := get(q + "&limit=3"); len(small.Nodes) != 3 || !small.Truncated || small.Nodes[0].ID != enigma.ID {
		t.Errorf("limit 3: %d nodes, truncated %v", len(small.Nodes), small.Truncated)
	}
	for q, code := range map[string]string{"": server.CodeMissingParam, "chunk=x&limit=0": server.CodeOutOfRange, "chunk=x&limit=201": server.CodeOutOfRange,
		strings.Repeat("chunk=x&", 51): server.CodeOutOfRange} {
		r := do(t, "GET", srv.URL+"/v1/subgraph?"+q, "")
		if e := decode[server.APIError](t, r.Body); r.Status != http.StatusBadRequest || e.Code != code {
			t.Errorf("%.40s: %d %s", q, r.Status, r.Body)
		}
	}
	if g := get("chunk=no-such-chunk"); len(g.Nodes) != 0 || len(g.Edges) != 0 {
		t.Errorf("unknown chunk: %+v", g)
	}
}
