// Package summary reads the session summary record (store.SummaryKey)
// for the Backends and orders session listings the same way in each.
package summary

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/refine-spec/refine/store"
)

// Info builds the listing entry for session id from its summary record b
// (nil when the session has none). created and updated are what the
// Backend knows without the record (a folder's or row's times); they fill
// in a missing record and zero times in a present one. A record that is
// not valid JSON is listed from the fallback, with Activity saying why,
// so one damaged session never hides the others.
func Info(id string, b []byte, created, updated time.Time) store.SessionInfo {
	info := store.SessionInfo{ID: id}
	if b != nil {
		if err := json.Unmarshal(b, &info.SessionSummary); err != nil {
			info.SessionSummary = store.SessionSummary{
				Activity: fmt.Sprintf("%s unreadable (%v); run refine status on the session", store.SummaryKey, err),
			}
		}
	}
	if info.Created.IsZero() {
		info.Created = created
	}
	if info.Updated.IsZero() {
		info.Updated = updated
	}
	return info
}

// Sort orders a listing newest activity first, then by ID, as
// store.Backend.Sessions promises.
func Sort(infos []store.SessionInfo) {
	slices.SortFunc(infos, func(a, b store.SessionInfo) int {
		if c := b.Updated.Compare(a.Updated); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
}
