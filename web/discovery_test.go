package web

import (
	"context"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/refinetest"
	"github.com/refine-spec/refine/store/memory"
)

// A session started without gaps waits at the discovery question (DESIGN
// §19): the console shows the discovered list with its options, and an
// answer given there confirms it and plays on to the demo's first
// question of round 1 and beyond.
func TestConsoleConfirmsDiscoveredGaps(t *testing.T) {
	ctx := context.Background()
	clock := refinetest.NewClock()
	b := memory.NewBackend(memory.WithClock(func() time.Time { return time.Date(2026, 1, 12, 14, 0, 0, 0, time.UTC) }))
	t.Cleanup(func() { b.Close() })
	id, st, err := b.Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := os.ReadFile("testdata/demo/spec.md")
	if err != nil {
		t.Fatal(err)
	}
	cfg := demoConfig(st, clock)
	cfg.Asker = refine.DeferAsker{}
	cfg.Spec = string(spec) // no gaps: discover them
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Run(ctx)
	if err != nil || len(out.Pending) != 1 || out.Pending[0].Kind != refine.KindDiscovery {
		t.Fatalf("run: %+v, %v; want a pause at the discovery question", out, err)
	}
	closeStore(st)
	f := serveFixture(t, b, clock, id)

	q := f.status().Pending[0]
	resp, page := f.get("/sessions/" + id)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("session page: %d", resp.StatusCode)
	}
	for _, want := range []string{q.Title, "GAP-API-001", "GAP-API-005", `value="accept"`, `value="edit"`, `value="drop"`, `value="rediscover"`, `value="pause"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the session page does not show %q", want)
		}
	}
	resp, body := f.do(http.MethodPost, "/api/sessions/"+id+"/answers", "application/json", answerBody(q.ID, "accept", ""))
	if resp.StatusCode/100 != 2 {
		t.Fatalf("answer accept: %d %s", resp.StatusCode, body)
	}
	f.wait()
	after := f.status()
	if len(after.Gaps) != 5 || after.Round < 1 {
		t.Fatalf("after accepting: round %d, %d gaps, pending %v; want round 1 on the demo's 5 gaps", after.Round, len(after.Gaps), after.Pending)
	}
	if !slices.ContainsFunc(after.Decisions, func(d refine.DecisionStatus) bool { return d.Option == "accept" }) {
		t.Errorf("the confirmation is not a decision: %+v", after.Decisions)
	}
	for _, p := range after.Pending {
		if p.Kind == refine.KindDiscovery {
			t.Errorf("the discovery question is still pending: %s", p.ID)
		}
	}
}
