// Command exportuse counts, for each package named on the command line, its
// exported top-level names and how many of them code outside the package
// uses (other packages, their tests, the workspace's other modules; the
// package's own tests, internal or external, do not count; a type they
// handle without naming it, as a used function's result or a used field's
// type, counts). With -v it lists the unused names, with -members the
// exported methods and fields no other package uses, and with -check it
// exits 1 when a listed package exports a name no other package uses.
//
// Run from the repository root (the workspace) (#25):
//
//	(cd .ci/exportuse && GOWORK=off go run . -dir ../.. -check rollback conflict)
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/types"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/tools/go/packages"
)

func main() {
	dir := flag.String("dir", ".", "repository root (holding go.work)")
	verbose := flag.Bool("v", false, "list the exported names no other package uses")
	members := flag.Bool("members", false, "also list exported methods and struct fields no other package uses")
	check := flag.Bool("check", false, "exit 1 when a package exports a top-level name no other package uses")
	flag.Parse()
	root, err := filepath.Abs(*dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	cfg := &packages.Config{
		Mode:  packages.NeedName | packages.NeedTypes | packages.NeedTypesInfo | packages.NeedSyntax | packages.NeedFiles,
		Dir:   root,
		Tests: true,
		// The tool runs outside the workspace (its own module); the
		// packages it reads are loaded in it.
		Env: append(os.Environ(), "GOWORK="+filepath.Join(root, "go.work")),
	}
	pkgs, err := packages.Load(cfg, "./...", "./temporal/...", "./examples/host/...")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if packages.PrintErrors(pkgs) > 0 {
		os.Exit(2)
	}
	const module = "github.com/refine-spec/refine/"
	failed := false
	for _, rel := range flag.Args() {
		path := module + rel
		var target *types.Package
		for _, p := range pkgs {
			if p.PkgPath == path && p.Types != nil && !strings.HasSuffix(p.ID, ".test]") {
				target = p.Types
			}
		}
		if target == nil {
			fmt.Fprintf(os.Stderr, "package %s not loaded\n", path)
			os.Exit(2)
		}
		used := map[string]bool{}
		usedMember := map[types.Object]bool{}
		for _, p := range pkgs {
			if p.PkgPath == path || p.PkgPath == path+"_test" {
				continue // the package itself and its own tests
			}
			for _, obj := range p.TypesInfo.Uses {
				if obj.Pkg() == nil || obj.Pkg().Path() != path {
					continue
				}
				if obj.Parent() == obj.Pkg().Scope() {
					used[obj.Name()] = true
				} else {
					usedMember[origin(obj)] = true
				}
				// A type other packages handle without naming it (what a
				// used function returns, a used field holds) is used too.
				if _, isType := obj.(*types.TypeName); !isType {
					markTypes(obj.Type(), path, used, map[types.Type]bool{})
				}
			}
		}
		var names, unused []string
		for _, n := range target.Scope().Names() {
			if ast.IsExported(n) {
				names = append(names, n)
				if !used[n] {
					unused = append(unused, n)
				}
			}
		}
		sort.Strings(unused)
		fmt.Printf("%s: %d exported top-level names, %d used outside it\n", rel, len(names), len(names)-len(unused))
		if *verbose {
			for _, n := range unused {
				fmt.Printf("  unused: %s\n", n)
			}
		}
		if *members {
			listMembers(target, usedMember)
		}
		failed = failed || len(unused) > 0
	}
	if *check && failed {
		os.Exit(1)
	}
}

// markTypes marks the named types of package path that t mentions: through
// pointers, slices, arrays, maps, channels, signatures and unnamed structs,
// not into a named type's own fields (those count when they are used).
func markTypes(t types.Type, path string, used map[string]bool, seen map[types.Type]bool) {
	if seen[t] {
		return
	}
	seen[t] = true
	switch t := t.(type) {
	case *types.Named:
		if o := t.Obj(); o.Pkg() != nil && o.Pkg().Path() == path {
			used[o.Name()] = true
		}
		if args := t.TypeArgs(); args != nil {
			for i := range args.Len() {
				markTypes(args.At(i), path, used, seen)
			}
		}
	case *types.Alias:
		markTypes(types.Unalias(t), path, used, seen)
	case *types.Pointer:
		markTypes(t.Elem(), path, used, seen)
	case *types.Slice:
		markTypes(t.Elem(), path, used, seen)
	case *types.Array:
		markTypes(t.Elem(), path, used, seen)
	case *types.Chan:
		markTypes(t.Elem(), path, used, seen)
	case *types.Map:
		markTypes(t.Key(), path, used, seen)
		markTypes(t.Elem(), path, used, seen)
	case *types.Signature:
		for _, tup := range []*types.Tuple{t.Params(), t.Results()} {
			for i := range tup.Len() {
				markTypes(tup.At(i).Type(), path, used, seen)
			}
		}
	case *types.Struct:
		for i := range t.NumFields() {
			markTypes(t.Field(i).Type(), path, used, seen)
		}
	}
}

// origin maps an instantiated method or field to its generic declaration.
func origin(obj types.Object) types.Object {
	switch o := obj.(type) {
	case *types.Func:
		return o.Origin()
	case *types.Var:
		return o.Origin()
	}
	return obj
}

// listMembers prints the exported methods and fields of the package's
// exported types that no other package uses.
func listMembers(pkg *types.Package, used map[types.Object]bool) {
	for _, n := range pkg.Scope().Names() {
		tn, ok := pkg.Scope().Lookup(n).(*types.TypeName)
		if !ok || !tn.Exported() {
			continue
		}
		named, ok := tn.Type().(*types.Named)
		if !ok {
			continue
		}
		for i := range named.NumMethods() {
			m := named.Method(i)
			if m.Exported() && !used[m] {
				fmt.Printf("  unused method: %s.%s\n", n, m.Name())
			}
		}
		if st, ok := named.Underlying().(*types.Struct); ok {
			for i := range st.NumFields() {
				f := st.Field(i)
				if f.Exported() && !used[f] {
					fmt.Printf("  unused field: %s.%s `%s`\n", n, f.Name(), st.Tag(i))
				}
			}
		}
	}
}
