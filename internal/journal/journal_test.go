package journal

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type doc struct {
	Round  int      `json:"round"`
	Log    []string `json:"log,omitempty"`
	Phase  string   `json:"phase,omitempty"`
	Nested struct {
		A []int `json:"a"`
	} `json:"nested"`
}

func TestDiffApply(t *testing.T) {
	old := doc{Round: 1, Log: []string{"a", "b,c"}, Phase: "engineer"}
	cur := old
	cur.Round = 2
	cur.Log = append([]string{}, "a", "b,c", "d")
	cur.Phase = ""
	cur.Nested.A = []int{1}
	of, _ := Split(old)
	cf, _ := Split(cur)
	r := Diff(of, cf)
	if got := string(r.Append["log"]); got != `["d"]` {
		t.Errorf("append log = %s, want [\"d\"]", got)
	}
	if _, ok := r.Set["log"]; ok {
		t.Error("a grown log was recorded whole")
	}
	if !cmp.Equal(r.Delete, []string{"phase"}) {
		t.Errorf("delete = %v", r.Delete)
	}
	b, _ := r.Marshal()
	r2, err := ParseRecord(b)
	if err != nil {
		t.Fatal(err)
	}
	f, _ := Parse(of.Join())
	if err := r2.Apply(f); err != nil {
		t.Fatal(err)
	}
	var back doc
	if err := json.Unmarshal(f.Join(), &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(cur, back); diff != "" {
		t.Errorf("rebuilt (-want +got):\n%s", diff)
	}
}

func TestAppendedRejectsCommaInsideString(t *testing.T) {
	// ["a,"] → ["a,","b"]: old minus its bracket is a prefix, but the cut
	// falls inside the string; the tail alone is not valid JSON.
	if _, ok := appended([]byte(`["x"]`), []byte(`["x","y"]`)); !ok {
		t.Error("plain append not detected")
	}
	if tail, ok := appended([]byte(`["a"]`), []byte(`["a","b"]`)); !ok || string(tail) != `["b"]` {
		t.Errorf("tail = %s %v", tail, ok)
	}
	if _, ok := appended([]byte(`"ab"`), []byte(`"abc"`)); ok {
		t.Error("a string was taken for an array")
	}
	if _, ok := appended([]byte(`[1]`), []byte(`[12]`)); ok {
		t.Error("a changed element was taken for an append")
	}
}

func TestApplyRejectsAppendToNonArray(t *testing.T) {
	f := Fields{"round": json.RawMessage(`3`)}
	r := Record{Seq: 7, Append: Fields{"round": json.RawMessage(`[1]`)}}
	if err := r.Apply(f); err == nil {
		t.Error("append to a number accepted")
	}
	if string(f["round"]) != "3" {
		t.Error("a failed Apply changed the fields")
	}
}

// FuzzDiffApply: for any two JSON objects, applying Diff(a, b) to a gives b.
func FuzzDiffApply(f *testing.F) {
	f.Add(`{"a":[1,2],"b":"x"}`, `{"a":[1,2,3],"c":null}`)
	f.Add(`{"log":["a,","b"]}`, `{"log":["a,","b","c"]}`)
	f.Add(`{}`, `{"x":{"y":[]}}`)
	f.Fuzz(func(t *testing.T, a, b string) {
		fa, err := Parse([]byte(a))
		if err != nil {
			return
		}
		fb, err := Parse([]byte(b))
		if err != nil {
			return
		}
		// Compact both so that fields compare as encoding/json writes them.
		compact := func(fs Fields) Fields {
			out := Fields{}
			for k, v := range fs {
				var x any
				if json.Unmarshal(v, &x) != nil {
					return nil
				}
				out[k], _ = json.Marshal(x)
			}
			return out
		}
		fa, fb = compact(fa), compact(fb)
		if fa == nil || fb == nil {
			return
		}
		r := Diff(fa, fb)
		enc, err := r.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		r, err = ParseRecord(enc)
		if err != nil {
			t.Fatal(err)
		}
		got := Fields{}
		for k, v := range fa {
			got[k] = v
		}
		if err := r.Apply(got); err != nil {
			t.Fatal(err)
		}
		var want, have any
		_ = json.Unmarshal(fb.Join(), &want)
		if err := json.Unmarshal(got.Join(), &have); err != nil {
			t.Fatalf("rebuilt object is not JSON: %v", err)
		}
		if !cmp.Equal(want, have) {
			t.Fatalf("Apply(Diff(a,b)) != b\na=%s\nb=%s\ngot=%s", a, b, got.Join())
		}
	})
}
