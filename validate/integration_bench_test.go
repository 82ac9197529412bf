package validate

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/refine-spec/refine/gap"
)

// integrationFixture is a source spec of k sections, each with a gap
// described as not specified, the k resolutions, and a valid integration
// of them with its Resolution Log.
func integrationFixture(k int) (string, IntegrationInput) {
	var src, out, log strings.Builder
	src.WriteString("# Bench API — Draft\n\n")
	out.WriteString("# Bench API — v1.0\n\n")
	in := IntegrationInput{Decisions: []string{"DECISION-R2-001"}}
	for i := 1; i <= k; i++ {
		id := gap.ID(fmt.Sprintf("GAP-B%c-%03d", 'A'+i/1000, i%1000))
		fmt.Fprintf(&src, "## %d. Feature %d\n\nFeature %d serves merchants over HTTPS with JSON bodies. How it pages, fails and retries is not specified (%s).\n\n", i, i, i, id)
		res := fmt.Sprintf("Feature %d pages with `next_cursor_%d`, at most %d items per page; errors are Problem Details of type `feature-%d-invalid`, and a client retries after `Retry-After` seconds, at most %d times. The limit is enforced per API key.", i, i, 100+i, i, 3+i%5)
		in.Resolutions = append(in.Resolutions, Resolution{ID: id, Text: res})
		fmt.Fprintf(&out, "## %d. Feature %d\n\nFeature %d serves merchants over HTTPS with JSON bodies.\n\n%s\n\n", i, i, i, res)
		fmt.Fprintf(&log, "| %s | %d. Feature %d | merged |\n", id, i, i)
	}
	in.Source = src.String()
	out.WriteString("## Resolution Log\n\n| Item | Section(s) | Note |\n|---|---|---|\n" + log.String() + "| DECISION-R2-001 | — | process decision |\n| # Bench API — Draft | # Bench API — v1.0 | renamed |\n")
	return out.String(), in
}

func BenchmarkIntegration(b *testing.B) {
	for _, k := range []int{20, 400} {
		spec, in := integrationFixture(k)
		if r := Integration(spec, in); !r.Success || len(r.Warnings) > 0 {
			b.Fatalf("benchmark spec invalid: %s %q", r.Message, r.Warnings)
		}
		b.Run(fmt.Sprintf("%dgaps", k), func(b *testing.B) {
			b.SetBytes(int64(len(spec)))
			b.ReportAllocs()
			for b.Loop() {
				Integration(spec, in)
			}
		})
	}
}

// BenchmarkIntegrationScaling validates a 20-gap and a 400-gap integration
// in each iteration and reports the time ratio against the byte ratio:
// every check is linear in the spec, the source and the resolutions
// (headings, log rows, sentences and key terms are looked up in sets), so
// the ratios should be close.
func BenchmarkIntegrationScaling(b *testing.B) {
	small, inS := integrationFixture(20)
	large, inL := integrationFixture(400)
	var ts, tl time.Duration
	for b.Loop() {
		start := time.Now()
		Integration(small, inS)
		ts += time.Since(start)
		start = time.Now()
		Integration(large, inL)
		tl += time.Since(start)
	}
	b.ReportMetric(float64(tl)/float64(ts), "400/20-time")
	b.ReportMetric(float64(len(large)+len(inL.Source))/float64(len(small)+len(inS.Source)), "400/20-bytes")
	b.ReportMetric(float64(len(large))*float64(b.N)/tl.Seconds()/1e6, "MB/s")
}
