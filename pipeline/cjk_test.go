package pipeline_test

import (
	"context"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/docgraph/docgraph/graphbuild"
	"github.com/docgraph/docgraph/pipeline"
	"github.com/docgraph/docgraph/store"
)

// riceText is a two-section Chinese Markdown file: a rice cultivar and its
// parent cultivar, a company and its founder, with a city and years.
const riceText = `# 五常大米

## 稻花香2号

稻花香2号是黑龙江省五常市选育的水稻品种，亲本为松粳9号。1996年，农民田永太在五常市的稻田里发现了稻花香2号的变异株。稻花香2号于2009年通过黑龙江省审定，米粒细长，香味浓郁。

## 五常米业公司

五常米业公司由田永太于2003年在五常市创立，田永太任董事长。五常米业公司收购农户种植的稻花香2号稻谷，加工后销往全国。
`

// TestChineseMarkdownGraph ingests riceText offline and checks that the
// cultivar, its parent, the company, its founder, the city and the years
// are entities, related as the sentences relate them.
func TestChineseMarkdownGraph(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "docs", "rice.md")
	write(t, path, riceText)
	p, st := newPipeline(t, filepath.Join(dir, "g.db"), pipeline.Settings{})
	sum, err := p.Ingest(ctx, []string{path}, pipeline.Options{})
	if err != nil || sum.Added != 1 {
		t.Fatalf("ingest: %+v, %v", sum, err)
	}
	kg := st.(store.KGScanner)
	names := map[string]store.Entity{}
	if err := kg.ScanEntities(ctx, func(e store.Entity) error { names[e.Name] = e; return nil }); err != nil {
		t.Fatal(err)
	}
	for name, typ := range map[string]string{
		"稻花香2号": "", "松粳9号": "", // the cultivar and its parent
		"五常米业公司": "organization", "田永太": "", // the company and its founder
		"五常市": "location", "1996年": "date", "2003年": "date", "2009年": "date",
	} {
		e, ok := names[name]
		if !ok {
			t.Errorf("entity %s missing; have %v", name, keysOf(names))
			continue
		}
		if typ != "" && e.Type != typ {
			t.Errorf("entity %s has type %q, want %q", name, e.Type, typ)
		}
	}
	rels := map[string]store.Relation{}
	if err := kg.ScanRelations(ctx, func(r store.Relation) error { rels[r.ID] = r; return nil }); err != nil {
		t.Fatal(err)
	}
	for _, pair := range [][2]string{
		{"稻花香2号", "松粳9号"}, {"五常米业公司", "田永太"}, {"田永太", "2003年"}, {"五常米业公司", "五常市"},
		{"稻花香2号", "1996年"}, {"稻花香2号", "2009年"}, {"稻花香2号", "五常市"},
	} {
		id := graphbuild.RelationID(graphbuild.EntityID(pair[0]), graphbuild.EntityID(pair[1]), "")
		if _, ok := rels[id]; !ok {
			t.Errorf("no relation between %s and %s", pair[0], pair[1])
		}
	}
	// What lies between two names describes their relation.
	r := rels[graphbuild.RelationID(graphbuild.EntityID("稻花香2号"), graphbuild.EntityID("松粳9号"), "")]
	if !strings.Contains(r.Keywords, "亲本") {
		t.Errorf("relation 稻花香2号 - 松粳9号 has keywords %q, want 亲本 among them", r.Keywords)
	}
	// Nothing is a fragment cut across a word boundary of the names above.
	for _, bad := range []string{"稻花香", "五常米业", "常市", "田永"} {
		if _, ok := names[bad]; ok {
			t.Errorf("fragment %s is an entity", bad)
		}
	}
}

func keysOf[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
