package main

import (
	"context"
	"flag"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/refine-spec/refine/internal/termtext"
	"github.com/refine-spec/refine/store"
)

// cmdSessions lists the sessions of a store: refine sessions --store URL
// [--json].
func cmdSessions(ctx context.Context, c *cli, args []string) int {
	fl := flag.NewFlagSet("refine sessions", flag.ContinueOnError)
	fl.SetOutput(c.stderr)
	storeURL := storeFlag(fl, "", "the sessions (required)")
	asJSON := fl.Bool("json", false, `print [{"id","created_at","updated_at","round","outcome",…}]`)
	limit := fl.Int("limit", 0, "list one page of at most this many sessions (default: all); the command for the next page is printed on stderr")
	after := fl.String("after", "", "list the page after this cursor (printed with the previous page)")
	if err := fl.Parse(args); err != nil {
		return exitUsage
	}
	if *storeURL == "" || fl.NArg() > 0 {
		fmt.Fprintln(c.stderr, "refine sessions: --store URL is required, and nothing else")
		return exitUsage
	}
	u, err := parseStoreURL(*storeURL)
	if err != nil {
		fmt.Fprintf(c.stderr, "refine sessions: %v\n", err)
		return exitUsage
	}
	b, err := c.openExistingReader(ctx, u)
	if err != nil {
		fmt.Fprintf(c.stderr, "refine sessions: %v\n", safeErr(err))
		return exitUsage
	}
	defer b.Close()
	if *limit < 0 {
		fmt.Fprintln(c.stderr, "refine sessions: --limit must be positive")
		return exitUsage
	}
	var infos []store.SessionInfo
	next := *after
	for {
		page, err := store.ListSessions(ctx, b, store.PageRequest{After: next, Limit: *limit})
		if err != nil {
			fmt.Fprintf(c.stderr, "refine sessions: %v\n", safeErr(err))
			return exitUsage
		}
		infos = append(infos, page.Sessions...)
		next = page.Next
		if next == "" {
			break
		}
		if *limit > 0 {
			defer fmt.Fprintf(c.stderr, "More sessions: refine sessions --store %s --limit %d --after %s\n", shellQuote(u.Shown), *limit, shellQuote(next))
			break
		}
	}
	if *asJSON {
		if infos == nil {
			infos = []store.SessionInfo{} // [] rather than null
		}
		for i := range infos {
			if infos[i].OpenGaps == nil {
				infos[i].OpenGaps = map[string]int{} // {} as the web API gives
			}
		}
		if err := termtext.WriteJSON(c.stdout, infos); err != nil {
			fmt.Fprintf(c.stderr, "refine sessions: %v\n", err)
			return exitUsage
		}
		return exitOK
	}
	if len(infos) == 0 {
		fmt.Fprintf(c.stdout, "No sessions in %s; start one with: refine run --store %s …\n", u.Shown, shellQuote(u.Shown))
		return exitOK
	}
	tw := tabwriter.NewWriter(c.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tUPDATED\tROUND\tOUTCOME\tOPEN GAPS\tPENDING\tACTIVITY")
	for _, in := range infos {
		outcome := string(in.Outcome)
		if outcome == "" {
			outcome = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%d\t%s\n", safeLine(in.ID), in.Updated.Local().Format(time.DateTime), in.Round,
			safeLine(outcome), openGaps(in.OpenGaps), in.Pending, safeLine(in.Activity))
	}
	tw.Flush()
	return exitOK
}

// openGaps renders open gap counts as "HIGH 2, LOW 1", most severe first
// where the severity is known.
func openGaps(m map[string]int) string {
	if len(m) == 0 {
		return "-"
	}
	rank := map[string]int{"CRITICAL": 0, "HIGH": 1, "MEDIUM": 2, "LOW": 3}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		ri, iok := rank[keys[i]]
		rj, jok := rank[keys[j]]
		if iok != jok {
			return iok
		}
		if ri != rj {
			return ri < rj
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", safeLine(k), m[k])
	}
	return strings.Join(parts, ", ")
}
