package sim

import (
	"context"
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
	twin, err := s.play(ctx, "twin-"+string(main.driver), main.driver, Memory, false, s.mix)
	if err != nil {
		s.violate(main, Errors, "play the clean twin: %v", err)
		return
	}
	if len(main.perturbed) > 0 && main.finalStatus != twin.finalStatus {
		inv := CrashSafe
		if slices.Contains(main.perturbed, MoveExport) || slices.Contains(main.perturbed, MoveMove) {
			inv = RoundTrip
		}
		s.violate(main, inv, "the session (perturbed by %v) ended differently from its clean twin (-twin +main):\n%s\ntwin history:\n  %s",
			main.perturbed, lineDiff(twin.finalStatus, main.finalStatus), strings.Join(shorten(twin.hist), "\n  "))
	}
	if !s.opt.on(string(Drivers)) {
		return
	}
	quiet := s.mix
	quiet.Transient, quiet.Permanent = 0, 0
	byRun, err1 := s.play(ctx, "clean-run", DriverRun, Memory, false, quiet)
	byNext, err2 := s.play(ctx, "clean-next", DriverNext, Memory, false, quiet)
	if err1 != nil || err2 != nil {
		s.violate(main, Errors, "play the driver twins: %v %v", err1, err2)
		return
	}
	if d := diffDumps(byRun.final, byNext.final, 10); len(d) > 0 {
		detail := ""
		for _, k := range d {
			if strings.HasPrefix(k, "~") {
				detail = fmt.Sprintf("\nfirst differing key %s (-Run +Next):\n%s", k[1:], lineDiff(byRun.final[k[1:]], byNext.final[k[1:]]))
				break
			}
		}
		s.violate(byNext, Drivers, "Run and Next/Deliver left different stores: %v%s\nRun history:\n  %s", d, detail, strings.Join(shorten(byRun.hist), "\n  "))
	}
}
