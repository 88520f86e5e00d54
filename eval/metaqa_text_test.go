package eval

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestMetaQAResultOutput(t *testing.T) {
	r := &MetaQAResult{Reports: []*MetaQAReport{}, Baseline: []string{"kept"}}
	var b strings.Builder
	if err := r.WriteText(&b, 50, 64); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), "MetaQA dev, first 50 questions per hop count, top-64 paths\n") || strings.Contains(b.String(), "baseline script") {
		t.Errorf("text (no PPR, so no baseline lines):\n%s", b.String())
	}
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil || len(m) != 3 || string(m["igraph_baseline"]) != `["kept"]` || string(m["ppr"]) != "null" {
		t.Errorf("JSON %s (%v): want metaqa, ppr and igraph_baseline", data, err)
	}
}
