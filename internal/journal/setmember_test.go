package journal

import (
	"bytes"
	"slices"
	"testing"
)

// TestSetMember: a member replaced in place gives the version NewVersion
// makes of the document with that value, and diffs as that document does.
func TestSetMember(t *testing.T) {
	base := []byte(`{"a":1,"rate":{"records":null},"z":[1,2],"":"empty key"}`)
	cases := []struct {
		key, val, want string
		ok             bool
	}{
		{"rate", `{"records":[{"round":1}],"alerted":1}`, `{"a":1,"rate":{"records":[{"round":1}],"alerted":1},"z":[1,2],"":"empty key"}`, true},
		{"rate", `0`, `{"a":1,"rate":0,"z":[1,2],"":"empty key"}`, true},
		{"a", `"longer than it was"`, `{"a":"longer than it was","rate":{"records":null},"z":[1,2],"":"empty key"}`, true},
		{"", `null`, `{"a":1,"rate":{"records":null},"z":[1,2],"":null}`, true},
		{"missing", `1`, string(base), false},
	}
	for _, c := range cases {
		v, ok := NewVersion(bytes.Clone(base)).SetMember(c.key, []byte(c.val))
		if ok != c.ok || string(v.Bytes()) != c.want {
			t.Errorf("SetMember(%q, %s) = %s, %v; want %s, %v", c.key, c.val, v.Bytes(), ok, c.want, c.ok)
			continue
		}
		want := NewVersion([]byte(c.want))
		eq := func(a, b []byte) bool { return bytes.Equal(a, b) }
		if !slices.EqualFunc(v.keys, want.keys, eq) || !slices.EqualFunc(v.vals, want.vals, eq) {
			t.Errorf("SetMember(%q): members %q %q, want %q %q", c.key, v.keys, v.vals, want.keys, want.vals)
		}
		old := NewVersion([]byte(`{"a":2,"rate":{"records":[]},"z":[1],"":"x"}`))
		if got, want := DiffVersions(old, v), Diff(old.Bytes(), []byte(c.want)); !slices.EqualFunc(got, want, func(a, b Op) bool {
			return a.Op == b.Op && slices.Equal(a.Path, b.Path) && bytes.Equal(a.Value, b.Value)
		}) {
			t.Errorf("SetMember(%q): diff %v, want %v", c.key, got, want)
		}
	}
	if _, ok := NewVersion([]byte(`[1,2]`)).SetMember("a", []byte(`1`)); ok {
		t.Error("SetMember on an array: ok")
	}
	joined := NewVersion([]byte(`{"a":1}`)).AppendMembers([]string{"b"}, [][]byte{[]byte(`2`)}, nil)
	if _, ok := joined.SetMember("a", []byte(`3`)); ok {
		t.Error("SetMember on a joined version: ok")
	}
}
