package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// twins plays the seed's clean twins and compares: the perturbed main
// branch must end as its clean twin (same driver, no perturbation) does
// — invariants 2 and 4 over the whole session — and Run and Next must
// leave byte-identical stores (invariant 6; its pair runs without role
// errors, which Next's caller handles itself, so the engine never sees
// them).
func (s *simulation) twins(ctx context.Context, main *branch) {
	clean := main
	if len(main.perturbed) > 0 {
		clean = s.cleanTwin(ctx, main)
	}
	s.sameReading(ctx, clean)
	if !s.opt.on(string(Drivers)) {
		return
	}
	quiet := s.quiet()
	byRun, err1 := s.play(ctx, "clean-run", DriverRun, Memory, false, quiet)
	byNext, err2 := s.play(ctx, "clean-next", DriverNext, Memory, false, quiet)
	if err1 != nil || err2 != nil {
		s.violate(main, Errors, "play the driver twins: %v %v", err1, err2)
		return
	}
	if byRun.cutShort || byNext.cutShort {
		return // one did not end within MaxStops: Run answers inside a run, so it gets further
	}
	if s.sc.Settings.ParallelGaps > 1 {
		// Run settles parallel calls in completion order (two Runs of
		// the seed differ): both drivers are played and checked, not
		// compared.
		return
	}
	if d := diffDumps(folder(byRun.final), folder(byNext.final), 10); len(d) > 0 {
		detail := ""
		for _, k := range d {
			if strings.HasPrefix(k, "~") {
				a, b := folder(byRun.final)[k[1:]], folder(byNext.final)[k[1:]]
				diff := lineDiff(a, b)
				if strings.HasSuffix(k, ".json") {
					diff = jsonDiff(a, b)
				}
				detail = fmt.Sprintf("\nfirst differing key %s (-Run +Next):\n%s", k[1:], diff)
				break
			}
		}
		s.violate(byNext, Drivers, "Run and Next/Deliver left different session folders: %v%s\nRun history:\n  %s", d, detail, strings.Join(shorten(byRun.hist), "\n  "))
	}
}

// cleanTwin plays main's clean twin (same driver, no perturbation) and
// compares how they ended.
func (s *simulation) cleanTwin(ctx context.Context, main *branch) *branch {
	twin, err := s.play(ctx, "twin-"+string(main.driver), main.driver, Memory, false, s.mix)
	if err != nil {
		s.violate(main, Errors, "play the clean twin: %v", err)
		return nil
	}
	if main.finalStatus != twin.finalStatus && !main.cutShort && !twin.cutShort {
		inv := CrashSafe
		if slices.Contains(main.perturbed, MoveExport) || slices.Contains(main.perturbed, MoveMove) {
			inv = RoundTrip
		}
		s.violate(main, inv, "the session (perturbed by %v) ended differently from its clean twin (-twin +main):\n%s\ntwin history:\n  %s",
			main.perturbed, lineDiff(twin.finalStatus, main.finalStatus), strings.Join(shorten(twin.hist), "\n  "))
	}
	return twin
}

// folder is a session's store without its journal (journal/ and
// snapshots/, which record how the state was reached, not what it is),
// with the state files' journal position left out.
func folder(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		if strings.HasPrefix(k, "journal/") || strings.HasPrefix(k, "snapshots/") {
			continue
		}
		if strings.HasPrefix(k, "state") && strings.HasSuffix(k, ".json") {
			v = withoutPosition(v)
		}
		out[k] = v
	}
	return out
}

// withoutPosition drops from a state file what depends on how many
// commits made it (its journal position, and the size and checksum that
// cover it).
func withoutPosition(v string) string {
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(v), &m) != nil {
		return v
	}
	delete(m, "journal_seq")
	delete(m, "size")
	delete(m, "checksum")
	b, _ := json.Marshal(m)
	return string(b)
}

// jsonDiff names the top-level fields of two JSON objects that differ,
// with both values shortened.
func jsonDiff(a, b string) string {
	var x, y map[string]json.RawMessage
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return lineDiff(a, b)
	}
	var out []string
	for k, v := range x {
		if w := y[k]; string(w) != string(v) {
			out = append(out, fmt.Sprintf("  %s: -%s\n     +%s", k, short(string(v)), short(string(w))))
		}
	}
	for k, w := range y {
		if _, ok := x[k]; !ok {
			out = append(out, fmt.Sprintf("  %s: -\n     +%s", k, short(string(w))))
		}
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}

func short(s string) string {
	if len(s) > 600 {
		return s[:600] + "…"
	}
	return s
}
