package journal

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// splice gives what decoding, changing and encoding gives, or declines.
func TestSplice(t *testing.T) {
	doc := `{"a":1,"b":{"c":[1,{"d":"x"}],"e":"y"},"f":[]}`
	for _, tc := range []struct {
		name string
		path []string
		op   Op
		want string // "" : splice declines
	}{
		{"set a nested value", []string{"b", "c", "1", "d"}, Op{Op: "set", Value: json.RawMessage(`"z"`)}, `{"a":1,"b":{"c":[1,{"d":"z"}],"e":"y"},"f":[]}`},
		{"add a member", []string{"b", "n"}, Op{Op: "set", Value: json.RawMessage(`2`)}, `{"a":1,"b":{"c":[1,{"d":"x"}],"e":"y","n":2},"f":[]}`},
		{"delete the first member", []string{"a"}, Op{Op: "delete"}, `{"b":{"c":[1,{"d":"x"}],"e":"y"},"f":[]}`},
		{"delete a middle member", []string{"b"}, Op{Op: "delete"}, `{"a":1,"f":[]}`},
		{"delete the last member", []string{"b", "e"}, Op{Op: "delete"}, `{"a":1,"b":{"c":[1,{"d":"x"}]},"f":[]}`},
		{"delete the only member", []string{"b", "c", "1", "d"}, Op{Op: "delete"}, `{"a":1,"b":{"c":[1,{}],"e":"y"},"f":[]}`},
		{"append to an array", []string{"b", "c"}, Op{Op: "append", Value: json.RawMessage(`[3,4]`)}, `{"a":1,"b":{"c":[1,{"d":"x"},3,4],"e":"y"},"f":[]}`},
		{"append to an empty array", []string{"f"}, Op{Op: "append", Value: json.RawMessage(`["q"]`)}, `{"a":1,"b":{"c":[1,{"d":"x"}],"e":"y"},"f":["q"]}`},
		{"append an empty array written with a space", []string{"b", "c"}, Op{Op: "append", Value: json.RawMessage(`[ ]`)}, `{"a":1,"b":{"c":[1,{"d":"x"}],"e":"y"},"f":[]}`},
		{"index out of range", []string{"b", "c", "2"}, Op{Op: "set", Value: json.RawMessage(`1`)}, ""},
		{"a path through a missing member", []string{"x", "y"}, Op{Op: "set", Value: json.RawMessage(`1`)}, ""},
		{"delete an array element", []string{"b", "c", "0"}, Op{Op: "delete"}, ""},
		{"a key that needs escaping", []string{"b", "<"}, Op{Op: "set", Value: json.RawMessage(`1`)}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.op.Path = tc.path
			got, ok := splice([]byte(doc), tc.path, tc.op)
			if tc.want == "" {
				if ok {
					t.Fatalf("splice = %s, want it to decline", got)
				}
				return
			}
			if !ok {
				t.Fatal("splice declined")
			}
			if string(got) != tc.want {
				t.Errorf("splice =\n%s\nwant\n%s", got, tc.want)
			}
			ref, err := apply([]byte(doc), tc.path, tc.op)
			if err != nil {
				t.Fatal(err)
			}
			var a, b any
			_ = json.Unmarshal(got, &a)
			_ = json.Unmarshal(ref, &b)
			if diff := cmp.Diff(b, a); diff != "" {
				t.Errorf("splice and apply differ (-apply +splice):\n%s", diff)
			}
		})
	}
}
