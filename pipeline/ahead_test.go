package pipeline

import (
	"testing"

	"github.com/docgraph/docgraph/embedstore"
	"github.com/docgraph/docgraph/ner"
)

// TestBuildsAheadOnlyWithOfflineModels: a run builds documents before
// claiming them only when both its extractor and its embedder are the
// offline ones; any other model (or a wrapper around one) is claimed
// first, since a build thrown away would cost its calls.
func TestBuildsAheadOnlyWithOfflineModels(t *testing.T) {
	type wrapped struct{ ner.Extractor }
	type wrappedEmb struct{ embedstore.Embedder }
	hash := embedstore.NewHash()
	for _, c := range []struct {
		name string
		ex   ner.Extractor
		emb  embedstore.Embedder
		want bool
	}{
		{"offline", ner.NewOffline(), hash, true},
		{"another extractor", wrapped{ner.NewOffline()}, hash, false},
		{"another embedder", ner.NewOffline(), wrappedEmb{hash}, false},
	} {
		p := &Pipeline{Extractor: c.ex, Embedder: c.emb}
		if got := p.buildsAhead(); got != c.want {
			t.Errorf("%s: builds ahead %v, want %v", c.name, got, c.want)
		}
	}
}
