package docgraph_test

import (
	"os/exec"
	"strings"
	"testing"
)

// layer is how high a top-level folder sits in the dependency order of
// ARCHITECTURE.md: a package imports only from its own folder, its own
// layer or below. retrieve and pipeline share a layer but retrieve never
// imports pipeline, and nothing imports a command. server (the query
// service) sits below the root, which exposes it, so it never imports
// docgraph. server/web, the page of query serve, is a leaf: it
// imports nothing of this module (the page speaks to the API over HTTP).
var layer = map[string]int{
	"cmd":      0,
	"":         1, // the root package, the library
	"pipeline": 2, "retrieve": 2, "eval": 2, "server": 2,
	"ner": 3, "graphbuild": 3, "embedstore": 3, "llm": 3, "prompts": 3,
	"store": 4, "loader": 4, "splitter": 4,
	"cjk": 5, "internal": 5, // internal: text escaping the commands and the server share
}

const module = "github.com/docgraph/docgraph"

// top is the top-level folder of a package of this module, "" for the
// root, and ok false for anything outside it.
func top(path string) (string, bool) {
	if path == module {
		return "", true
	}
	rest, ok := strings.CutPrefix(path, module+"/")
	if !ok {
		return "", false
	}
	dir, _, _ := strings.Cut(rest, "/")
	return dir, true
}

func TestDependencyDirection(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to list the packages")
	}
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		from, _ := top(fields[0])
		lf, known := layer[from]
		if !known {
			t.Errorf("%s: top-level folder %q has no layer; add it to the map and to ARCHITECTURE.md", fields[0], from)
			continue
		}
		// Test-support packages (the store conformance suite, the fake
		// model server) build fixtures with whatever a test needs.
		if strings.HasSuffix(fields[0], "test") {
			continue
		}
		for _, imp := range fields[1:] {
			to, ours := top(imp)
			if ours && strings.HasPrefix(fields[0], module+"/server/web") {
				t.Errorf("%s imports %s: the web page's package imports nothing of docgraph", fields[0], imp)
			}
			if !ours || to == from {
				continue
			}
			checked++
			lt := layer[to]
			switch {
			case to == "cmd":
				t.Errorf("%s imports the command package %s", fields[0], imp)
			case from == "retrieve" && to == "pipeline":
				t.Errorf("%s imports %s: retrieve never imports pipeline (shared code goes below both)", fields[0], imp)
			case lt < lf:
				t.Errorf("%s imports %s, which sits above it", fields[0], imp)
			}
		}
	}
	if checked < 50 {
		t.Errorf("only %d imports checked: is the module path right?", checked)
	}
}
