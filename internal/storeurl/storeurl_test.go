package storeurl

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in                  string
		kind, target, shown string
		err                 string
	}{
		{in: "file:/srv/refine", kind: "file", target: "/srv/refine", shown: "file:/srv/refine"},
		{in: "file:///srv/refine", kind: "file", target: "/srv/refine", shown: "file:///srv/refine"},
		{in: "sessions", kind: "file", target: "sessions", shown: "sessions"},
		{in: "./a/b", kind: "file", target: "./a/b", shown: "./a/b"},
		{in: "sqlite:demo.db", kind: "sqlite", target: "demo.db", shown: "sqlite:demo.db"},
		{in: "sqlite:///var/lib/refine.db", kind: "sqlite", target: "/var/lib/refine.db", shown: "sqlite:///var/lib/refine.db"},
		{in: "postgres://u@db:5432/refine?sslmode=disable", kind: "postgres", target: "postgres://u@db:5432/refine?sslmode=disable", shown: "postgres://u@db:5432/refine?sslmode=disable"},
		{in: "postgresql://u:secret@db/refine", kind: "postgres", target: "postgresql://u:secret@db/refine", shown: "postgresql://u@db/refine"},
		// A '#' in the password makes the rest a fragment (hidden), or the
		// URL invalid (an error that does not quote the password).
		{in: "postgres://u@db/x#:p@", kind: "postgres", target: "postgres://u@db/x#:p@", shown: "postgres://u@"},
		{in: "postgres://u:se#cret@db/refine", err: "postgres://…@db/refine"},
		// A path repeating "user:password@" is not shown either (a fuzz finding).
		{in: "postgres://u:p@h/u:p@h/d/d", kind: "postgres", target: "postgres://u:p@h/u:p@h/d/d", shown: "postgres://u@h/d/d"},
		{in: "", err: "empty"},
		{in: "sqlite:", err: "no database file"},
		{in: "sqlite:a.db?mode=ro", err: "'?'"},
		{in: "file:", err: "no folder"},
		{in: "mysql://x", err: `unknown scheme "mysql"`},
		{in: "a\nb", err: "control characters"},
	}
	for _, tc := range tests {
		got, err := Parse(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Parse(%q) error = %v, want one containing %q", tc.in, err, tc.err)
			}
			if err != nil && strings.Contains(err.Error(), "cret") {
				t.Errorf("Parse(%q) error shows the password: %v", tc.in, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		if got.Kind != tc.kind || got.Target != tc.target || got.Shown != tc.shown {
			t.Errorf("Parse(%q) = %+v, want kind %q target %q shown %q", tc.in, got, tc.kind, tc.target, tc.shown)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"file:/x", "sqlite:a.db", "postgres://u:p@h/d", "plain/path", "x://y", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := Parse(s)
		if err != nil {
			return
		}
		if u.Target == "" || u.Shown == "" {
			t.Fatalf("Parse(%q) = %+v with an empty target", s, u)
		}
		if u.Kind == "postgres" && strings.Contains(u.Shown, ":p@") && strings.Contains(s, ":p@") {
			t.Fatalf("Parse(%q) shows the password: %q", s, u.Shown)
		}
	})
}
