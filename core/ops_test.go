package core_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestIssue25_1_OperationsRunThroughTheWrapper checks the rule of issue
// 25.1 (docs/architecture.md, "The engine's operations"): no exported
// method of the Engine, nor of a session's Holder, takes the engine's
// lock, catches up, arms the panic guard, flushes or unlocks by itself;
// each hands its work to run or one of its variants (op.go), or, to read
// the engine as it stands, to locked. A method that did it by hand could
// forget a step on one of its paths and leave the lock held or a change
// unacknowledged.
func TestIssue25_1_OperationsRunThroughTheWrapper(t *testing.T) {
	// The steps the wrappers own, as called on the engine.
	steps := []string{"lock", "unlock", "guard", "release", "catchUp", "flush", "abandon", "mu.Lock", "mu.Unlock", "mu.TryLock"}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, path, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || !fn.Name.IsExported() || fn.Body == nil {
				continue
			}
			recv, engine := receiver(fn)
			if recv == "" {
				continue
			}
			checked++
			forbidden := make(map[string]bool, len(steps))
			for _, s := range steps {
				forbidden[engine+"."+s] = true
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				if name := dotted(call.Fun); forbidden[name] {
					t.Errorf("%s: (%s).%s calls %s itself: run it through run or one of its variants (op.go), or locked to read",
						fset.Position(call.Pos()), recv, fn.Name.Name, name)
				}
				return true
			})
		}
	}
	// The Engine has some seventy exported methods: a parse that found
	// few would check nothing.
	if checked < 60 {
		t.Fatalf("checked %d exported methods, want the Engine's and the Holder's (60 or more)", checked)
	}
}

// receiver returns the receiver type of method fn, if it is the Engine or
// a Holder, and the expression that names the engine in its body: the
// receiver itself for the Engine, its field e for a Holder.
func receiver(fn *ast.FuncDecl) (typ, engine string) {
	field := fn.Recv.List[0]
	if len(field.Names) == 0 {
		return "", ""
	}
	name := field.Names[0].Name
	t := field.Type
	if star, ok := t.(*ast.StarExpr); ok {
		t = star.X
	}
	id, ok := t.(*ast.Ident)
	if !ok {
		return "", ""
	}
	switch id.Name {
	case "Engine":
		return "*Engine", name
	case "Holder":
		return "Holder", name + ".e"
	}
	return "", ""
}

// dotted returns a selector chain such as e.mu.Lock as text, "" for
// anything else.
func dotted(x ast.Expr) string {
	var parts []string
	for {
		switch v := x.(type) {
		case *ast.SelectorExpr:
			parts = append(parts, v.Sel.Name)
			x = v.X
			continue
		case *ast.Ident:
			parts = append(parts, v.Name)
		default:
			return ""
		}
		break
	}
	slices.Reverse(parts)
	return strings.Join(parts, ".")
}
