// Command einopair runs issue #30's session as a refine session on the fs
// store and as an eino graph with a file+fsync checkpoint store,
// alternately, and prints each pair's overheads (wall time ÷ time in the
// role calls) and the median of fs overhead ÷ eino overhead (target ≤ 1).
//
//	go run ./bench/eino/cmd/einopair [-pairs 10] [-latency 20ms] [-dir DIR]
//
// (from the repository's root: the module is in its go.work; from
// bench/eino with GOWORK=off, it builds refine through its replace
// directive).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	einobench "github.com/refine-spec/refine/bench/eino"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "einopair:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, w io.Writer) error {
	fl := flag.NewFlagSet("einopair", flag.ContinueOnError)
	pairs := fl.Int("pairs", 10, "pairs of sessions to run")
	latency := fl.Duration("latency", 20*time.Millisecond, "each role call's latency")
	dir := fl.String("dir", "", "folder for the sessions' files (default: a new temporary folder, removed at the end); its file system decides what fsync costs")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if *pairs < 1 {
		return fmt.Errorf("-pairs %d: want at least 1", *pairs)
	}
	root := *dir
	if root != "" {
		if err := os.MkdirAll(root, 0o755); err != nil {
			return err
		}
	} else {
		d, err := os.MkdirTemp("", "einopair-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		root = d
	}
	refine := func() (einobench.Result, error) { return einobench.RunRefine(ctx, root, *latency) }
	eino := func() (einobench.Result, error) { return einobench.RunEino(ctx, root, *latency) }
	// One of each first, not counted: the first session of a process pays
	// for its warm-up.
	for _, f := range []func() (einobench.Result, error){refine, eino} {
		if _, err := f(); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "%d pairs, %v calls, files in %s\n", *pairs, *latency, root)
	fmt.Fprintln(w, "pair  first  fs-overhead  eino-overhead  fs÷eino  eino-checkpoints")
	var ratios, fsO, einoO []float64
	for i := range *pairs {
		// Alternate which runs first, so neither always follows the other.
		var r, e einobench.Result
		var err error
		first := "fs"
		if i%2 == 0 {
			if r, err = refine(); err == nil {
				e, err = eino()
			}
		} else {
			first = "eino"
			if e, err = eino(); err == nil {
				r, err = refine()
			}
		}
		if err != nil {
			return err
		}
		ratio := r.Overhead() / e.Overhead()
		ratios, fsO, einoO = append(ratios, ratio), append(fsO, r.Overhead()), append(einoO, e.Overhead())
		fmt.Fprintf(w, "%4d  %-5s  %11.3f  %13.3f  %7.3f  %d\n", i+1, first, r.Overhead(), e.Overhead(), ratio, e.Checkpoints)
	}
	fmt.Fprintf(w, "fs overhead   min–median–max %.3f–%.3f–%.3f\n", slices.Min(fsO), median(fsO), slices.Max(fsO))
	fmt.Fprintf(w, "eino overhead min–median–max %.3f–%.3f–%.3f\n", slices.Min(einoO), median(einoO), slices.Max(einoO))
	fmt.Fprintf(w, "fs÷eino       min–median–max %.3f–%.3f–%.3f (target: median ≤ 1.00)\n", slices.Min(ratios), median(ratios), slices.Max(ratios))
	return nil
}

// median of xs (the mean of the middle two when there is an even number).
func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
