package main

import (
	"bufio"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestShowRebuildsTextFromChunks(t *testing.T) {
	work := t.TempDir()
	corpus(t, work, 2, 11)
	db := ingestClean(t, work)
	note := filepath.Join(work, "part1", "note01.md")
	raw, err := os.ReadFile(note)
	if err != nil {
		t.Fatal(err)
	}

	out, errOut, err := runCmd(t, "show", "--store", "sqlite://"+db, "--json", note)
	if err != nil {
		t.Fatalf("show --json: %v\n%s", err, errOut)
	}
	var doc shownDocument
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("show --json is not JSON: %v\n%s", err, out)
	}
	if doc.Path != note || doc.Status != "done" || doc.Format != "md" || len(doc.Chunks) < 2 {
		t.Fatalf("document: %+v", doc)
	}
	for _, c := range doc.Chunks {
		if c.End > len(doc.Text) || doc.Text[c.Start:c.End] != c.Text {
			t.Fatalf("chunk %d [%d,%d) is not where its offsets say in the rebuilt text", c.Index, c.Start, c.End)
		}
		if c.Tokens <= 0 {
			t.Errorf("chunk %d has no token count", c.Index)
		}
	}
	if got, want := strings.Fields(doc.Text), strings.Fields(string(raw)); !slices.Equal(got, want) {
		t.Errorf("rebuilt text differs from the file beyond whitespace:\n%q\nwant\n%q", doc.Text, raw)
	}

	// By document id, as text.
	text, _, err := runCmd(t, "show", "--store", "sqlite://"+db, "--text", doc.ID)
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(text) != strings.TrimSpace(doc.Text) {
		t.Errorf("show --text by id differs from --json text")
	}
	human, _, err := runCmd(t, "show", "--store", "sqlite://"+db, note)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"document:  " + note, "id:        " + doc.ID, "status:    done", "chunk  tokens  bytes", "--- text ---"} {
		if !strings.Contains(human, want) {
			t.Errorf("show output lacks %q:\n%s", want, human)
		}
	}

	_, errOut, err = runCmd(t, "show", "--store", "sqlite://"+db, filepath.Join(work, "nope.md"))
	if err == nil || !strings.Contains(errOut, "nothing stored for") {
		t.Errorf("show of an unknown path: %v %q", err, errOut)
	}
}

func TestExportJSONLAndGraphML(t *testing.T) {
	work := t.TempDir()
	corpus(t, work, 4, 5)
	db := ingestClean(t, work)
	statusOut, _, err := runCmd(t, "status", "--store", "sqlite://"+db, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var rep statusReport
	if err := json.Unmarshal([]byte(statusOut), &rep); err != nil {
		t.Fatal(err)
	}

	out, _, err := runCmd(t, "export", "--store", "sqlite://"+db)
	if err != nil {
		t.Fatalf("export: %v", err)
	}
	kinds := map[string]int{}
	entities := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var line map[string]any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("not a JSON line: %v: %s", err, sc.Text())
		}
		kind, _ := line["kind"].(string)
		kinds[kind]++
		switch kind {
		case "entity":
			entities[line["id"].(string)] = true
			if line["name"] == "" || line["description"] == nil {
				t.Errorf("entity line without name or description: %s", sc.Text())
			}
		case "relation":
			if !entities[line["source_id"].(string)] || !entities[line["target_id"].(string)] {
				t.Errorf("relation names an entity not exported before it: %s", sc.Text())
			}
		case "mention":
			if !entities[line["entity_id"].(string)] || !strings.HasPrefix(line["doc_path"].(string), work) {
				t.Errorf("mention line: %s", sc.Text())
			}
		default:
			t.Errorf("unknown kind in %s", sc.Text())
		}
	}
	if kinds["entity"] != rep.Entities || kinds["relation"] != rep.Relations || kinds["mention"] != rep.Mentions {
		t.Errorf("exported %v, store holds %d entities, %d relations, %d mentions", kinds, rep.Entities, rep.Relations, rep.Mentions)
	}
	again, _, _ := runCmd(t, "export", "--store", "sqlite://"+db)
	if again != out {
		t.Error("two exports of one store differ")
	}

	file := filepath.Join(t.TempDir(), "g.graphml")
	if _, errOut, err := runCmd(t, "export", "--store", "sqlite://"+db, "--format", "graphml", "-o", file); err != nil {
		t.Fatalf("export graphml: %v %s", err, errOut)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Keys []struct {
			ID string `xml:"id,attr"`
		} `xml:"key"`
		Graph struct {
			EdgeDefault string `xml:"edgedefault,attr"`
			Nodes       []struct {
				ID   string `xml:"id,attr"`
				Data []struct {
					Key   string `xml:"key,attr"`
					Value string `xml:",chardata"`
				} `xml:"data"`
			} `xml:"node"`
			Edges []struct {
				Source string `xml:"source,attr"`
				Target string `xml:"target,attr"`
			} `xml:"edge"`
		} `xml:"graph"`
	}
	if err := xml.Unmarshal(data, &g); err != nil {
		t.Fatalf("GraphML does not parse: %v", err)
	}
	nodes := map[string]bool{}
	chunkNodes := 0
	for _, n := range g.Graph.Nodes {
		nodes[n.ID] = true
		for _, d := range n.Data {
			if d.Key == "kind" && d.Value == "chunk" {
				chunkNodes++
			}
		}
	}
	if len(g.Graph.Nodes) != rep.Entities+chunkNodes || chunkNodes == 0 || chunkNodes > rep.Chunks {
		t.Errorf("GraphML has %d nodes (%d chunks) for %d entities", len(g.Graph.Nodes), chunkNodes, rep.Entities)
	}
	if len(g.Graph.Edges) != rep.Relations+rep.Mentions {
		t.Errorf("GraphML has %d edges, want %d relations + %d mentions", len(g.Graph.Edges), rep.Relations, rep.Mentions)
	}
	for _, e := range g.Graph.Edges {
		if !nodes[e.Source] || !nodes[e.Target] {
			t.Fatalf("edge %s -> %s names an undeclared node", e.Source, e.Target)
		}
	}
	if g.Graph.EdgeDefault != "undirected" {
		t.Errorf("extracted relations have no direction; edgedefault = %q", g.Graph.EdgeDefault)
	}

	_, errOut, err := runCmd(t, "export", "--store", "sqlite://"+db, "--format", "csv")
	if err == nil || !strings.Contains(errOut, `--format "csv"`) {
		t.Errorf("unknown format: %v %q", err, errOut)
	}
}

func TestWarningsAreStoredAndShown(t *testing.T) {
	work := t.TempDir()
	bad := filepath.Join(work, "latin1.txt")
	if err := os.WriteFile(bad, []byte("Caf\xe9 au lait in M\xfcnchen, said Ada Lovelace.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	db := ingestClean(t, work)

	out, _, err := runCmd(t, "status", "--store", "sqlite://"+db, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var rep statusReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Warned) != 1 || rep.Warned[0].Path != bad || len(rep.Warned[0].Warnings) == 0 ||
		!strings.Contains(rep.Warned[0].Warnings[0], "UTF-8") {
		t.Fatalf("status --json warned = %+v", rep.Warned)
	}
	text, _, _ := runCmd(t, "status", "--store", "sqlite://"+db)
	if !strings.Contains(text, "warnings (") || !strings.Contains(text, bad+": ") {
		t.Errorf("status does not show the warning:\n%s", text)
	}
	shown, _, err := runCmd(t, "show", "--store", "sqlite://"+db, bad)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(shown, "warnings:  1") || !strings.Contains(shown, rep.Warned[0].Warnings[0]) {
		t.Errorf("show does not list the warning:\n%s", shown)
	}
}

// TestShowAndExportErrorsOnce: a failing show or export says so once, on
// one line, with the control characters of what it names escaped (it
// printed its error itself and then the command line printed it again, the
// first copy raw: a newline in a path forged a line, an ESC drove the
// terminal).
func TestShowAndExportErrorsOnce(t *testing.T) {
	work := t.TempDir()
	corpus(t, work, 1, 3)
	db := ingestClean(t, work)
	hostile := "x\x1b[2J\nforged line"
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"show", []string{"show", "--store", "sqlite://" + db, hostile}, `ingest show: nothing stored for x\x1b[2J\nforged line`},
		{"export -o", []string{"export", "--store", "sqlite://" + db, "-o", filepath.Join(work, hostile, "g.jsonl")},
			`ingest export: export to ` + work + `/x\x1b[2J\nforged line/g.jsonl`},
	} {
		_, errOut, err := runCmd(t, c.args...)
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		if strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, c.want) || strings.ContainsAny(errOut, "\x1b") {
			t.Errorf("%s: stderr %q, want one line starting %q", c.name, errOut, c.want)
		}
	}
}
