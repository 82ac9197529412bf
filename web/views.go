package web

import (
	"context"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/statusjson"
	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/validate"
)

// severityOrder is how the list orders severity counts.
var severityOrder = []string{"CRITICAL", "HIGH", "MEDIUM", "LOW"}

// sessionRow is one line of the sessions list.
type sessionRow struct {
	ID       string
	Outcome  string
	Round    int
	Open     []sevCount
	Pending  int
	Activity string
	Updated  time.Time
	Running  bool
}

type sevCount struct {
	Severity string
	N        int
}

func sevCounts(m map[string]int) []sevCount {
	var out []sevCount
	for _, s := range severityOrder {
		if m[s] > 0 {
			out = append(out, sevCount{s, m[s]})
		}
	}
	var rest []string
	for s, n := range m {
		if n > 0 && !slices.Contains(severityOrder, s) {
			rest = append(rest, s)
		}
	}
	sort.Strings(rest)
	for _, s := range rest {
		out = append(out, sevCount{s, m[s]})
	}
	return out
}

// sessions lists one page of the backend's sessions (query parameters
// after, before and limit). A session whose summary record is missing
// (written by a refine that kept none) is listed as it is, never loaded
// whole for a list: its next writer writes the summary.
func (s *Server) sessions(r *http.Request) (store.SessionPage, error) {
	q := r.URL.Query()
	limit := 0
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 {
			return store.SessionPage{}, fmt.Errorf("%w: limit %q: want a positive number", store.ErrInvalidCursor, l)
		}
		limit = n
	}
	page, err := store.ListSessions(r.Context(), s.cfg.Backend, store.PageRequest{After: q.Get("after"), Before: q.Get("before"), Limit: limit})
	if err != nil {
		return page, err
	}
	for i, in := range page.Sessions {
		if in.Outcome == "" && in.Activity == "" {
			page.Sessions[i].Activity = "no summary yet (its next run writes one)"
		}
	}
	return page, nil
}

// inspect reads session id's status without taking its writer's lock, so
// a running session shows the state of its last durable point.
func (s *Server) inspect(ctx context.Context, id string) (refine.Status, error) {
	st, err := s.cfg.Backend.View(ctx, id)
	if err != nil {
		return refine.Status{}, err
	}
	defer closeStore(st)
	return refine.Inspect(ctx, st)
}

// sessionView is everything the session page shows.
type sessionView struct {
	Title   string
	ID      string
	Status  refine.Status
	Live    runnerView
	Token   string
	Open    []sevCount
	Gaps    []gapRow
	Rounds  []roundRow
	Pending []questionView
	Chart   bool
	Files   []string
	// Final: the session has a final spec (the source → final page).
	Final    bool
	CanDrive bool
	// CanResume: the console can run the session and it is neither
	// running nor finished nor waiting for an answer.
	CanResume bool
	// Poll: the page follows the session live. Every session that is not
	// finished may change (a run starting after an answer given here or
	// elsewhere, a resume), not only one running when the page was drawn.
	Poll    bool
	Targets []int
	Error   string
	// Resume is the command that answers a question outside the console
	// (Config.ResumeCommand), shown when the console cannot answer.
	Resume string
}

type gapRow struct {
	refine.GapStatus
	Open bool
}

type roundRow struct {
	N   int
	Net string
	End int
	Has bool
	// State is the convergence state after the round.
	State string
}

type questionView struct {
	refine.Question
	BodyHTML template.HTML
	Options  []optionView
	// Text says whether the form shows a text field.
	Text bool
}

type optionView struct {
	refine.Option
	NeedsText bool
}

// viewFiles are the session's renderings the page links to when present.
var viewFiles = []string{"final_spec.md", "final_summary.md", "status.md", "decisions.md", "source_spec.md"}

func (s *Server) sessionView(ctx context.Context, id string) (sessionView, error) {
	v := sessionView{ID: id, Title: "Session " + id, CanDrive: s.cfg.Configure != nil, Resume: "refine resume --store URL --session " + id}
	if s.cfg.ResumeCommand != nil {
		v.Resume = s.cfg.ResumeCommand(id)
	}
	store, err := s.cfg.Backend.View(ctx, id)
	if err != nil {
		return v, err
	}
	defer closeStore(store)
	st, err := refine.Inspect(ctx, store)
	if err != nil {
		return v, err
	}
	v.Status = st
	v.Live, _ = s.peek(id)
	v.Token = liveToken(st, v.Live)
	keys, err := store.List(ctx, "")
	if err != nil {
		return v, fmt.Errorf("list session %s: %w", id, err)
	}
	v.Chart = len(st.Convergence) > 0 // the chart is drawn from these rows
	v.Final = slices.Contains(keys, "final_spec.md")
	for _, f := range viewFiles {
		if slices.Contains(keys, f) {
			v.Files = append(v.Files, f)
		}
	}
	open := map[string]int{}
	for _, g := range st.Gaps {
		o := g.State.IsOpen()
		if o {
			open[g.Severity.String()]++
		}
		v.Gaps = append(v.Gaps, gapRow{GapStatus: g, Open: o})
	}
	v.Open = sevCounts(open)
	rows := map[int]roundRow{}
	for _, n := range roundsIn(keys) {
		rows[n] = roundRow{N: n, Has: true}
	}
	for _, c := range st.Convergence {
		r := rows[c.Round]
		r.N, r.End, r.State = c.Round, c.GapsEnd, string(c.State)
		r.Net = strconv.Itoa(c.WeightedNet)
		rows[c.Round] = r
	}
	for _, r := range rows {
		v.Rounds = append(v.Rounds, r)
	}
	sort.Slice(v.Rounds, func(i, j int) bool { return v.Rounds[i].N < v.Rounds[j].N })
	// Rounds before the current one: the last finished round too when a
	// round is under way.
	last := st.Round
	if st.Phase != "" && st.Phase != refine.PhaseDone {
		last++
	}
	for n := 0; n < last; n++ {
		v.Targets = append(v.Targets, n)
	}
	md := s.pages.md
	for _, q := range st.Pending {
		qv := questionView{Question: q, BodyHTML: md.Lines(q.Body), Text: q.AllowText || len(q.TextRequired) > 0}
		for _, o := range q.Options {
			qv.Options = append(qv.Options, optionView{Option: o, NeedsText: statusjson.TakesText(q, o.Key)})
		}
		v.Pending = append(v.Pending, qv)
	}
	v.CanResume = v.CanDrive && !v.Live.Running && len(st.Pending) == 0 && !st.Outcome.Terminal()
	v.Poll = v.Live.Running || !st.Outcome.Terminal()
	return v, nil
}

// liveToken changes whenever the page of a session would: the script
// reloads the page when the token it was served with goes stale.
func liveToken(st refine.Status, live runnerView) string {
	return fmt.Sprintf("%d.%s.%d.%t", st.UpdatedAt.UnixNano(), st.Outcome, len(st.Pending), live.Running)
}

// roundsIn returns the round numbers that have a round_NNN/ folder.
func roundsIn(keys []string) []int {
	seen := map[int]bool{}
	var out []int
	for _, k := range keys {
		dir, _, ok := strings.Cut(k, "/")
		if !ok {
			continue
		}
		n, ok := roundNumber(dir)
		if ok && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	sort.Ints(out)
	return out
}

// roundNumber parses "round_003".
func roundNumber(dir string) (int, bool) {
	digits, ok := strings.CutPrefix(dir, "round_")
	if !ok || len(digits) < 3 {
		return 0, false
	}
	n, err := strconv.Atoi(digits)
	if err != nil || n < 0 {
		return 0, false
	}
	return n, true
}

// roundView is everything the round page shows.
type roundView struct {
	Title    string
	ID       string
	N        int
	Prev     int
	Next     int
	Engineer template.HTML
	Reviewer template.HTML
	Summary  template.HTML
	HasEng   bool
	HasRev   bool
	HasSum   bool
	Attempts []attemptView
	Diffs    []gapDiff
	Rolled   []string
}

type attemptView struct {
	Name       string
	Role       string
	Part       string
	N          int
	Prompt     string
	Response   string
	Validation []refine.ValidationRecord
	Passed     bool
	Checked    bool
}

type gapDiff struct {
	Gap      string
	Since    int // the round the previous resolution is from; 0: none
	Lines    []diffLine
	Added    int
	Removed  int
	Unchange bool
}

var errNoRound = errors.New("no such round")

func (s *Server) roundView(ctx context.Context, id string, n int) (roundView, error) {
	v := roundView{ID: id, N: n, Title: fmt.Sprintf("Session %s, round %d", id, n)}
	store, err := s.cfg.Backend.View(ctx, id)
	if err != nil {
		return v, err
	}
	defer closeStore(store)
	st, err := refine.Inspect(ctx, store)
	if err != nil {
		return v, err
	}
	keys, err := store.List(ctx, "")
	if err != nil {
		return v, fmt.Errorf("list session %s: %w", id, err)
	}
	rounds := roundsIn(keys)
	at := slices.Index(rounds, n)
	if at < 0 {
		return v, errNoRound
	}
	if at > 0 {
		v.Prev = rounds[at-1]
	}
	if at+1 < len(rounds) {
		v.Next = rounds[at+1]
	}
	dir := fmt.Sprintf("round_%03d/", n)
	get := func(k string) (string, bool) {
		b, err := store.Get(ctx, k)
		if err != nil {
			return "", false
		}
		return string(b), true
	}
	md := s.pages.md
	var eng string
	if t, ok := get(dir + "engineer.md"); ok {
		eng, v.Engineer, v.HasEng = t, md.HTML(t), true
	}
	if t, ok := get(dir + "reviewer.md"); ok {
		v.Reviewer, v.HasRev = md.HTML(t), true
	}
	if t, ok := get(dir + "summary.md"); ok {
		v.Summary, v.HasSum = md.Section(t), true
	}
	for _, k := range keys {
		name, ok := strings.CutPrefix(k, dir+"attempts/")
		if !ok || strings.Contains(name, "/") || !strings.HasSuffix(name, ".md") {
			// Not a response: a finish reason journaled beside one.
			continue
		}
		a := parseAttemptName(strings.TrimSuffix(name, ".md"))
		a.Response, _ = get(k)
		a.Prompt, _ = get(dir + "prompts/" + name)
		for _, rec := range st.Validation {
			if rec.Round == n && strings.EqualFold(string(rec.Role), a.Role) && rec.Part == a.Part && rec.Attempt == a.N {
				a.Validation = append(a.Validation, rec)
			}
		}
		a.Checked = len(a.Validation) > 0
		a.Passed = a.Checked && !slices.ContainsFunc(a.Validation, func(r refine.ValidationRecord) bool { return r.Result != "PASS" })
		v.Attempts = append(v.Attempts, a)
	}
	sort.SliceStable(v.Attempts, func(i, j int) bool {
		x, y := v.Attempts[i], v.Attempts[j]
		if x.Role != y.Role {
			return x.Role == "engineer" // Engineer first, as played
		}
		if x.Part != y.Part {
			return x.Part < y.Part
		}
		return x.N < y.N
	})
	for _, k := range keys {
		if strings.HasPrefix(k, fmt.Sprintf("round_%03d_rolled_back_", n)) {
			v.Rolled = append(v.Rolled, k)
		}
	}
	if v.HasEng {
		v.Diffs = s.resolutionDiffs(ctx, store, rounds[:at], eng)
	}
	return v, nil
}

// parseAttemptName splits "engineer-GAP-API-001-2" into role, part and
// attempt number.
func parseAttemptName(name string) attemptView {
	a := attemptView{Name: name}
	rest := name
	if i := strings.LastIndexByte(rest, '-'); i > 0 {
		if n, err := strconv.Atoi(rest[i+1:]); err == nil {
			a.N, rest = n, rest[:i]
		}
	}
	a.Role, a.Part, _ = strings.Cut(rest, "-")
	return a
}

// resolutionDiffs diffs each Gap Resolution section of this round's
// Engineer output against the same gap's section in the latest earlier
// round that has one.
func (s *Server) resolutionDiffs(ctx context.Context, store refine.Store, earlier []int, eng string) []gapDiff {
	cur := validate.Engineer(eng, validate.Options{})
	prevCache := map[int]map[gap.ID]string{}
	sections := func(n int) map[gap.ID]string {
		if m, ok := prevCache[n]; ok {
			return m
		}
		m := map[gap.ID]string{}
		if b, err := store.Get(ctx, fmt.Sprintf("round_%03d/engineer.md", n)); err == nil {
			for _, sec := range validate.Engineer(string(b), validate.Options{}).Sections {
				m[sec.ID] = sec.Body
			}
		}
		prevCache[n] = m
		return m
	}
	var out []gapDiff
	for _, sec := range cur.Sections {
		d := gapDiff{Gap: string(sec.ID)}
		old := ""
		for i := len(earlier) - 1; i >= 0; i-- {
			if body, ok := sections(earlier[i])[sec.ID]; ok {
				d.Since, old = earlier[i], body
				break
			}
		}
		d.Lines = lineDiff(old, sec.Body)
		for _, l := range d.Lines {
			switch l.Op {
			case '+':
				d.Added++
			case '-':
				d.Removed++
			}
		}
		d.Unchange = d.Added == 0 && d.Removed == 0
		out = append(out, d)
	}
	return out
}
