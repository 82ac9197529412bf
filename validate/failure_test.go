package validate

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// declaredFailureTypes parses the package's source and returns the names of
// every constant declared with type FailureType.
func declaredFailureTypes(t *testing.T) []string {
	t.Helper()
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range pkgs["validate"].Files {
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				if id, ok := vs.Type.(*ast.Ident); ok && id.Name == "FailureType" {
					for _, n := range vs.Names {
						names = append(names, n.Name)
					}
				}
			}
		}
	}
	slices.Sort(names)
	return names
}

// FailureTypes lists every FailureType constant the package declares, so a
// switch checked against it (retry's texts, exemplar's selection) cannot
// miss a type added later.
func TestFailureTypesListsEveryConstant(t *testing.T) {
	byValue := map[FailureType]string{
		MissingFile: "MissingFile", EmptyOutput: "EmptyOutput", WrongFormat: "WrongFormat",
		NoGapsAddressed: "NoGapsAddressed", InconsistentRefs: "InconsistentRefs",
		ThinContent: "ThinContent", IncompleteStructure: "IncompleteStructure",
		ExecutionError: "ExecutionError", MaxRetriesExhausted: "MaxRetriesExhausted",
		InvalidDisagreeRef: "InvalidDisagreeRef", MalformedDisagree: "MalformedDisagree",
		ReArguedConflict: "ReArguedConflict", IntegrationStructure: "IntegrationStructure",
		IntegrationMissing: "IntegrationMissing", IntegrationStale: "IntegrationStale",
		Truncated: "Truncated", Refusal: "Refusal", Clarification: "Clarification",
		AmbiguousStructure: "AmbiguousStructure",
		MalformedGap:       "MalformedGap", DuplicateGap: "DuplicateGap", UnlocatedGap: "UnlocatedGap",
	}
	var listed []string
	for _, ft := range FailureTypes() {
		name, ok := byValue[ft]
		if !ok {
			t.Errorf("FailureTypes lists %q, which this test does not know: add it to byValue", ft)
			continue
		}
		listed = append(listed, name)
		if !ft.Known() {
			t.Errorf("%s (%q) is listed but not Known", name, ft)
		}
	}
	slices.Sort(listed)
	if diff := cmp.Diff(declaredFailureTypes(t), listed); diff != "" {
		t.Errorf("FailureTypes misses or repeats a declared constant (-declared +listed):\n%s", diff)
	}
	for _, ft := range []FailureType{"", "SOMETHING_ELSE", "wrong_format"} {
		if ft.Known() {
			t.Errorf("%q.Known() = true, want false", ft)
		}
	}
}
