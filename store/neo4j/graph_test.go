package neo4j

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"docgraph/store"
	"docgraph/store/storetest"
)

func TestGraphScanner(t *testing.T) {
	ts := newTestServer(t)
	storetest.RunGraphScanner(t, func(t *testing.T) store.Store {
		st, err := ts.open(t, ts.database(t), storetest.Options())
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		return st
	})
}

// TestGraphStatementsCarryNoData holds graph.go's statements to the rules
// cypher.go's follow: schema labels and types only, no literals, no format
// verbs, lower-case parameters.
func TestGraphStatementsCarryNoData(t *testing.T) {
	for name, text := range map[string]string{
		"stmtScanMentionsPage": stmtScanMentionsPage,
		"stmtGraphVersion":     stmtGraphVersion,
	} {
		for _, m := range nodeLabel.FindAllStringSubmatch(text, -1) {
			if !slices.Contains(schemaLabels, m[1]) {
				t.Errorf("%s: label %q is not in schemaLabels", name, m[1])
			}
		}
		for _, m := range relType.FindAllStringSubmatch(text, -1) {
			if !slices.Contains(schemaRelTypes, m[1]) {
				t.Errorf("%s: relationship type %q is not in schemaRelTypes", name, m[1])
			}
		}
		if quoted.MatchString(text) || strings.Contains(text, "%") {
			t.Errorf("%s: holds a literal or a format verb", name)
		}
		for _, m := range parameters.FindAllStringSubmatch(text, -1) {
			if m[1] != strings.ToLower(m[1]) {
				t.Errorf("%s: parameter $%s is not lower-case", name, m[1])
			}
		}
	}
}

func TestPlainValueDropsEmbeddings(t *testing.T) {
	got := plainValue([]any{map[string]any{"name": "Rhine", "embedding": []any{0.1, 0.2}}, int64(3)})
	want := "[map[name:Rhine] 3]"
	if s := strings.Join(strings.Fields(strings.TrimSpace(fmtValue(got))), " "); s != want {
		t.Errorf("plainValue = %s, want %s", s, want)
	}
}

func fmtValue(v any) string { return fmt.Sprint(v) }
