package sessionid_test

import (
	"testing"
	"time"

	"github.com/refine-spec/refine/internal/sessionid"
	"github.com/refine-spec/refine/store"
)

func TestGenerator(t *testing.T) {
	now := time.Date(2025, 3, 1, 14, 15, 2, 0, time.FixedZone("CET", 3600))
	g := sessionid.Generator{Now: func() time.Time { return now }, Rand: sessionid.Sequence()}
	for _, want := range []string{"20250301-131502-000001", "20250301-131502-000002"} {
		got := g.New()
		if got != want {
			t.Errorf("New() = %q, want %q (UTC time, then the counter)", got, want)
		}
		if err := store.ValidSessionID(got); err != nil {
			t.Error(err)
		}
	}
	a, b := sessionid.Generator{}.New(), sessionid.Generator{}.New()
	if a == b || store.ValidSessionID(a) != nil {
		t.Errorf("default IDs %q and %q: want two distinct valid IDs", a, b)
	}
}
