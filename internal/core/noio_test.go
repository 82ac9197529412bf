package core

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The decisions do no I/O of their own: no function of this package
// makes a role call, asks an Asker, commits to a Store, sleeps, reads a
// clock (every input carries its time), reports to an Observer or a
// SpanObserver (their events go out in the Ready) or starts a goroutine,
// and the package imports neither context nor testing nor flag. The
// driver (the root package's drive.go and next.go) does all of that: the
// decisions read through the view it binds and keep their writes and
// events in the Ready.
func TestDecisionsDoNoIO(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	funcs := 0
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
		for _, imp := range f.Imports {
			switch path, _ := strconv.Unquote(imp.Path.Value); path {
			case "context", "testing", "flag":
				t.Errorf("%s: imports %s", fset.Position(imp.Pos()), path)
			}
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			funcs++
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				if why := ioIn(n); why != "" {
					t.Errorf("%s: %s %s", fset.Position(n.Pos()), fn.Name.Name, why)
				}
				return true
			})
		}
	}
	if funcs < 300 {
		t.Fatalf("found %d functions: the check looks at the wrong files", funcs)
	}
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
			return "commits to a Store (the decisions keep their writes: Out.Keep)"
		case "Now", "Since", "Until":
			return "reads a clock (" + sel.Sel.Name + "): use the input's time"
		case "Observe", "Begin", "End":
			// Observer.Observe(e), SpanObserver.Begin(ctx, e) and End(ctx, e);
			// convergence.Tracker.Observe takes three.
			if want := map[string]int{"Observe": 1, "Begin": 2, "End": 2}[sel.Sel.Name]; len(n.Args) == want {
				return "reports to an observer (" + sel.Sel.Name + "): emit an event into the Ready"
			}
		}
	case *ast.Ident:
		if n.Name == "ctx" {
			return "uses a context (ctx)"
		}
	}
	return ""
}
