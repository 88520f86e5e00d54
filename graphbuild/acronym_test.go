package graphbuild

import (
	"bufio"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// acronymDefinitionsWhole is acronymDefinitions as it was: the patterns
// run on the whole text. The windows must find exactly what it finds.
func acronymDefinitionsWhole(text string) [][2]string {
	if !strings.Contains(text, "(") {
		return nil
	}
	var out [][2]string
	for _, m := range longThenAcronym.FindAllStringSubmatch(text, -1) {
		if long, ok := initialsMatch(m[2], m[1]); ok {
			out = append(out, [2]string{m[2], long})
		}
	}
	for _, m := range acronymThenLong.FindAllStringSubmatch(text, -1) {
		if long, ok := initialsMatch(m[1], m[2]); ok && long == strings.Join(strings.Fields(m[2]), " ") {
			out = append(out, [2]string{m[1], long})
		}
	}
	return out
}

func sameDefinitions(t *testing.T, text string) {
	t.Helper()
	got, want := acronymDefinitions(text), acronymDefinitionsWhole(text)
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("definitions in %q:\n got %q\nwant %q", text, got, want)
	}
}

func TestAcronymWindowsMatchWholeText(t *testing.T) {
	for _, text := range []string{
		"International Business Machines (IBM) is a company.",
		"The NSF (National Science Foundation) funds research. BoA is Bank of America (BoA).",
		"(IBM (International Business Machines)",
		"Royal Air Force (RAF), United States Air Force (USAF); North Atlantic Treaty Organization (NATO).",
		"x9IBM (International Business Machines)", "_NSF (National Science Foundation)", "é NSF (National Science Foundation)",
		"United Nations(UN) and World Health Organization ( WHO ) and Bank of America (BoA;",
		"Alpha Beta (AB) (Gamma Delta) GD (Gamma Delta)", "A.B.C. (American Broadcasting Company)",
		"Mc Donald's Own Shop (MOS, a chain)", "Ève Über Ärger (EÜÄ)", "(", "((", "()", "(A", "A (", "AB (Alpha Beta",
		"Département of Transport\n\n(DOT)", "long\tform\fHere Now (HN)",
	} {
		sameDefinitions(t, text)
	}
	words := []string{
		"International", "Business", "Machines", "Alpha", "Beta", "Gamma", "of", "the", "and", "&", "de", "von",
		"IBM", "AB", "ABG", "BoA", "A.B.", "U.S.", "x", "9", "_", "é", "Über", "O'Neil", "Saint-Just", "’",
		"(", "(", ")", ")", ",", ";", ".", ":", " ", " ", " ", "\n", "\t", "  ",
	}
	r := rand.New(rand.NewPCG(21, 2))
	for range 50000 {
		var b strings.Builder
		for k := r.IntN(30); k > 0; k-- {
			b.WriteString(words[r.IntN(len(words))])
			if r.IntN(3) > 0 {
				b.WriteByte(' ')
			}
		}
		sameDefinitions(t, b.String())
	}
}

// TestAcronymWindowsMatchWholeTextOnCorpora compares the shared corpora's
// passages and books, when present.
func TestAcronymWindowsMatchWholeTextOnCorpora(t *testing.T) {
	if testing.Short() {
		t.Skip("reads the benchmark corpora")
	}
	data := filepath.Join("..", "..", "shared", "data")
	n := 0
	for _, set := range []string{"2wiki", "musique"} {
		f, err := os.Open(filepath.Join(data, set, "corpus.jsonl"))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			var p struct{ Title, Text string }
			if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
				t.Fatal(err)
			}
			sameDefinitions(t, p.Title+"\n"+p.Text)
			n++
		}
		f.Close()
	}
	books, _ := filepath.Glob(filepath.Join(data, "ultradomain_cs", "documents", "*.md"))
	for _, b := range books {
		data, err := os.ReadFile(b)
		if err != nil {
			t.Fatal(err)
		}
		sameDefinitions(t, string(data))
		n++
	}
	if n == 0 {
		t.Skip("shared data absent")
	}
}
