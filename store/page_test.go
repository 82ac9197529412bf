package store_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/refine-spec/refine/store"
)

func TestPageOfWalksEverySessionOnce(t *testing.T) {
	base := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	var all []store.SessionInfo
	for i := range 23 {
		// Pairs share a time: the ID breaks the tie.
		all = append(all, store.SessionInfo{ID: fmt.Sprintf("s-%02d", i), SessionSummary: store.SessionSummary{Updated: base.Add(time.Duration(i/2) * time.Minute)}})
	}
	var got []string
	after := ""
	for pages := 0; ; pages++ {
		if pages > 10 {
			t.Fatal("no last page")
		}
		p, err := store.PageOf(all, store.PageRequest{After: after, Limit: 5})
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range p.Sessions {
			got = append(got, in.ID)
		}
		if p.Next == "" {
			break
		}
		after = p.Next
	}
	// Newest first; within a minute, by ID.
	if diff := cmp.Diff([]string{"s-22", "s-20", "s-21", "s-18", "s-19", "s-16", "s-17", "s-14", "s-15", "s-12", "s-13", "s-10", "s-11", "s-08", "s-09", "s-06", "s-07", "s-04", "s-05", "s-02", "s-03", "s-00", "s-01"}, got); diff != "" {
		t.Errorf("walk (-want +got):\n%s", diff)
	}
	// Back from the last page to the first with Prev.
	var back []string
	before := ""
	p, _ := store.PageOf(all, store.PageRequest{After: after, Limit: 5})
	for _, in := range p.Sessions {
		back = append(back, in.ID)
	}
	before = p.Prev
	for before != "" {
		p, err := store.PageOf(all, store.PageRequest{Before: before, Limit: 5})
		if err != nil {
			t.Fatal(err)
		}
		ids := make([]string, 0, len(p.Sessions))
		for _, in := range p.Sessions {
			ids = append(ids, in.ID)
		}
		back = append(ids, back...)
		before = p.Prev
	}
	if diff := cmp.Diff(got, back); diff != "" {
		t.Errorf("walk back (-forward +back):\n%s", diff)
	}
	if _, err := store.PageOf(all, store.PageRequest{After: after, Before: after}); !errors.Is(err, store.ErrInvalidCursor) {
		t.Errorf("after and before: %v", err)
	}
	for _, bad := range []string{"x", "12", "12./etc", "-1x.a"} {
		if _, err := store.PageOf(all, store.PageRequest{After: bad, Limit: 5}); !errors.Is(err, store.ErrInvalidCursor) {
			t.Errorf("cursor %q: %v, want ErrInvalidCursor", bad, err)
		}
	}
	if p, _ := store.PageOf(nil, store.PageRequest{}); len(p.Sessions) != 0 || p.Next != "" {
		t.Errorf("empty listing: %+v", p)
	}
}
