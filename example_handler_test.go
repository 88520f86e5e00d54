package docgraph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	"github.com/docgraph/docgraph"
)

// Mount the HTTP API in a server of your own and query it over HTTP.
func ExampleGraph_Handler() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "docgraph-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	g, err := docgraph.Open(ctx, "sqlite://"+filepath.Join(dir, "graph.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer g.Close()
	if _, err := g.Ingest(ctx, "testdata/corpus"); err != nil {
		log.Fatal(err)
	}

	mux := http.NewServeMux()
	mux.Handle("/docgraph/", http.StripPrefix("/docgraph", g.Handler()))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	resp, err := http.Post(srv.URL+"/docgraph/v1/query", "application/json",
		strings.NewReader(`{"question": "Who designed the Go programming language?", "top_k": 3}`))
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Mode     string
		Passages []struct {
			DocPath string `json:"doc_path"`
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.Status, out.Mode)
	for _, p := range out.Passages {
		fmt.Println(filepath.Base(p.DocPath))
	}
	// Output:
	// 200 OK mix
	// go-language.md
	// ken-thompson.md
	// grace-hopper.md
}
