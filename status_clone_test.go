package refine

import (
	"reflect"
	"slices"
	"testing"
	"time"
)

// Status.clone must copy every slice, map and pointer a Status reaches:
// the session hands the same published Status to every caller. This test
// fails when a field of a reference kind is added to Status (or to a type
// it holds) without clone copying it.
func TestStatusCloneCoversEveryReference(t *testing.T) {
	handled := []string{
		"Status.Gaps", "Status.Gaps[].History",
		"Status.Decisions", "Status.Convergence",
		"Status.Conflicts", "Status.Conflicts[].Heuristics", "Status.Conflicts[].Options", "Status.Conflicts[].Synthesis",
		"Status.Rollbacks", "Status.Rollbacks[].Patterns", "Status.Rollbacks[].Adjustments",
		"Status.Rollbacks[].Analysis", "Status.Rollbacks[].Split", "Status.Rollbacks[].Split.Children",
		"Status.Rollbacks[].Decisions",
		"Status.Pending", "Status.Pending[].Options", "Status.Pending[].TextRequired",
		"Status.Validation", "Status.Normalized", "Status.Responses", "Status.Repairs",
	}
	var found []string
	var walk func(path string, t reflect.Type)
	walk = func(path string, t reflect.Type) {
		switch t.Kind() {
		case reflect.Slice:
			found = append(found, path)
			walk(path+"[]", t.Elem())
		case reflect.Map:
			found = append(found, path)
		case reflect.Pointer:
			found = append(found, path)
			walk(path, t.Elem())
		case reflect.Struct:
			if t == reflect.TypeFor[time.Time]() {
				return
			}
			for f := range t.Fields() {
				if f.IsExported() {
					walk(path+"."+f.Name, f.Type)
				}
			}
		}
	}
	walk("Status", reflect.TypeFor[Status]())
	for _, p := range found {
		if !slices.Contains(handled, p) {
			t.Errorf("%s is a slice, map or pointer that Status.clone does not copy", p)
		}
	}
}
