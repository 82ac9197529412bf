package summary

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine/store"
)

func TestInfo(t *testing.T) {
	created := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	updated := created.Add(time.Hour)
	rec := time.Date(2025, 2, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		raw  string // "-" for no record
		want store.SessionSummary
	}{
		{"no record", "-", store.SessionSummary{Created: created, Updated: updated}},
		{"record", `{"round":3,"outcome":"PAUSED","pending":1,"open_gaps":{"HIGH":2},"created_at":"2025-02-01T00:00:00Z","updated_at":"2025-02-01T00:00:00Z","activity":"waiting"}`,
			store.SessionSummary{Round: 3, Outcome: "PAUSED", Pending: 1, OpenGaps: map[string]int{"HIGH": 2}, Created: rec, Updated: rec, Activity: "waiting"}},
		{"record without times", `{"round":1}`, store.SessionSummary{Round: 1, Created: created, Updated: updated}},
	}
	for _, tc := range tests {
		var raw []byte
		if tc.raw != "-" {
			raw = []byte(tc.raw)
		}
		got := Info("s", raw, created, updated)
		if diff := cmp.Diff(store.SessionInfo{ID: "s", SessionSummary: tc.want}, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
	bad := Info("s", []byte("{not json"), created, updated)
	if bad.Updated != updated || !strings.Contains(bad.Activity, "session.json unreadable") {
		t.Errorf("damaged record: %+v, want the fallback times and an Activity saying so", bad)
	}
}

func TestSort(t *testing.T) {
	at := func(h int) time.Time { return time.Date(2025, 1, 1, h, 0, 0, 0, time.UTC) }
	infos := []store.SessionInfo{
		{ID: "b", SessionSummary: store.SessionSummary{Updated: at(1)}},
		{ID: "c", SessionSummary: store.SessionSummary{Updated: at(3)}},
		{ID: "a", SessionSummary: store.SessionSummary{Updated: at(1)}},
	}
	Sort(infos)
	var ids []string
	for _, in := range infos {
		ids = append(ids, in.ID)
	}
	if diff := cmp.Diff([]string{"c", "a", "b"}, ids); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}
