package statedoc

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine/conflict"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/core/state"
	"github.com/refine-spec/refine/question"
)

// decodeAny decodes a JSON document for a comparison that ignores member
// order.
func decodeAny(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%v in %s", err, b)
	}
	return v
}

// TestEncodeStateReusesFrozenHistory: the state document built from the
// history's reused bytes is the state's whole encoding at every step —
// entries added after a freeze, a state replaced, a log cut short — and a
// change to an entry frozen at a round end is reported, not lost.
func TestEncodeStateReusesFrozenHistory(t *testing.T) {
	issue := func(n int, summary string) conflict.Issue {
		return conflict.Issue{ID: "ISSUE-R1-00" + string(rune('0'+n)), Round: 1, Severity: gap.Low, Summary: summary}
	}
	st := &state.State{Schema: state.SchemaVersion, SessionID: "s1", Round: 1}
	c := HistoryCache{Check: true}
	check := func(step string) {
		t.Helper()
		v, err := EncodeState(st, &c)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		whole, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(decodeAny(t, whole), decodeAny(t, v.Bytes())); d != "" {
			t.Fatalf("%s: encoded state differs from its whole encoding (-whole +encoded):\n%s", step, d)
		}
	}
	check("empty history")
	st.Issues = append(st.Issues, issue(1, "first"))
	st.Rounds = append(st.Rounds, state.RoundRecord{N: 1, Engineer: "OK"})
	st.Asked = append(st.Asked, state.AnsweredQuestion{Question: question.Question{ID: "q1"}})
	check("round 1 in flight")
	st.Issues[0].Summary = "first, edited while its round is in flight"
	check("an entry of the round in flight changed")
	c.Freeze(st)
	if c.Frozen[0].N != 1 || c.Frozen[1].N != 1 || c.Frozen[3].N != 1 {
		t.Fatalf("frozen after round 1: %+v", c.Frozen)
	}
	st.Issues = append(st.Issues, issue(2, "second"))
	st.AttemptLog = append(st.AttemptLog, state.AttemptFact{Round: 2, Role: gap.Engineer, N: 1})
	check("entries added after the freeze")

	st.Issues = st.Issues[:0]
	check("a log cut short")

	replaced := *st
	replaced.Issues = []conflict.Issue{issue(3, "restored")}
	st = &replaced
	check("a state replaced (rollback)")

	st.Issues = append(st.Issues, issue(4, "fourth"))
	check("before the second freeze")
	c.Freeze(st)
	st.Issues[0].Summary = "changed after its round ended"
	_, err := EncodeState(st, &c)
	if err == nil || !strings.Contains(err.Error(), "an entry of an ended round was changed") {
		t.Fatalf("a frozen entry changed in place: err = %v, want it reported", err)
	}
}
