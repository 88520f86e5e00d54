package pipeline_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/docgraph/docgraph/graphbuild"
	"github.com/docgraph/docgraph/pipeline"
)

// TestIngestResolvesNames: a surname used alone and an acronym the text
// defines join their full names, the summary counts them, and deleting the
// document leaves the store as if it had never been there.
func TestIngestResolvesNames(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	unix := filepath.Join(dir, "docs", "unix.md")
	write(t, unix, "# Unix\n\nKen Thompson wrote Unix at Bell Labs. Later Thompson designed Go at Google.\n\n"+
		"International Business Machines (IBM) licensed it. IBM sold AIX.\n")
	write(t, filepath.Join(dir, "docs", "other.md"), "# Other\n\nThompson is a town in Manitoba.\n")
	p, st := newPipeline(t, filepath.Join(dir, "g.db"), pipeline.Settings{})
	sum, err := p.Ingest(ctx, []string{filepath.Join(dir, "docs")}, pipeline.Options{})
	if err != nil || sum.Added != 2 {
		t.Fatalf("ingest: %+v, %v", sum, err)
	}
	if sum.EntitiesMerged != 2 {
		t.Errorf("EntitiesMerged = %d, want 2 (Thompson, IBM)", sum.EntitiesMerged)
	}
	ents, err := st.Entities(ctx, []string{graphbuild.EntityID("Ken Thompson"), graphbuild.EntityID("Thompson"),
		graphbuild.EntityID("International Business Machines"), graphbuild.EntityID("IBM")})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]int{}
	for _, e := range ents {
		byName[e.Name] = e.Mentions
	}
	// Thompson of the other document, which names no full name, stays itself.
	if byName["Ken Thompson"] == 0 || byName["Thompson"] != 1 || byName["International Business Machines"] == 0 {
		t.Errorf("entities after resolution: %v", byName)
	}
	if _, ok := byName["IBM"]; ok {
		t.Errorf("IBM is still an entity of its own: %v", byName)
	}
	before, _ := st.Stats(ctx)
	doc, err := st.DocumentByPath(ctx, unix)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteDocument(ctx, doc.ID); err != nil {
		t.Fatal(err)
	}
	after, _ := st.Stats(ctx)
	ents, _ = st.Entities(ctx, []string{graphbuild.EntityID("Ken Thompson"), graphbuild.EntityID("Thompson")})
	if len(ents) != 1 || ents[0].Name != "Thompson" || ents[0].Mentions != 1 || after.Entities >= before.Entities {
		t.Errorf("after deleting unix.md: %+v (entities %d -> %d)", ents, before.Entities, after.Entities)
	}
}
