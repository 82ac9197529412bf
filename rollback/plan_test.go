package rollback

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBackupKeys(t *testing.T) {
	if got := backupKeys(3); !cmp.Equal(got, []string{"status_backup_round_3.md", "decisions_backup_round_3.md", "state_backup_round_3.json"}) {
		t.Errorf("BackupKeys(3) = %q", got)
	}
	for _, tc := range []struct {
		key   string
		kind  BackupKind
		round int
		ok    bool
	}{
		{"status_backup_round_3.md", statusBackup, 3, true},
		{"decisions_backup_round_0.md", decisionsBackup, 0, true},
		{"state_backup_round_12.json", StateBackup, 12, true},
		{"state_backup_round_12.md", "", 0, false},
		{"status_backup_round_03.md", "", 0, false},
		{"status_backup_round_3.json", "", 0, false},
		{"status_backup_round_9999999.md", "", 0, false},
		{"round_003/status_backup_round_3.md", "", 0, false},
	} {
		kind, round, ok := ParseBackupKey(tc.key)
		if kind != tc.kind || round != tc.round || ok != tc.ok {
			t.Errorf("ParseBackupKey(%q) = %q, %d, %v", tc.key, kind, round, ok)
		}
	}
}

func TestRotationOps(t *testing.T) {
	for _, tc := range []struct {
		round, retention int
		snap             int
		del              []int
	}{
		{1, 3, 0, nil},
		{4, 3, 3, []int{0}},
		{8, 3, 7, []int{4}}, // the spec: snapshot N-1, delete N-4
		{8, 0, 7, []int{4}}, // 0 means the default 3
		{8, 5, 7, []int{2}},
		{2, 1, 1, []int{0}},
	} {
		snap, del := rotationOps(tc.round, tc.retention)
		if snap != tc.snap || !cmp.Equal(del, tc.del) {
			t.Errorf("RotationOps(%d, %d) = %d, %v; want %d, %v", tc.round, tc.retention, snap, del, tc.snap, tc.del)
		}
	}
}

func TestRotateKeepsThreeRounds(t *testing.T) {
	s := session(t, 8)
	var backups []string
	for _, k := range s.keys() {
		if _, _, ok := ParseBackupKey(k); ok {
			backups = append(backups, k)
		}
	}
	want := []string{
		"decisions_backup_round_5.md", "decisions_backup_round_6.md", "decisions_backup_round_7.md",
		"state_backup_round_5.json", "state_backup_round_6.json", "state_backup_round_7.json",
		"status_backup_round_5.md", "status_backup_round_6.md", "status_backup_round_7.md",
	}
	if diff := cmp.Diff(want, backups); diff != "" {
		t.Errorf("backups at the end of round 8 (-want +got):\n%s", diff)
	}
	if got := string(s[statusBackupKey(7)]); got != "# Status\n\nround 7\n" {
		t.Errorf("backup of round 7 holds %q, want the state after round 7", got)
	}

	// Stale backups (from an undone timeline, or beyond a lowered retention)
	// are cleaned up by the next rotation.
	r := Rotate(9, 2, append(s.keys(), "status_backup_round_9.md"))
	if diff := cmp.Diff([]string{
		"decisions_backup_round_5.md", "decisions_backup_round_6.md",
		"state_backup_round_5.json", "state_backup_round_6.json",
		"status_backup_round_5.md", "status_backup_round_6.md", "status_backup_round_9.md",
	}, r.Delete); diff != "" {
		t.Errorf("Rotate(9, 2) deletes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Copy{{"status.md", "status_backup_round_8.md"}, {"decisions.md", "decisions_backup_round_8.md"}, {"state.json", "state_backup_round_8.json"}}, r.Copies); diff != "" {
		t.Errorf("copies (-want +got):\n%s", diff)
	}
}

func TestMultiRoundRollbackLimits(t *testing.T) {
	s := session(t, 8)
	// N-3 succeeds.
	p, err := PlanRollback(Request{Current: 8, To: 5, Keys: s.keys()})
	if err != nil {
		t.Fatalf("rollback to N-3: %v", err)
	}
	if got := p.undone(); !cmp.Equal(got, []int{6, 7, 8}) {
		t.Errorf("undone = %v", got)
	}
	// N-4 is refused, with the available targets listed.
	_, err = PlanRollback(Request{Current: 8, To: 4, Keys: s.keys()})
	var ue *UnavailableError
	if !errors.Is(err, ErrTargetUnavailable) || !errors.As(err, &ue) {
		t.Fatalf("rollback to N-4: err = %v, want ErrTargetUnavailable", err)
	}
	if !cmp.Equal(ue.available, []int{7, 6, 5}) || !strings.Contains(err.Error(), "available targets: 7, 6, 5") {
		t.Errorf("err = %v, available %v", err, ue.available)
	}
	// A missing state backup makes a round unavailable.
	keys := s.keys()
	keys = keys[:0:0]
	for _, k := range s.keys() {
		if k != StateBackupKey(5) {
			keys = append(keys, k)
		}
	}
	if _, err := PlanRollback(Request{Current: 8, To: 5, Keys: keys}); !errors.Is(err, ErrTargetUnavailable) {
		t.Errorf("without state backup: err = %v", err)
	}
}

func TestPlanRollbackErrors(t *testing.T) {
	s := session(t, 8)
	hist := func(n int) History {
		var h History
		for i := 0; i < n; i++ {
			h.Records = append(h.Records, Record{Round: 2, Attempt: i + 1})
		}
		return h
	}
	for _, tc := range []struct {
		name string
		req  Request
		want error
		msg  string
	}{
		{"negative", Request{Current: 8, To: -1}, ErrOutOfRange, "must be in [0, 8)"},
		{"current", Request{Current: 8, To: 8}, ErrOutOfRange, ""},
		{"future", Request{Current: 8, To: 9}, ErrOutOfRange, ""},
		{"8th refused", Request{Current: 8, To: 7, History: hist(7)}, ErrLimit, "used 7 of 7"},
		{"7th allowed", Request{Current: 8, To: 7, History: hist(6)}, nil, ""},
		{"two rounds, one left", Request{Current: 8, To: 6, History: hist(6)}, ErrLimit, "needs 2 rollbacks, 1 of 7 remain"},
		{"raised limit", Request{Current: 8, To: 7, History: hist(7), Limit: 10}, nil, ""},
		{"rotated out", Request{Current: 8, To: 2}, ErrTargetUnavailable, "only the last 3 rounds are kept"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := tc.req
			req.Keys = s.keys()
			_, err := PlanRollback(req)
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if tc.msg != "" && !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("err = %q, want it to mention %q", err, tc.msg)
			}
		})
	}
}

func TestPlanAttemptNumbers(t *testing.T) {
	s := session(t, 8)
	keys := append(s.keys(), "round_008_rolled_back_1.tar.gz", "round_007_rolled_back_1.tar.gz", "round_007_rolled_back_2.tar.gz")
	h := History{Records: []Record{{Round: 8, Attempt: 1}, {Round: 8, Attempt: 2}}}
	p, err := PlanRollback(Request{Current: 8, To: 6, Keys: keys, History: h})
	if err != nil {
		t.Fatal(err)
	}
	got := map[int]string{}
	for _, rp := range p.Rounds {
		got[rp.Round] = rp.Archive
	}
	// Round 8: history says 2, the store 1 → 3. Round 7: the store says 2 → 3.
	want := map[int]string{8: "round_008_rolled_back_3.tar.gz", 7: "round_007_rolled_back_3.tar.gz"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("archives (-want +got):\n%s", diff)
	}
}

func TestPlanDeletesUndoneTimeline(t *testing.T) {
	s := session(t, 8)
	s["final_summary.md"] = []byte("done")
	s["final_spec_trace.json"] = []byte("{}")
	s["final/attempts/engineer-1.md"] = []byte("# Spec v1.0")
	p, err := PlanRollback(Request{Current: 8, To: 6, Keys: s.keys()})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"round_007/engineer.md", "round_008/reviewer.md", "status_backup_round_7.md", "state_backup_round_7.json", "final_summary.md",
		"final_spec_trace.json", "final/attempts/engineer-1.md"} {
		if !strings.Contains(strings.Join(p.Delete, " "), k) {
			t.Errorf("plan does not delete %s: %v", k, p.Delete)
		}
	}
	for _, k := range p.Delete {
		if strings.HasPrefix(k, "round_006/") || k == statusBackupKey(6) || k == statusBackupKey(5) {
			t.Errorf("plan deletes %s, which belongs to the kept timeline", k)
		}
	}
}

func TestRollbackThenRetry(t *testing.T) {
	// Roll back round 8 to 7, rerun round 8, roll it back again: K = 2,
	// and the second archive holds the second output.
	s := session(t, 8)
	var h History
	for k := 1; k <= 2; k++ {
		p, err := PlanRollback(Request{Current: 8, To: 7, Keys: s.keys(), History: h})
		if err != nil {
			t.Fatal(err)
		}
		res, err := p.Execute(Execution{Files: s.read(t, p.Reads()), At: t0, Reason: "retry", Mode: ModeInteractive, Trigger: TriggerUser})
		if err != nil {
			t.Fatal(err)
		}
		s.apply(res.Ops())
		h.Records = append(h.Records, res.Records...)
		// Round 8 runs again.
		s.rotate(8)
		s[RoundPrefix(8)+"engineer.md"] = []byte("second output")
	}
	if _, ok := s["round_008_rolled_back_2.tar.gz"]; !ok {
		t.Fatalf("no second archive: %v", s.keys())
	}
	files, meta, err := ReadArchive(s["round_008_rolled_back_2.tar.gz"], Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if meta.AttemptNumber != 2 || string(files["engineer.md"]) != "second output" {
		t.Errorf("attempt %d, engineer.md %q", meta.AttemptNumber, files["engineer.md"])
	}
	// A rollback deletes only backups of undone rounds: 5, 6 and 7 remain.
	if got := AvailableTargets(8, s.keys()); !cmp.Equal(got, []int{7, 6, 5}) {
		t.Errorf("targets = %v", got)
	}
}

func TestExecuteMissingFile(t *testing.T) {
	s := session(t, 3)
	p, err := PlanRollback(Request{Current: 3, To: 2, Keys: s.keys()})
	if err != nil {
		t.Fatal(err)
	}
	files := s.read(t, p.Reads())
	delete(files, statusBackupKey(2))
	if _, err := p.Execute(Execution{Files: files, At: t0}); !errors.Is(err, errMissingFile) {
		t.Errorf("err = %v, want ErrMissingFile", err)
	}
	if _, err := p.Execute(Execution{Files: s.read(t, p.Reads())}); err == nil {
		t.Error("zero time accepted")
	}
}

func TestRollbackToRoundZero(t *testing.T) {
	s := session(t, 1)
	if got := AvailableTargets(1, s.keys()); !cmp.Equal(got, []int{0}) {
		t.Fatalf("targets = %v, want [0]", got)
	}
	p, err := PlanRollback(Request{Current: 1, To: 0, Keys: s.keys()})
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Execute(Execution{Files: s.read(t, p.Reads()), At: t0, Reason: "bad start"})
	if err != nil {
		t.Fatal(err)
	}
	s.apply(res.Ops())
	if !strings.HasPrefix(string(s[StatusKey]), "# Status\n\nround 0\n") {
		t.Errorf("status.md = %q", s[StatusKey])
	}
}
