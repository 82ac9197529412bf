package rollback

import (
	"archive/tar"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/refine-spec/refine/gap"
)

// fuzzLimits keep each fuzz input's memory small regardless of what it
// claims to unpack to.
var fuzzLimits = Limits{maxBytes: 256 << 10, maxEntries: 64}

func FuzzReadArchive(f *testing.F) {
	good, _, _ := sampleArchive(f)
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add(good[:len(good)-4])
	f.Add([]byte{})
	f.Add([]byte("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"))
	f.Add(tarGz(f, metaEntry(f), file("../x", "pwned")))
	f.Add(tarGz(f, metaEntry(f), file("/etc/x", "pwned")))
	f.Add(tarGz(f, metaEntry(f), rawEntry{hdr: tar.Header{Name: "round_005_rolled_back/l", Linkname: "/etc/passwd", Typeflag: tar.TypeSymlink, ModTime: t0}}))
	f.Add(tarGz(f, metaEntry(f), rawEntry{hdr: tar.Header{Name: "round_005_rolled_back/h", Linkname: "x", Typeflag: tar.TypeLink, ModTime: t0}}))
	f.Add(tarGz(f, metaEntry(f), file("round_005_rolled_back/a.md", "1"), file("round_005_rolled_back/a.md", "2")))
	f.Add(bomb(f, 1, 512<<10)) // over the fuzz limit: rejected while reading
	f.Fuzz(func(t *testing.T, b []byte) {
		files, meta, err := ReadArchive(b, fuzzLimits)
		if err != nil {
			if !errors.Is(err, errCorruptArchive) && !errors.Is(err, errUnsafeArchive) && !errors.Is(err, errArchiveTooLarge) {
				t.Fatalf("error wraps no sentinel: %v", err)
			}
			files = nil
		} else {
			var total int64
			for name, data := range files {
				total += int64(len(data))
				if why := unsafeName(name); why != "" {
					t.Fatalf("accepted unsafe name %q: %s", name, why)
				}
			}
			if total > fuzzLimits.maxBytes {
				t.Fatalf("unpacked %d bytes over the %d limit", total, fuzzLimits.maxBytes)
			}
			if meta.OriginalRound < 1 {
				t.Fatalf("accepted metadata %+v", meta)
			}
		}
		entries, err := ListArchive(b, fuzzLimits)
		if err == nil {
			var total int64
			for _, e := range entries {
				total += e.size
			}
			if total > fuzzLimits.maxBytes || len(entries) > fuzzLimits.maxEntries {
				t.Fatalf("list: %d bytes in %d entries past the limits", total, len(entries))
			}
		}
	})
}

func FuzzDetectPatterns(f *testing.F) {
	specs, _ := filepath.Glob("../testdata/spec/*.md")
	for _, p := range specs {
		b, err := os.ReadFile(p)
		if err == nil {
			f.Add(string(b), "")
		}
	}
	f.Add(specReportOutput, "### High Priority\n- undefined term; contradicts itself")
	f.Add(gapSectionText("GAP-FLOW-001", 6), "")
	f.Add("## Gap Resolution: GAP-FLOW-001\n```\n## Gap Resolution: GAP-FLOW-002\n", "`")
	f.Add("\ufeff## Gap Resolution: GAP-A-001\r\n### Examples\r\n- a\r\n", "\xff\xfe")
	f.Fuzz(func(t *testing.T, engineer, reviewer string) {
		in := Input{
			Engineer: engineer, Reviewer: reviewer,
			Assigned: []gap.ID{"GAP-FLOW-001", "GAP-FLOW-007"},
			Known:    []gap.ID{"GAP-FLOW-001", "GAP-FLOW-007"},
			Context:  "ROUND_COMPLETE",
		}
		d := DetectPatterns(in)
		last := -1
		for _, fd := range d.Findings {
			i := patternIndex(fd.Pattern)
			if i <= last {
				t.Fatalf("findings out of order or duplicated: %v", d.Patterns())
			}
			last = i
			if fd.Detail == "" || fd.short == "" {
				t.Fatalf("finding without text: %+v", fd)
			}
		}
		for _, g := range d.Gaps {
			if g.vague < 0 || g.Examples < 0 || g.chars < 0 {
				t.Fatalf("negative count: %+v", g)
			}
			if _, ok := d.finding(AbstractOutput); g.vague > vagueThreshold && !ok {
				t.Fatalf("%s has %d vague words but ABSTRACT_OUTPUT did not fire", g.Gap, g.vague)
			}
		}
		_ = AutoAdjustments(d)
		_ = Diagnose([]AttemptInfo{
			{Attempt: 1, Reason: reviewer, Engineer: engineer, Reviewer: reviewer, Patterns: d.Patterns()},
			{Attempt: 2, Reason: engineer, Engineer: reviewer, Reviewer: engineer},
		})
		_ = ParseDecisionsFromRound(engineer)
		_ = ParseSplitTitles(reviewer)
	})
}
