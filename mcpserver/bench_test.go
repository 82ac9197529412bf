package mcpserver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/internal/gapsfile"
	"github.com/refine-spec/refine/llm/replay"
	"github.com/refine-spec/refine/store/memory"
)

// BenchmarkDemoSession runs the demo session (11 role calls, 6 questions)
// directly with a replay Role, and over MCP with every role call a
// sampling request and every question an elicitation, on both protocol
// paths; ns/call is the time per role call, and overhead_x the MCP run's
// time over the direct run's.
func BenchmarkDemoSession(b *testing.B) {
	ctx := context.Background()
	spec, err := os.ReadFile(filepath.Join(demoDir, "spec.md"))
	if err != nil {
		b.Fatal(err)
	}
	gapsText, _ := os.ReadFile(filepath.Join(demoDir, "gaps.md"))
	gaps, err := gapsfile.Parse("gaps.md", gapsText)
	if err != nil {
		b.Fatal(err)
	}
	direct := func() (int, error) {
		cfg := refine.DefaultConfig()
		cfg.Store = memory.New()
		r := replay.Dir(filepath.Join(demoDir, "replay"))
		cfg.Engineer, cfg.Reviewer = r, r
		cfg.Asker = refine.AskerFunc(func(ctx context.Context, q refine.Question) (refine.Answer, error) {
			if a, ok := demoAnswers[fmt.Sprintf("%s/%d", q.Kind, q.Round)]; ok {
				return a, nil
			}
			return refine.DefaultAsker{}.Ask(ctx, q)
		})
		cfg.Spec, cfg.Gaps, cfg.GapsPerRound = string(spec), gaps, 2
		s, err := refine.New(ctx, cfg)
		if err != nil {
			return 0, err
		}
		out, err := s.Run(ctx)
		if err == nil && out.Status != refine.StatusComplete {
			err = fmt.Errorf("outcome %s", out.Status)
		}
		st, _ := s.Status(ctx)
		return st.Calls, err
	}
	var base float64
	b.Run("direct", func(b *testing.B) {
		calls := 0
		for b.Loop() {
			n, err := direct()
			if err != nil {
				b.Fatal(err)
			}
			calls = n
		}
		base = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		b.ReportMetric(base/float64(calls), "ns/call")
	})
	for _, proto := range protocols {
		b.Run("mcp-"+proto, func(b *testing.B) {
			calls := 0
			for b.Loop() {
				b.StopTimer()
				s, err := New(Config{Backend: memory.NewBackend()})
				if err != nil {
					b.Fatal(err)
				}
				c := connect(b, s, clientOpts{protocol: proto, sampling: true, elicit: scripted})
				b.StartTimer()
				rep, _ := c.call(ctx, "refine_start", startArgs(b))
				for rep.Running {
					rep, _ = c.call(ctx, "refine_continue", map[string]any{"session_id": rep.SessionID})
				}
				for len(rep.Pending) > 0 {
					q := rep.Pending[0]
					rep, _ = c.call(ctx, "refine_answer", map[string]any{"session_id": rep.SessionID, "question_id": q.ID, "key": q.Default})
				}
				if rep.Outcome != string(refine.StatusComplete) {
					b.Fatalf("%+v", rep)
				}
				calls = c.samples
				b.StopTimer()
				c.cs.Close()
				s.Close()
				b.StartTimer()
			}
			ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			b.ReportMetric(ns/float64(calls), "ns/call")
			if base > 0 {
				b.ReportMetric(ns/base, "overhead_x")
			}
		})
	}
}
