package paths

import (
	"strings"
	"testing"
)

func TestParseSpec(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"", "se=ppr,pf=spf,pr=bm25"},
		{"se=ppr,pf=beam:bm25,pr=emb", "se=ppr,pf=beam:bm25,pr=emb"},
		{"pf=beam", "se=ppr,pf=beam:bm25,pr=bm25"},                                 // beam's default scorer, refined by it
		{"pf=beam:emb", "se=ppr,pf=beam:emb,pr=emb"},                               // pr follows the filter's scorer
		{"pf=beam:dynamic:llm:triple", "se=ppr,pf=beam:llm:dynamic:triple,pr=llm"}, // flags sorted, any order
		{" SE = ppr:exact , PR = random ", "se=ppr:exact,pf=spf,pr=random"},
		{"se=rwr,pf=cpf,pr=none", "se=rwr,pf=cpf,pr=none"},
		{"se=ppr:emb", "se=ppr:emb,pf=spf,pr=bm25"},
		{"pr=bm25:triple", "se=ppr,pf=spf,pr=bm25:triple"},
		{"lego:0", "se=ppr,pf=spf,pr=random"},
		{"lego:9", "se=ppr,pf=beam:bm25,pr=random"},
	}
	for _, tt := range tests {
		s, err := ParseSpec(tt.in)
		if err != nil {
			t.Errorf("ParseSpec(%q): %v", tt.in, err)
			continue
		}
		if s.String() != tt.want {
			t.Errorf("ParseSpec(%q) = %s, want %s", tt.in, s, tt.want)
		}
		// The canonical text reads back to itself.
		if again, err := ParseSpec(s.String()); err != nil || again.String() != s.String() {
			t.Errorf("round trip of %s: %s, %v", s, again, err)
		}
	}
}

func TestParseSpecErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"se=pagerank", "unknown subgraph extraction"},
		{"pf=dfs", "unknown path filter"},
		{"pr=rerank", "unknown path refinement"},
		{"xx=ppr", "unknown module"},
		{"se", "not module=method"},
		{"se=ppr,se=rwr", "given twice"},
		{"pf=spf:bm25", "only beam search takes a scorer"},
		{"pf=beam:bm25:emb", "two scorers"},
		{"pf=beam:wide", `unknown option "wide"`},
		{"se=ppr:exact:push", "exclude each other"},
		{"pr=random:triple", "takes no options"},
		{"pr=emb:fast", `unknown option "fast"`},
		{"lego:5", "no runnable LEGO-GraphRAG instance"},
		{"lego:x", "no runnable LEGO-GraphRAG instance"},
	}
	for _, tt := range tests {
		_, err := ParseSpec(tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseSpec(%q) error = %v, want one containing %q", tt.in, err, tt.want)
		}
	}
}

func TestInstancesParse(t *testing.T) {
	for n, text := range Instances {
		if _, err := ParseSpec(text); err != nil {
			t.Errorf("instance %d (%s): %v", n, text, err)
		}
	}
}
