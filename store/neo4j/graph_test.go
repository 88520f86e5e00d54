package neo4j

import (
	"fmt"
	"strings"
	"testing"

	"github.com/docgraph/docgraph/store"
	"github.com/docgraph/docgraph/store/storetest"
)

func TestGraphScanner(t *testing.T) {
	ts := newTestServer(t)
	storetest.RunGraphScanner(t, func(t *testing.T) store.Store { return ts.openFresh(t) })
}

func TestPassageGraph(t *testing.T) {
	ts := newTestServer(t)
	storetest.RunPassageGraph(t, func(t *testing.T) store.Store { return ts.openFresh(t) })
}

// TestGraphStatementsCarryNoData holds graph.go's statements to the rules
// cypher.go's follow, with no quoted literal at all.
func TestGraphStatementsCarryNoData(t *testing.T) {
	for name, text := range map[string]string{
		"stmtScanMentionsPage": stmtScanMentionsPage,
		"stmtGraphVersion":     stmtGraphVersion,
	} {
		checkCarriesNoData(t, name, text, nil)
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
