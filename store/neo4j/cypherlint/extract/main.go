// Command extract prints every Cypher statement of the Neo4j store as JSON
// lines ({"name","file","line","cypher"}) for lint.mjs, which checks them
// with Neo4j's own parser; no server is needed.
//
// It reads test files too: the test-only statements (wipes, index drops,
// database administration) run only against a live server, which CI never
// has, so this is the only CI check they get.
//
// A statement is found by type, not by name: the package is type-checked
// (imports are not resolved, so only what depends on them is lost) and a
// string constant counts as Cypher when it is of the statement type, is used
// where a statement is wanted, or starts with a Cypher clause keyword and is
// not a fragment (a constant only ever concatenated into others). Constant
// expressions of the statement type that are not named constants (elements
// of schemaStatements, literals passed to exec) count too.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/build"
	"go/constant"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// record is one statement, as lint.mjs reads it.
type record struct {
	Name   string `json:"name"`
	File   string `json:"file"`
	Line   int    `json:"line"`
	Cypher string `json:"cypher"`
}

// clauseKeywords start a Cypher statement; a constant holding plain data
// (an index name, a property key) never starts with one followed by space.
var clauseKeywords = []string{
	"ALTER", "CALL", "CREATE", "CYPHER", "DELETE", "DETACH", "DROP", "EXPLAIN", "FOREACH",
	"LOAD", "MATCH", "MERGE", "OPTIONAL", "PROFILE", "REMOVE", "RETURN", "SET", "SHOW",
	"START", "STOP", "TERMINATE", "UNWIND", "USE", "WITH",
}

// defaultMinimum is well below the store's count, so it only trips when
// statements vanish wholesale, not when a few are removed.
const defaultMinimum = 30

func main() {
	dir := flag.String("dir", "", "package directory (default: store/neo4j under the module root)")
	typeName := flag.String("type", "statement", "the package's Cypher statement type")
	minimum := flag.Int("min", defaultMinimum, "fail when fewer statements are found: a refactor must not hide them from the lint")
	flag.Parse()
	if err := run(os.Stdout, os.Stderr, *dir, *typeName, *minimum); err != nil {
		fmt.Fprintln(os.Stderr, "extract:", err)
		os.Exit(1)
	}
}

func run(stdout, stderr io.Writer, dir, typeName string, minimum int) error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	if dir == "" {
		dir = filepath.Join(root, "store", "neo4j")
	}
	recs, err := extract(dir, typeName)
	if err != nil {
		return err
	}
	tests := 0
	for i := range recs {
		if rel, err := filepath.Rel(root, recs[i].File); err == nil {
			recs[i].File = filepath.ToSlash(rel)
		}
		if strings.HasSuffix(recs[i].File, "_test.go") {
			tests++
		}
	}
	shown := dir
	if rel, err := filepath.Rel(root, dir); err == nil {
		shown = filepath.ToSlash(rel)
	}
	fmt.Fprintf(stderr, "extract: %d Cypher statements in %s (%d of them in test files)\n", len(recs), shown, tests)
	// Checked before printing: lint.mjs fails on empty input, which is all
	// it gets from a failed extraction even in a pipe without pipefail.
	if len(recs) < minimum {
		return fmt.Errorf("found %d statements, expected at least %d: has the store stopped declaring its Cypher as constants?", len(recs), minimum)
	}
	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false)
	for _, r := range recs {
		if err := enc.Encode(r); err != nil {
			return fmt.Errorf("write: %w", err)
		}
	}
	return nil
}

// moduleRoot finds the directory of go.mod above the working directory, so
// the command works from anywhere in the repository.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("module root: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// extract type-checks the package with its internal tests, and its external
// test package separately, and returns their statements in file order.
func extract(dir, typeName string) ([]record, error) {
	// go/build applies build constraints, so files the compiler skips are
	// skipped here too.
	bp, err := build.ImportDir(dir, 0)
	if err != nil {
		return nil, fmt.Errorf("read package %s: %w", dir, err)
	}
	fset := token.NewFileSet()
	var recs []record
	found := false
	for _, names := range [][]string{append(slices.Clone(bp.GoFiles), bp.TestGoFiles...), bp.XTestGoFiles} {
		if len(names) == 0 {
			continue
		}
		r, ok, err := extractPackage(fset, dir, names, typeName)
		if err != nil {
			return nil, err
		}
		recs = append(recs, r...)
		found = found || ok
	}
	if !found {
		return nil, fmt.Errorf("package %s declares no type %s: update -type so statements are still found by type", dir, typeName)
	}
	slices.SortFunc(recs, func(a, b record) int {
		if c := strings.Compare(a.File, b.File); c != 0 {
			return c
		}
		return a.Line - b.Line
	})
	return recs, nil
}

// noImports makes every import fail: resolving them would need the module
// cache and a type-check of the driver, and no statement depends on them.
type noImports struct{}

func (noImports) Import(path string) (*types.Package, error) {
	return nil, fmt.Errorf("%s not loaded", path)
}

// extractPackage returns the statements of one package and whether it
// declares the statement type.
func extractPackage(fset *token.FileSet, dir string, names []string, typeName string) ([]record, bool, error) {
	var files []*ast.File
	for _, name := range names {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, false, fmt.Errorf("parse: %w", err)
		}
		files = append(files, f)
	}
	info := &types.Info{
		Types: map[ast.Expr]types.TypeAndValue{},
		Defs:  map[*ast.Ident]types.Object{},
		Uses:  map[*ast.Ident]types.Object{},
	}
	// Errors are expected (every use of an import is one) and ignored: the
	// compiler, not this tool, checks the package.
	conf := types.Config{Importer: noImports{}, Error: func(error) {}}
	pkg, _ := conf.Check(files[0].Name.Name, fset, files, info)

	var stmtType types.Type
	if tn, ok := pkg.Scope().Lookup(typeName).(*types.TypeName); ok {
		stmtType = tn.Type()
	}
	isStatement := func(t types.Type) bool { return stmtType != nil && t != nil && types.Identical(t, stmtType) }

	// Operands of a concatenation take its type, so they say nothing about
	// whether they are whole statements themselves; a constant used only as
	// one is a fragment.
	operands := map[ast.Expr]bool{}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			if x, ok := n.(*ast.BinaryExpr); ok {
				operands[ast.Unparen(x.X)] = true
				operands[ast.Unparen(x.Y)] = true
			}
			return true
		})
	}
	type usage struct{ asStatement, whole bool }
	uses := map[*types.Const]*usage{}
	for id, obj := range info.Uses {
		c, ok := obj.(*types.Const)
		if !ok {
			continue
		}
		u := uses[c]
		if u == nil {
			u = &usage{}
			uses[c] = u
		}
		if !operands[id] {
			u.whole = true
			u.asStatement = u.asStatement || isStatement(info.Types[id].Type)
		}
	}

	var recs []record
	for id, obj := range info.Defs {
		c, ok := obj.(*types.Const)
		if !ok || c.Val().Kind() != constant.String {
			continue
		}
		text := constant.StringVal(c.Val())
		u := uses[c]
		if u == nil {
			u = &usage{whole: true} // unused: nothing says it is a fragment
		}
		if isStatement(c.Type()) || u.asStatement || (startsWithClause(text) && u.whole) {
			pos := fset.Position(id.Pos())
			recs = append(recs, record{Name: id.Name, File: pos.Filename, Line: pos.Line, Cypher: text})
		}
	}

	// Unnamed constant statements: literals (or concatenations of them)
	// that become a statement where they stand.
	for _, f := range files {
		var stack []ast.Node
		ast.Inspect(f, func(n ast.Node) bool {
			if n == nil {
				stack = stack[:len(stack)-1]
				return true
			}
			stack = append(stack, n)
			if d, ok := n.(*ast.GenDecl); ok && d.Tok == token.CONST {
				stack = stack[:len(stack)-1]
				return false // named constants are found above
			}
			e, ok := n.(ast.Expr)
			if !ok {
				return true
			}
			switch e.(type) {
			case *ast.BasicLit, *ast.BinaryExpr, *ast.ParenExpr:
			default:
				return true
			}
			tv := info.Types[e]
			if tv.Value == nil || tv.Value.Kind() != constant.String || !isStatement(tv.Type) {
				return true
			}
			pos := fset.Position(e.Pos())
			recs = append(recs, record{Name: literalName(stack), File: pos.Filename, Line: pos.Line, Cypher: constant.StringVal(tv.Value)})
			stack = stack[:len(stack)-1]
			return false // its parts are not statements of their own
		})
	}
	return recs, stmtType != nil, nil
}

// literalName names an unnamed statement after where it stands: an element
// of a package-level list as list[i], anything else after its function.
func literalName(stack []ast.Node) string {
	lit := stack[len(stack)-1]
	name := ""
	for i := len(stack) - 2; i >= 0; i-- {
		switch p := stack[i].(type) {
		case *ast.CompositeLit:
			if name == "" {
				if j := slices.Index(p.Elts, lit.(ast.Expr)); j >= 0 {
					name = "[" + strconv.Itoa(j) + "]"
				}
			}
		case *ast.ValueSpec:
			if len(p.Names) > 0 {
				return p.Names[0].Name + name
			}
		case *ast.FuncDecl:
			return p.Name.Name + name + "@literal"
		}
	}
	return "literal" + name
}

// startsWithClause reports whether text starts with a clause keyword
// followed by more text.
func startsWithClause(text string) bool {
	words := strings.Fields(text)
	return len(words) > 1 && slices.Contains(clauseKeywords, strings.ToUpper(words[0]))
}
