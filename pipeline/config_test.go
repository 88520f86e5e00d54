package pipeline_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/docgraph/docgraph/pipeline"
)

// TestConfigValuesMustFitTheirKey: a mapping, a list or nothing where a
// key takes one value is an error naming the file and the key (token:
// {a: x} became the token "map[a:x]", token: [a, b] the token "b", an
// empty token: the token "<nil>" and token: 2024-01-01 the token
// "2024-01-01 00:00:00 +0000 UTC").
func TestConfigValuesMustFitTheirKey(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "docgraph.yaml")
	for _, c := range []struct {
		yaml    string
		want    string // in the error; "" for none
		token   string
		entitys []string
	}{
		{yaml: "token: {a: x}\n", want: "token: a mapping"},
		{yaml: "token:\n  a: x\n", want: "token: a mapping"},
		{yaml: "token: [a, b]\n", want: "token: a list"},
		{yaml: "token:\n", want: "token: no value"},
		{yaml: "token: 2024-01-01\n", want: "token: a YAML time.Time, where a single value is wanted (quote it"},
		{yaml: "token: \"2024-01-01\"\n", token: "2024-01-01"},
		{yaml: "chunk-tokens: {n: 100}\n", want: "chunk-tokens: a mapping"},
		{yaml: "entity-types: [person, {a: b}]\n", want: "entity-types: a mapping"},
		{yaml: "entity-types: [person, [place]]\n", want: "entity-types: a list"},
		{yaml: "token: abc\n", token: "abc"},
		{yaml: "token: 12345\n", token: "12345"},
		{yaml: "token: \"\"\n", token: ""},
		{yaml: "entity-types: [person, place]\n", entitys: []string{"person", "place"}},
		{yaml: "entity-types: person\n", entitys: []string{"person"}},
	} {
		write(t, cfg, c.yaml)
		var s pipeline.Settings
		var token string
		fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
		s.AddStoreFlags(fs)
		s.AddIngestFlags(fs)
		s.AddLLMFlags(fs)
		fs.StringVar(&token, "token", "", "")
		err := pipeline.ApplyConfig(fs, cfg, true)
		switch {
		case c.want != "":
			if err == nil || !strings.Contains(err.Error(), "config "+cfg+": "+c.want) {
				t.Errorf("%q: error %v, want one saying %q", c.yaml, err, "config "+cfg+": "+c.want)
			}
		case err != nil:
			t.Errorf("%q: %v", c.yaml, err)
		case token != c.token || c.entitys != nil && !slices.Equal(s.EntityTypes, c.entitys):
			t.Errorf("%q: token %q, entity types %q", c.yaml, token, s.EntityTypes)
		}
	}
}
