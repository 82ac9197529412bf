package refine

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The decisions (the methods of engine) do no I/O of their own: they
// make no role call, ask no Asker, commit nothing but to the Ready's
// writes, never reach the Store, the Asker or the Roles through the
// Config, read no wall clock and start no goroutine. The drivers
// (drive.go, next.go) do all of that. Nor do they take or use a
// context: they read through the view the driver binds (reads) and open
// scopes in the driver's context (telemetry).
func TestDecisionsDoNoIO(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	methods := 0
	for _, name := range files {
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
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || fn.Body == nil || !isEngineReceiver(fn.Recv) {
				continue
			}
			methods++
			for _, p := range fn.Type.Params.List {
				if sel, ok := p.Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "Context" {
					t.Errorf("%s: engine.%s takes a context", fset.Position(p.Pos()), fn.Name.Name)
				}
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				if why := ioIn(n); why != "" {
					t.Errorf("%s: engine.%s %s", fset.Position(n.Pos()), fn.Name.Name, why)
				}
				return true
			})
		}
	}
	if methods < 50 {
		t.Fatalf("found %d engine methods: the check looks at the wrong files", methods)
	}
}

func isEngineReceiver(recv *ast.FieldList) bool {
	if len(recv.List) != 1 {
		return false
	}
	star, ok := recv.List[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	id, ok := star.X.(*ast.Ident)
	return ok && id.Name == "engine"
}

// ioIn says what I/O node n does, or "".
func ioIn(n ast.Node) string {
	switch n := n.(type) {
	case *ast.GoStmt:
		return "starts a goroutine"
	case *ast.CallExpr:
		sel, ok := n.Fun.(*ast.SelectorExpr)
		if !ok {
			return ""
		}
		switch sel.Sel.Name {
		case "Respond":
			return "calls a Role"
		case "Ask":
			return "asks an Asker"
		case "Sleep":
			return "sleeps"
		case "Commit":
			return "commits to a Store (the decisions keep their writes: out.keep)"
		case "Now":
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == "time" {
				return "reads the wall clock"
			}
		}
	case *ast.Ident:
		if n.Name == "ctx" {
			return "uses a context (ctx)"
		}
	case *ast.SelectorExpr:
		if x, ok := n.X.(*ast.Ident); ok && x.Name == "context" {
			return "uses package context"
		}
		if x, ok := n.X.(*ast.SelectorExpr); ok && x.Sel.Name == "cfg" {
			switch n.Sel.Name {
			case "Store", "Asker", "Engineer", "Reviewer":
				return "reaches cfg." + n.Sel.Name
			}
		}
	}
	return ""
}
