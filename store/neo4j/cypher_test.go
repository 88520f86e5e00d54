package neo4j

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/docgraph/docgraph/store"
)

// parsePackage parses the package's non-test sources.
func parsePackage(t *testing.T) (*token.FileSet, map[string]*ast.File) {
	t.Helper()
	fset := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]*ast.File{}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		files[name] = f
	}
	if len(files) < 3 {
		t.Fatalf("found only %d source files", len(files))
	}
	return fset, files
}

// enclosingFunc names the function declaration containing pos.
func enclosingFunc(f *ast.File, pos token.Pos) string {
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Pos() <= pos && pos < fd.End() {
			return fd.Name.Name
		}
	}
	return ""
}

// TestCypherOnlyFromConstants checks, on the source, that Cypher text can
// only come from constants: nothing converts a string value to a statement
// (the one way such a value could reach the driver), and only the two
// statement-typed helpers hand text to the driver.
func TestCypherOnlyFromConstants(t *testing.T) {
	fset, files := parsePackage(t)
	runs := 0
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			fn := enclosingFunc(f, call.Pos())
			switch fun := call.Fun.(type) {
			case *ast.Ident:
				if fun.Name == "statement" {
					t.Errorf("%s: conversion to statement in %s: Cypher must come from constants", fset.Position(call.Pos()), fn)
				}
			case *ast.SelectorExpr:
				if fun.Sel.Name == "Run" {
					runs++
					if !slices.Contains([]string{"collect", "exec", "Run"}, fn) {
						t.Errorf("%s: driver Run called from %s; use collect or exec, which take a statement", fset.Position(call.Pos()), fn)
					}
				}
			}
			return true
		})
	}
	if runs < 3 {
		t.Errorf("found %d Run calls; the scan is not seeing the code", runs)
	}
}

// cypherConstants evaluates every string constant (and the
// schemaStatements list) declared in cypher.go.
func cypherConstants(t *testing.T) map[string]string {
	t.Helper()
	_, files := parsePackage(t)
	f := files["cypher.go"]
	out := map[string]string{}
	var eval func(e ast.Expr) (string, bool)
	eval = func(e ast.Expr) (string, bool) {
		switch x := e.(type) {
		case *ast.BasicLit:
			if x.Kind != token.STRING {
				return "", false
			}
			s, err := strconv.Unquote(x.Value)
			return s, err == nil
		case *ast.BinaryExpr:
			a, ok1 := eval(x.X)
			b, ok2 := eval(x.Y)
			return a + b, ok1 && ok2 && x.Op == token.ADD
		case *ast.ParenExpr:
			return eval(x.X)
		case *ast.Ident: // a constant declared earlier in the file
			s, ok := out[x.Name]
			return s, ok
		}
		return "", false
	}
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok {
			continue
		}
		for _, spec := range gd.Specs {
			vs, ok := spec.(*ast.ValueSpec)
			if !ok {
				continue
			}
			for i, name := range vs.Names {
				if i >= len(vs.Values) {
					continue
				}
				if gd.Tok == token.CONST {
					if s, ok := eval(vs.Values[i]); ok {
						out[name.Name] = s
					}
					continue
				}
				if name.Name != "schemaStatements" {
					continue
				}
				lit := vs.Values[i].(*ast.CompositeLit)
				for j, el := range lit.Elts {
					s, ok := eval(el)
					if !ok {
						t.Fatalf("schemaStatements[%d] is not a constant string", j)
					}
					out["schemaStatements["+strconv.Itoa(j)+"]"] = s
				}
			}
		}
	}
	return out
}

var (
	nodeLabel  = regexp.MustCompile(`\(\s*\w*\s*:\s*(\w+)`)
	relType    = regexp.MustCompile(`\[\s*\w*\s*:\s*(\w+)`)
	quoted     = regexp.MustCompile(`'([^']*)'`)
	parameters = regexp.MustCompile(`\$(\w+)`)
)

// checkCarriesNoData holds one statement to the rules: labels and
// relationship types come from the fixed schema sets, the only quoted
// literals are the given keywords, nothing is a format string, and
// parameters are plain lower-case names.
func checkCarriesNoData(t *testing.T, name, text string, keywords []string) {
	t.Helper()
	for _, m := range nodeLabel.FindAllStringSubmatch(text, -1) {
		if !slices.Contains(schemaLabels, m[1]) {
			t.Errorf("%s: label %q is not in schemaLabels", name, m[1])
		}
	}
	for _, m := range relType.FindAllStringSubmatch(text, -1) {
		if !slices.Contains(schemaRelTypes, m[1]) {
			t.Errorf("%s: relationship type %q is not in schemaRelTypes", name, m[1])
		}
	}
	for _, m := range quoted.FindAllStringSubmatch(text, -1) {
		if !slices.Contains(keywords, m[1]) {
			t.Errorf("%s: quoted literal %q: data must be a parameter", name, m[1])
		}
	}
	if strings.Contains(text, "%") {
		t.Errorf("%s: holds a format verb", name)
	}
	for _, m := range parameters.FindAllStringSubmatch(text, -1) {
		if m[1] != strings.ToLower(m[1]) {
			t.Errorf("%s: parameter $%s is not a lower-case name", name, m[1])
		}
	}
}

// TestCypherStatementsCarryNoData holds every Cypher constant of cypher.go
// to checkCarriesNoData's rules, with the fixed keywords its DDL quotes and
// the property key the vector procedures take as a string.
func TestCypherStatementsCarryNoData(t *testing.T) {
	consts := cypherConstants(t)
	keywords := []string{"VECTOR", "FULLTEXT", "cosine", "cjk", "embedding"}
	statements := 0
	for name, text := range consts {
		if !strings.HasPrefix(name, "stmt") && !strings.HasPrefix(name, "schemaStatements") {
			continue
		}
		statements++
		checkCarriesNoData(t, name, text, keywords)
	}
	if statements < 40 {
		t.Errorf("scanned %d statements; the scan is not seeing cypher.go", statements)
	}
	for _, l := range schemaLabels {
		if !regexp.MustCompile(`^[A-Z][A-Za-z]+$`).MatchString(l) {
			t.Errorf("label %q is not a plain word", l)
		}
	}
}

// TestVectorIndexDDL checks that the vector index statements take the
// dimension (and, from 5.23, the HNSW settings) as parameters and agree
// with the index names queries use.
func TestVectorIndexDDL(t *testing.T) {
	for _, c := range []struct {
		stmt, name, pattern string
		hnsw                bool
	}{
		{stmtChunkVectorIndex, idxChunkVector, "(c:Chunk) ON (c.embedding)", false},
		{stmtEntityVectorIndex, idxEntityVector, "(e:Entity) ON (e.embedding)", false},
		{stmtRelatesVectorIndex, idxRelatesVector, "()-[r:RELATES]-() ON (r.embedding)", false},
		{stmtChunkVectorIndexHNSW, idxChunkVector, "(c:Chunk) ON (c.embedding)", true},
		{stmtEntityVectorIndexHNSW, idxEntityVector, "(e:Entity) ON (e.embedding)", true},
		{stmtRelatesVectorIndexHNSW, idxRelatesVector, "()-[r:RELATES]-() ON (r.embedding)", true},
	} {
		want := []string{
			"CREATE VECTOR INDEX " + c.name + " IF NOT EXISTS FOR " + c.pattern,
			"`vector.dimensions`: $dimension,",
			"`vector.similarity_function`: 'cosine'",
		}
		settings := []string{"`vector.hnsw.m`: $m", "`vector.hnsw.ef_construction`: $ef_construction", "`vector.quantization.enabled`: $quantization"}
		if c.hnsw {
			want = append(want, settings...)
		}
		for _, w := range want {
			if !strings.Contains(c.stmt, w) {
				t.Errorf("%s lacks %q", c.stmt, w)
			}
		}
		if !c.hnsw && strings.Contains(c.stmt, "hnsw") {
			t.Errorf("%s sets HNSW options that servers before 5.23 refuse", c.stmt)
		}
	}
	s := &Store{emb: store.EmbedderInfo{Name: "hash-v1", Dimension: 384}, hnswConfig: true}
	p := s.vectorIndexParams()
	if p["dimension"] != int64(384) || p["m"] != int64(16) || p["ef_construction"] != int64(50) || p["quantization"] != false {
		t.Errorf("vector index parameters = %v; want dimension 384, m 16, ef_construction 50, quantization false (the measured choice)", p)
	}
	s.hnswConfig = false
	if p := s.vectorIndexParams(); len(p) != 1 {
		t.Errorf("vector index parameters before 5.23 = %v; want the dimension only", p)
	}
}

func TestValidDimension(t *testing.T) {
	for dim, ok := range map[int]bool{-1: false, 0: false, 1: true, 16: true, 384: true, 1536: true, 3072: true, 4096: true, 4097: false, 1 << 20: false} {
		if err := validDimension(dim); (err == nil) != ok {
			t.Errorf("validDimension(%d) = %v, want ok=%v", dim, err, ok)
		}
	}
}

func TestSupportsHNSWConfig(t *testing.T) {
	for v, want := range map[string]bool{
		"5.18.0": false, "5.22.0": false, "5.23.0": true, "5.26.0": true, "5.26.12": true,
		"2025.01.0": true, "4.4.30": false, "": false, "dev": false,
	} {
		if got := supportsHNSWConfig(v); got != want {
			t.Errorf("supportsHNSWConfig(%q) = %v, want %v", v, got, want)
		}
	}
}

func TestSupportsRelationshipVectors(t *testing.T) {
	for v, want := range map[string]bool{
		"5.11.0": false, "5.13.0": false, "5.17.0": false, "5.18.0": true, "5.18.1-aura": true,
		"5.26.0": true, "5.26.12": true, "2025.01.0": true, "2025.06.2": true,
		"4.4.30": false, "": false, "dev": false, "6.0.0": true,
	} {
		if got := supportsRelationshipVectors(v); got != want {
			t.Errorf("supportsRelationshipVectors(%q) = %v, want %v", v, got, want)
		}
	}
}
