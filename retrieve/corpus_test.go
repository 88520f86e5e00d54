package retrieve_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/docgraph/docgraph/embedstore"
	"github.com/docgraph/docgraph/eval"
	"github.com/docgraph/docgraph/pipeline"
	"github.com/docgraph/docgraph/store"
	"github.com/docgraph/docgraph/store/sqlite"
)

// film is a small encyclopaedic corpus in the benchmarks' shape. The
// question "Where was the director of Won In The Clouds born?" needs two
// passages: the film's (which names its director) and the director's (which
// says where he was born, sharing only "born" with the question). The
// distractors share many more of the question's words.
var film = []eval.Passage{
	{ID: "film", Title: "Won In The Clouds", Text: "Won In The Clouds is a 1935 American adventure film directed by Harold Fairfax and starring Rex Lease."},
	{ID: "director", Title: "Harold Fairfax", Text: "Harold Fairfax was an English filmmaker. He was born in Melbourne and moved to Hollywood in 1921."},
	{ID: "d1", Title: "Clouds (film)", Text: "Clouds is a 2020 drama. The director of Clouds was born in Ohio, and the film won an award; the director won praise."},
	{ID: "d2", Title: "Director of the Clouds Observatory", Text: "The director of the clouds observatory was born in Zurich. Clouds were studied; the director won a prize."},
	{ID: "d3", Title: "Born in the Clouds", Text: "Born in the Clouds is a novel. Its director adaptation won; where the director was born is unknown."},
	{ID: "d4", Title: "The Director Who Won", Text: "The director who won the clouds contest was born where the clouds meet the sea."},
	{ID: "d5", Title: "Clouds Above", Text: "Clouds above the city: a director was born there, and the director won twice in the clouds."},
	{ID: "d6", Title: "Won Again", Text: "Won again: the director of the clouds series was born in Leeds and won in the clouds category."},
	{ID: "rex", Title: "Rex Lease", Text: "Rex Lease was an American actor who appeared in westerns and serials."},
	{ID: "mel", Title: "Melbourne", Text: "Melbourne is the capital of the Australian state of Victoria."},
}

const filmQuestion = "Where was the director of Won In The Clouds born?"

// ingest stores the passages with the real offline pipeline in a new SQLite
// store and returns it with the passage id of every document.
func ingest(t testing.TB, passages []eval.Passage) (*sqlite.Store, map[string]string) {
	t.Helper()
	ctx := context.Background()
	st, p := offlineStore(t)
	ds := &eval.Dataset{Name: "test", Dir: t.TempDir(), Passages: passages}
	if _, err := eval.Ingest(ctx, ds, p, st, 2, nil); err != nil {
		t.Fatal(err)
	}
	docs, _ := eval.Documents(ds)
	byDoc := map[string]string{}
	for i, d := range docs {
		byDoc[d.ID] = passages[i].ID
	}
	return st, byDoc
}

func rankOf(byDoc map[string]string, docIDs []string, passage string) int {
	for i, d := range docIDs {
		if byDoc[d] == passage {
			return i + 1
		}
	}
	return 0
}

func docsOf[T any](ps []T, id func(T) string) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = id(p)
	}
	return out
}

func describe(byDoc map[string]string, ids []string) string {
	var s []string
	for _, d := range ids {
		s = append(s, byDoc[d])
	}
	return fmt.Sprint(s)
}

// offlineStore opens a new SQLite store (closed when the test ends) and
// the offline pipeline that writes to it.
func offlineStore(t testing.TB) (*sqlite.Store, *pipeline.Pipeline) {
	t.Helper()
	emb := embedstore.NewHash()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "g.db"), store.Options{
		Embedder: store.EmbedderInfo{Name: emb.Name(), Dimension: emb.Dimension()},
		Merger:   pipeline.NewMerger(emb),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	p, err := pipeline.Offline(pipeline.Settings{}, emb, st)
	if err != nil {
		t.Fatal(err)
	}
	return st, p
}
