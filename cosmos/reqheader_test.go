package cosmos_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestRequestHeadersAreReadByCanonicalName fails on a call in the
// package's code that reads a request header with gin's GetHeader or
// Header.Get, which put the name in canonical form at every call:
// requestHeader's of reads a name put in that form once.
func TestRequestHeadersAreReadByCanonicalName(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			onHeader := false
			if x, ok := sel.X.(*ast.SelectorExpr); ok && x.Sel.Name == "Header" {
				onHeader = true
			}
			if sel.Sel.Name == "GetHeader" || (sel.Sel.Name == "Get" && onHeader) {
				t.Errorf("%s: a request header read with %s; read it with a requestHeader's of (reqheader.go)", fset.Position(call.Pos()), sel.Sel.Name)
			}
			return true
		})
	}
	if checked < 10 {
		t.Fatalf("checked %d files; the test runs in the package's folder", checked)
	}
}
