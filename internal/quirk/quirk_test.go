package quirk_test

import (
	"crypto/sha256"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/quirk"
	"github.com/refine-spec/refine/validate"
)

// sample is a valid answer the repository holds.
type sample struct {
	name string
	role gap.Role
	text string
	opt  validate.Options          // Engineer and Reviewer
	in   validate.IntegrationInput // Integration
}

// roleAnswers are the globs of the recorded Engineer and Reviewer answers:
// the spec's proposals and worked examples, the demo and test recordings,
// the conflict package's examples and the legacy session folders.
var roleAnswers = []string{
	"../../testdata/spec/*.md",
	"../../testdata/spec-examples/*.md",
	"../../cmd/refine/demo/replay/*.md",
	"../../cmd/refine/testdata/basic/replay/*.md",
	"../../web/testdata/demo/replay/*.md",
	"../../temporal/testdata/two-rounds/*.md",
	"../../testdata/legacy-replay/*-0*.md",
	"../../conflict/testdata/example*_engineer_*.md",
	"../../store/fs/testdata/*/round_*/*.md",
	"../../testdata/legacy-*/*/round_*/*.md",
	"../../testdata/legacy-*/*/round_*/attempts/*.md",
	"testdata/answers/*.md", // written for #38: what the recordings lack
}

func read(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// corpus returns every valid answer the repository holds, once each.
func corpus(t testing.TB) []sample {
	t.Helper()
	seen := map[[32]byte]bool{}
	var out []sample
	add := func(s sample) {
		h := sha256.Sum256([]byte(string(s.role) + "\x00" + s.text))
		if !seen[h] {
			seen[h] = true
			out = append(out, s)
		}
	}
	for _, g := range roleAnswers {
		paths, _ := filepath.Glob(g)
		for _, p := range paths {
			base := filepath.Base(p)
			if strings.Contains(p, "/prompts/") || !strings.Contains(base, "engineer") && !strings.Contains(base, "reviewer") &&
				!strings.HasPrefix(base, "round-") && !strings.HasPrefix(base, "r0") && !strings.HasPrefix(base, "r1") {
				continue
			}
			role := gap.Engineer
			if strings.Contains(base, "reviewer") {
				role = gap.Reviewer
			}
			text := read(t, p)
			opt := validate.Options{}
			if role == gap.Reviewer {
				opt.Round = firstRound(text)
			}
			if r, _ := validate.Validate(role, text, opt); !r.Success || len(r.Normalized) > 0 {
				continue // not an answer (a fragment, a failed attempt, an integrated spec)
			}
			add(sample{name: p, role: role, text: text, opt: opt})
		}
	}
	for _, s := range integrationCorpus(t) {
		add(s)
	}
	return out
}

func firstRound(text string) int {
	for _, m := range gap.FindIssueMatches(text) {
		if id, err := gap.ParseIssueID(m.ID); err == nil {
			return id.Round
		}
	}
	return 0
}

// integrationCorpus returns the integrated specs: the demo's, the test
// fixtures and the ones written for #38 (testdata/integration).
func integrationCorpus(t testing.TB) []sample {
	t.Helper()
	type pair struct{ name, source, output string }
	pairs := []pair{{"demo", read(t, "../../cmd/refine/demo/spec.md"), read(t, "../../cmd/refine/demo/replay/engineer-007.md")}}
	dirs, _ := filepath.Glob("testdata/integration/*")
	for _, d := range dirs {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			pairs = append(pairs, pair{d, read(t, filepath.Join(d, "source.md")), read(t, filepath.Join(d, "output.md"))})
		}
	}
	var out []sample
	for _, p := range pairs {
		in := integrationInput(p.source, p.output)
		if r := validate.Integration(p.output, in); !r.Success {
			t.Fatalf("integrated spec %s is not valid: %s", p.name, r.Message)
		}
		out = append(out, sample{name: p.name, role: quirk.Integration, text: p.output, in: in})
	}
	return out
}

// integrationInput derives an integration's material from its answer:
// the gaps and decisions its log names, the gaps under Known Limitations.
// The size bounds are left out: they judge the merge, not the reading.
func integrationInput(source, output string) validate.IntegrationInput {
	in := validate.IntegrationInput{Source: source, SkipSize: true}
	if i := strings.Index(output, "## Resolution Log"); i >= 0 {
		for _, id := range gap.FindIDs(output[i:]) {
			in.Resolutions = append(in.Resolutions, validate.Resolution{ID: id})
		}
		in.Decisions = gap.FindDecisionIDs(output[i:])
	}
	if i := strings.Index(output, "## Known Limitations"); i >= 0 {
		end := strings.Index(output[i+3:], "\n## ")
		if end < 0 {
			end = len(output) - i - 3
		}
		in.Limitations = gap.FindIDs(output[i : i+3+end])
	}
	return in
}

// reading is what a validation read: what a benign quirk must not change.
type reading struct {
	Success   bool
	Failure   validate.FailureType
	Gaps      []gap.ID
	Sections  []string // ID=confidence
	NewGaps   []string // ID/severity/section
	Disagree  []string // issue ID/fields present
	Issues    []string // ID/severity/gap
	Verdict   validate.Verdict
	NoIssues  bool
	Responses []string
	Log       []string
}

func readingOf(r validate.Result, log []validate.LogEntry) reading {
	rd := reading{Success: r.Success, Failure: r.FailureType, Gaps: r.GapsAddressed, Verdict: r.Verdict, NoIssues: r.NoIssuesFound, Responses: r.Responses}
	for _, s := range r.Sections {
		rd.Sections = append(rd.Sections, string(s.ID)+"="+string(s.Confidence))
	}
	for _, g := range r.NewGaps {
		rd.NewGaps = append(rd.NewGaps, string(g.ID)+"/"+g.Severity.String()+"/"+string(g.FromGap))
	}
	for _, d := range r.Disagreements {
		rd.Disagree = append(rd.Disagree, d.IssueID+"/"+mark(d.ReviewerConcern)+mark(d.EngineerPosition)+mark(d.Rationale))
	}
	for _, is := range r.Issues {
		rd.Issues = append(rd.Issues, is.ID+"/"+is.Severity.String()+"/"+string(is.Gap))
	}
	for _, e := range log {
		rd.Log = append(rd.Log, e.Item+" → "+strings.Join(e.Sections, "; "))
	}
	return rd
}

func mark(s string) string {
	if s == "" {
		return "-"
	}
	return "+"
}

// check validates text as s's role would be, with the finish reason given.
func (s sample) check(text string, opt validate.Options, in validate.IntegrationInput) (validate.Result, reading) {
	if s.role == quirk.Integration {
		r := validate.Integration(text, in)
		return r.Result, readingOf(r.Result, r.Log)
	}
	r, _ := validate.Validate(s.role, text, opt)
	return r, readingOf(r, nil)
}

// rng is the quirk's own stream for a sample: deterministic.
func rng(parts ...string) *rand.Rand {
	h := fnv.New64a()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return rand.New(rand.NewPCG(h.Sum64(), 38))
}

// For every benign quirk Q and every valid answer o it applies to,
// validate(Q(o)) reads what validate(o) reads, and leaves nothing unread;
// for every defect D, validate(D(o)) fails with D's failure type.
func TestMetamorphic(t *testing.T) {
	samples := corpus(t)
	counts := map[gap.Role]int{}
	withDisagree := 0
	for _, s := range samples {
		counts[s.role]++
		if strings.Contains(s.text, "## DISAGREE: ISSUE-") {
			withDisagree++
		}
	}
	t.Logf("corpus: %d Engineer (%d with DISAGREE blocks), %d Reviewer, %d integrated specs", counts[gap.Engineer], withDisagree, counts[gap.Reviewer], counts[quirk.Integration])
	if counts[gap.Engineer]+counts[gap.Reviewer] < 20 || counts[gap.Engineer] < 8 || counts[gap.Reviewer] < 8 || withDisagree < 3 || counts[quirk.Integration] < 8 {
		t.Fatalf("corpus too small: %v, %d with DISAGREE", counts, withDisagree)
	}
	benign, defects := quirk.Benign(), quirk.Defects()
	if len(benign) < 40 || len(defects) < 15 {
		t.Fatalf("%d benign quirks and %d defects; want at least 40 and 15", len(benign), len(defects))
	}
	applied := map[string]int{}
	for _, s := range samples {
		base, want := s.check(s.text, s.opt, s.in)
		for _, q := range benign {
			if !q.For(s.role) {
				continue
			}
			out, ok := q.Apply(s.text, rng(s.name, q.Name))
			if !ok {
				continue
			}
			applied[q.Name]++
			res, got := s.check(out, s.opt, s.in)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s on %s: reading changed (-as written +quirked):\n%s\n%s", q.Name, s.name, diff, res.Message)
				continue
			}
			if u := validate.Unread(res); u != nil {
				t.Errorf("%s on %s: unread lines %q", q.Name, s.name, u)
			}
			if len(res.Normalized) == 0 && out != s.text && res.Text != base.Text && !quietQuirks[q.Name] {
				t.Errorf("%s on %s: read the same but no NORMALIZED warning", q.Name, s.name)
			}
		}
		for _, d := range defects {
			if !d.For(s.role) || d.NeedsRound && s.opt.Round == 0 {
				continue
			}
			out, ok := d.Apply(s.text, rng(s.name, d.Name))
			if !ok {
				continue
			}
			applied[d.Name]++
			opt, in := s.opt, s.in
			opt.FinishReason, in.FinishReason = d.FinishReason, d.FinishReason
			if d.NeedsKnownGaps {
				opt.KnownGaps = gap.FindIDs(s.text)
			}
			res, _ := s.check(out, opt, in)
			if want := d.WantFor(s.role); res.FailureType != want || !res.Retriable {
				t.Errorf("%s on %s: %s (%s), want %s", d.Name, s.name, res.FailureType, res.Message, want)
			}
		}
	}
	for _, q := range benign {
		if applied[q.Name] == 0 {
			t.Errorf("benign quirk %s applied to no answer of the corpus", q.Name)
		}
	}
	for _, d := range defects {
		if applied[d.Name] == 0 {
			t.Errorf("defect %s applied to no answer of the corpus", d.Name)
		}
	}
}

// quietQuirks are read as written, without a mapping to report: the
// format's reading already takes them.
var quietQuirks = map[string]bool{
	"preamble": true, "closing-remark": true, "crlf": true, "bom": true, "trailing-spaces": true, "blank-lines": true,
	"star-bullets": true, "plus-bullets": true, "rules-between-sections": true, "typographic-quotes": true,
	"gr-closing-hashes": true, "gr-title-after-id": true, "confidence-lower-case": true, "confidence-list": true, "tradeoffs-one-word": true,
	"severity-upper-case": true, "issues-as-headings": true, "limitations-upper-case": true, "limitations-numbered": true,
}

// FuzzQuirks composes benign quirks: whatever the composition, validation
// never panics and reads what the answer as written reads.
func FuzzQuirks(f *testing.F) {
	samples := corpus(f)
	benign := quirk.Benign()
	for i := range 8 {
		f.Add(uint16(i), uint64(i*7919), []byte{byte(i), byte(i * 3), byte(i * 5)})
	}
	f.Fuzz(func(t *testing.T, which uint16, seed uint64, picks []byte) {
		s := samples[int(which)%len(samples)]
		var qs []quirk.Quirk
		for _, p := range picks[:min(len(picks), 6)] {
			q := benign[int(p)%len(benign)]
			if q.For(s.role) && !slices.ContainsFunc(qs, func(o quirk.Quirk) bool { return o.Name == q.Name }) {
				qs = append(qs, q)
			}
		}
		out, names := quirk.Compose(s.text, rand.New(rand.NewPCG(seed, 1)), qs...)
		_, want := s.check(s.text, s.opt, s.in)
		res, got := s.check(out, s.opt, s.in)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("%v on %s: reading changed (-as written +quirked):\n%s\n%s\n%s", names, s.name, diff, res.Message, out)
		}
		if u := validate.Unread(res); u != nil {
			t.Fatalf("%v on %s: unread %q", names, s.name, u)
		}
	})
}

// The quirks are deterministic given their stream, and leave fenced
// examples alone.
func TestQuirksAreDeterministic(t *testing.T) {
	samples := corpus(t)
	for _, q := range append(quirk.Benign(), defectQuirks()...) {
		for _, s := range samples[:min(len(samples), 12)] {
			a, okA := q.Apply(s.text, rng("x", q.Name))
			b, okB := q.Apply(s.text, rng("x", q.Name))
			if a != b || okA != okB {
				t.Errorf("%s on %s: two runs differ", q.Name, s.name)
			}
		}
	}
	// A fenced example holding a header stays as written.
	text := "## Review: GAP-FLOW-001\n\n```markdown\n### High Priority\n## Gap Resolution: GAP-FLOW-002\n```\n\n### High Priority\n\nNone.\n"
	for _, q := range quirk.Benign() {
		if q.Layer != quirk.Inner && q.Layer != quirk.Bytes {
			continue
		}
		out, _ := q.Apply(text, rng(q.Name))
		if !strings.Contains(strings.ReplaceAll(out, "\r\n", "\n"), "```markdown\n### High Priority\n## Gap Resolution: GAP-FLOW-002") &&
			!strings.Contains(out, "  \n") && !strings.Contains(out, "\u2011") && !strings.Contains(out, "\u2010") {
			t.Errorf("%s rewrote a fenced example:\n%s", q.Name, out)
		}
	}
}

func defectQuirks() []quirk.Quirk {
	var out []quirk.Quirk
	for _, d := range quirk.Defects() {
		out = append(out, d.Quirk)
	}
	return out
}

func TestTruncate(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		s := "héllo — wörld"
		c := quirk.Truncate(s, r)
		if len(c) == 0 || len(c) >= len(s) || !strings.HasPrefix(s, c) || !isValidUTF8(c) {
			t.Fatalf("Truncate(%q) = %q", s, c)
		}
	}
	if quirk.Truncate("x", r) != "x" {
		t.Error("a one-byte text is kept")
	}
}

func isValidUTF8(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }
