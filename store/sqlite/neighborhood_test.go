package sqlite

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"docgraph/store/storetest"
)

// TestNeighborPlansUseIndexes checks that the passage graph reads look
// everything up by index: the only scans are of the id list and of the
// statements' own small intermediate tables, never of entity_mentions or
// documents (aliases m and d), whose size grows with the corpus.
func TestNeighborPlansUseIndexes(t *testing.T) {
	s := openTemp(t, storetest.Options())
	defer s.Close()
	scan := regexp.MustCompile(`^SCAN (\w+)`)
	for name, stmt := range map[string]string{"entities": stmtEntityNeighbors, "chunks": stmtChunkNeighbors} {
		rows, err := s.rdb.QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+stmt, `[1]`, 41, 40)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		searches := 0
		for _, step := range plan {
			if m := scan.FindStringSubmatch(step); m != nil {
				switch m[1] {
				case "m", "d", "e", "k", "ch", "hm", "hc", "hd", "entity_mentions", "documents", "chunks", "entities", "entity_counts":
					t.Errorf("%s: plan scans a table: %q", name, step)
				}
			}
			if strings.HasPrefix(step, "SEARCH m USING INDEX entity_mentions_") || strings.HasPrefix(step, "SEARCH d USING INDEX sqlite_autoindex_documents_1") ||
				strings.HasPrefix(step, "SEARCH hm USING INDEX entity_mentions_") {
				searches++
			}
		}
		if searches < 3 {
			t.Errorf("%s: %d index searches of entity_mentions and documents; the plan is not what it was:\n%s", name, searches, strings.Join(plan, "\n"))
		}
	}
}
