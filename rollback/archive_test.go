package rollback

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func sampleArchive(t testing.TB) ([]byte, map[string][]byte, Metadata) {
	t.Helper()
	files := map[string][]byte{
		"round_005/engineer.md":            []byte("## Gap Resolution: GAP-FLOW-007\n"),
		"round_005/reviewer.md":            []byte("## Review: GAP-FLOW-007\n"),
		"round_005/summary.md":             []byte("summary\n"),
		"round_005/attempts/engineer-1.md": []byte("raw 1\n"),
		"round_005/attempts/engineer-2.md": []byte("raw 2\n"),
		"round_005/prompts/engineer-1.md":  []byte("prompt\n"),
		"round_005/empty.md":               {},
	}
	meta := Metadata{
		OriginalRound: 5, RollbackTimestamp: t0, Reason: "User request - proposals too abstract",
		AttemptNumber: 1, UserAdjustments: []string{"Focus on concrete examples"},
		Mode: ModeInteractive, Trigger: TriggerUser, TargetRound: 4,
	}
	b, err := BuildArchive(files, meta, DecisionsFromRound(5, []RoundDecision{{ID: "DECISION-R5-001", Choice: "keep weights"}}), withAnalysis("## Rollback Analysis - Round 5\n"))
	if err != nil {
		t.Fatal(err)
	}
	return b, files, meta
}

func TestArchiveRoundTrip(t *testing.T) {
	b, files, meta := sampleArchive(t)
	got, gotMeta, err := ReadArchive(b, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	metaJSON, _ := encodeMetadata(meta)
	want := map[string][]byte{
		"engineer.md":               files["round_005/engineer.md"],
		"reviewer.md":               files["round_005/reviewer.md"],
		"summary.md":                files["round_005/summary.md"],
		"attempts/engineer-1.md":    files["round_005/attempts/engineer-1.md"],
		"attempts/engineer-2.md":    files["round_005/attempts/engineer-2.md"],
		"prompts/engineer-1.md":     files["round_005/prompts/engineer-1.md"],
		"empty.md":                  {},
		MetadataName:                metaJSON,
		"decisions_from_round_5.md": []byte(DecisionsFromRound(5, []RoundDecision{{ID: "DECISION-R5-001", Choice: "keep weights"}})),
		analysisName:                []byte("## Rollback Analysis - Round 5\n"),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(meta, gotMeta); diff != "" {
		t.Errorf("metadata (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(files, roundFiles(got, 5)); diff != "" {
		t.Errorf("RoundFiles (-want +got):\n%s", diff)
	}
}

func TestArchiveDeterministic(t *testing.T) {
	first, _, _ := sampleArchive(t)
	for i := 0; i < 10; i++ { // map order differs between runs
		b, _, _ := sampleArchive(t)
		if !bytes.Equal(first, b) {
			t.Fatalf("build %d differs from the first", i)
		}
	}
	es, err := ListArchive(first, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name)
		if !e.modTime.Equal(t0) {
			t.Errorf("%s mtime %v, want the rollback timestamp", e.Name, e.modTime)
		}
		if want := map[bool]int64{true: 0o700, false: 0o600}[e.Dir]; e.mode != want {
			t.Errorf("%s mode %o, want %o", e.Name, e.mode, want)
		}
	}
	want := []string{
		"round_005_rolled_back",
		"round_005_rolled_back/analysis.md",
		"round_005_rolled_back/attempts",
		"round_005_rolled_back/attempts/engineer-1.md",
		"round_005_rolled_back/attempts/engineer-2.md",
		"round_005_rolled_back/decisions_from_round_5.md",
		"round_005_rolled_back/empty.md",
		"round_005_rolled_back/engineer.md",
		"round_005_rolled_back/prompts",
		"round_005_rolled_back/prompts/engineer-1.md",
		"round_005_rolled_back/reviewer.md",
		"round_005_rolled_back/rollback_metadata.json",
		"round_005_rolled_back/summary.md",
	}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
	// The gzip header carries no name and no time.
	zr, err := gzip.NewReader(bytes.NewReader(first))
	if err != nil {
		t.Fatal(err)
	}
	if zr.Name != "" || !zr.ModTime.IsZero() {
		t.Errorf("gzip header name %q mtime %v", zr.Name, zr.ModTime)
	}
}

func TestMetadataJSON(t *testing.T) {
	b, err := encodeMetadata(Metadata{OriginalRound: 5, RollbackTimestamp: time.Date(2026, 1, 12, 15, 30, 0, 999, time.FixedZone("CET", 3600)),
		Reason: "User request - proposals too abstract <b>", AttemptNumber: 1, TargetRound: 4})
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "original_round": 5,
  "rollback_timestamp": "2026-01-12T14:30:00Z",
  "reason": "User request - proposals too abstract <b>",
  "attempt_number": 1,
  "user_adjustments": [],
  "target_round": 4
}
`
	if diff := cmp.Diff(want, string(b)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestBuildArchiveRejects(t *testing.T) {
	meta := Metadata{OriginalRound: 5, RollbackTimestamp: t0, AttemptNumber: 1, TargetRound: 4}
	for _, tc := range []struct {
		name  string
		files map[string][]byte
		meta  Metadata
		want  string
	}{
		{"other round", map[string][]byte{"round_006/engineer.md": nil}, meta, "not in round 5's folder"},
		{"traversal", map[string][]byte{"round_005/../state.json": nil}, meta, "path traversal"},
		{"reserved", map[string][]byte{"round_005/rollback_metadata.json": nil}, meta, "collides"},
		{"file and folder", map[string][]byte{"round_005/a": nil, "round_005/a/b": nil}, meta, "both a file and a folder"},
		{"no timestamp", nil, Metadata{OriginalRound: 5, AttemptNumber: 1}, "rollback_timestamp is unset"},
		{"no attempt", nil, Metadata{OriginalRound: 5, RollbackTimestamp: t0}, "attempt_number 0"},
		{"bad target", nil, Metadata{OriginalRound: 5, RollbackTimestamp: t0, AttemptNumber: 1, TargetRound: 5}, "target_round 5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := BuildArchive(tc.files, tc.meta, "")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
	big := map[string][]byte{"round_005/big.md": make([]byte, maxUnpacked)}
	if _, err := BuildArchive(big, meta, ""); !errors.Is(err, errArchiveTooLarge) {
		t.Errorf("oversized build: err = %v, want ErrArchiveTooLarge", err)
	}
}

func TestReadArchiveUnsafe(t *testing.T) {
	link := func(name, target string, typ byte) rawEntry {
		return rawEntry{hdr: tar.Header{Name: name, Linkname: target, Typeflag: typ, Mode: 0o777, ModTime: t0}}
	}
	dev := func(name string, typ byte) rawEntry {
		return rawEntry{hdr: tar.Header{Name: name, Typeflag: typ, Mode: 0o600, ModTime: t0, Devmajor: 1, Devminor: 3}}
	}
	for _, tc := range []struct {
		name    string
		entries []rawEntry
		want    string
	}{
		{"tar slip", []rawEntry{file("../x", "pwned")}, `"../x": ".." path segment`},
		{"nested slip", []rawEntry{file("round_005_rolled_back/../../x", "pwned")}, `path traversal`},
		{"absolute", []rawEntry{file("/etc/x", "pwned")}, `"/etc/x": absolute path`},
		{"drive letter", []rawEntry{file("C:/x", "pwned")}, "drive letter"},
		{"backslash", []rawEntry{file(`round_005_rolled_back\..\x`, "pwned")}, "backslash"},
		{"symlink", []rawEntry{link("round_005_rolled_back/evil", "/etc/passwd", tar.TypeSymlink)}, `symbolic link (to "/etc/passwd")`},
		{"hardlink", []rawEntry{link("round_005_rolled_back/evil", "/etc/passwd", tar.TypeLink)}, `hard link (to "/etc/passwd")`},
		{"char device", []rawEntry{dev("round_005_rolled_back/null", tar.TypeChar)}, "device file"},
		{"block device", []rawEntry{dev("round_005_rolled_back/sda", tar.TypeBlock)}, "device file"},
		{"fifo", []rawEntry{dev("round_005_rolled_back/pipe", tar.TypeFifo)}, "named pipe"},
		{"control byte", []rawEntry{file("round_005_rolled_back/a\nb", "x")}, "is not one of"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := tarGz(t, append([]rawEntry{metaEntry(t)}, tc.entries...)...)
			_, _, err := ReadArchive(b, Limits{})
			if !errors.Is(err, errUnsafeArchive) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ReadArchive: err = %v, want ErrUnsafeArchive mentioning %s", err, tc.want)
			}
			if _, err := ListArchive(b, Limits{}); !errors.Is(err, errUnsafeArchive) {
				t.Errorf("ListArchive: err = %v, want ErrUnsafeArchive", err)
			}
		})
	}
}

func TestReadArchiveCorrupt(t *testing.T) {
	good, _, _ := sampleArchive(t)
	flipped := bytes.Clone(good)
	flipped[len(flipped)/2] ^= 0xff
	for _, tc := range []struct {
		name string
		b    []byte
		want string
	}{
		{"not gzip", []byte("hello, world"), "not a gzip stream"},
		{"empty", nil, "not a gzip stream"},
		{"truncated half", good[:len(good)/2], "truncated"},
		{"truncated trailer", good[:len(good)-4], "gzip trailer"},
		{"bit flip", flipped, "corrupt archive"},
		{"trailing garbage", append(bytes.Clone(good), "garbage"...), "gzip trailer"},
		{"gzip of junk", gz(t, []byte(strings.Repeat("not a tar header ", 64))), "reading entry header"},
		{"no metadata", tarGz(t, file("round_005_rolled_back/engineer.md", "x")), "no rollback_metadata.json"},
		{"bad metadata", tarGz(t, file("round_005_rolled_back/rollback_metadata.json", `{"original_round":5}`)), "rollback_metadata.json"},
		{"round mismatch", tarGz(t, dir("round_006_rolled_back/"), file("round_006_rolled_back/rollback_metadata.json", string(metaEntry(t).data))), "holds metadata of round 5"},
		{"outside folder", tarGz(t, metaEntry(t), file("engineer.md", "x")), "not inside a round_NNN_rolled_back/ folder"},
		{"two folders", tarGz(t, metaEntry(t), file("round_004_rolled_back/x.md", "x")), "two folders"},
		{"duplicate", tarGz(t, metaEntry(t), file("round_005_rolled_back/a.md", "1"), file("round_005_rolled_back/a.md", "2")), "appears twice"},
		{"file as folder", tarGz(t, file("round_005_rolled_back", "x")), "is a file"},
		{"empty archive", tarGz(t), "empty archive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := ReadArchive(tc.b, Limits{})
			if !errors.Is(err, errCorruptArchive) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want ErrCorruptArchive mentioning %q", err, tc.want)
			}
		})
	}
}

func gz(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

// zeros is an endless reader of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// bomb builds, without holding it in memory, a tar.gz whose entries
// unpack to n files of size bytes of zeros each.
func bomb(t testing.TB, n int, size int64) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	tw := tar.NewWriter(zw)
	meta := metaEntry(t)
	tw.WriteHeader(&meta.hdr)
	tw.Write(meta.data)
	for i := 0; i < n; i++ {
		h := &tar.Header{Name: "round_005_rolled_back/zeros-" + string(rune('a'+i%26)) + strings.Repeat("x", i/26) + ".bin", Typeflag: tar.TypeReg, Mode: 0o600, Size: size, ModTime: t0}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := io.CopyN(tw, zeros{}, size); err != nil {
			t.Fatal(err)
		}
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func TestReadArchiveBomb(t *testing.T) {
	// 100 MiB of zeros compress to about 100 KB.
	b := bomb(t, 1, 100<<20)
	if len(b) > 200<<10 {
		t.Fatalf("bomb is %d bytes compressed, want ~100 KB", len(b))
	}
	var err error
	alloc := allocated(func() { _, _, err = ReadArchive(b, Limits{}) })
	if !errors.Is(err, errArchiveTooLarge) {
		t.Fatalf("err = %v, want ErrArchiveTooLarge", err)
	}
	if alloc > 16<<20 {
		t.Errorf("rejecting the bomb allocated %d MiB; it must be stopped before unpacking", alloc>>20)
	}
	if _, err := ListArchive(b, Limits{}); !errors.Is(err, errArchiveTooLarge) {
		t.Errorf("ListArchive: err = %v, want ErrArchiveTooLarge", err)
	}
}

func TestReadArchiveManySmallFilesBomb(t *testing.T) {
	// Each file is under the limit; together they pass it. The reader counts
	// the bytes it has read and stops at the limit.
	b := bomb(t, 12, 1<<20)
	lim := Limits{maxBytes: 8 << 20}
	var err error
	alloc := allocated(func() { _, _, err = ReadArchive(b, lim) })
	if !errors.Is(err, errArchiveTooLarge) || !strings.Contains(err.Error(), "at most 8388608") {
		t.Fatalf("err = %v, want ErrArchiveTooLarge at the 8 MiB limit", err)
	}
	if alloc > 24<<20 {
		t.Errorf("allocated %d MiB for an 8 MiB limit", alloc>>20)
	}
	if _, _, err := ReadArchive(b, Limits{maxBytes: 16 << 20}); err != nil {
		t.Errorf("12 MiB under a 16 MiB limit: %v", err)
	}
}

func TestReadArchiveTooManyEntries(t *testing.T) {
	entries := []rawEntry{metaEntry(t)}
	for i := 0; i < 20; i++ {
		entries = append(entries, file("round_005_rolled_back/f"+strings.Repeat("x", i)+".md", ""))
	}
	_, _, err := ReadArchive(tarGz(t, entries...), Limits{maxEntries: 10})
	if !errors.Is(err, errArchiveTooLarge) || !strings.Contains(err.Error(), "more than 10 entries") {
		t.Errorf("err = %v", err)
	}
}

func TestArchiveNames(t *testing.T) {
	for _, tc := range []struct {
		name     string
		round, k int
		ok       bool
	}{
		{"round_005_rolled_back_1.tar.gz", 5, 1, true},
		{"round_123_rolled_back_12.tar.gz", 123, 12, true},
		{"round_1234_rolled_back_1.tar.gz", 1234, 1, true},
		{"round_0005_rolled_back_1.tar.gz", 0, 0, false},
		{"round_000_rolled_back_1.tar.gz", 0, 0, false},
		{"round_005_rolled_back_0.tar.gz", 0, 0, false},
		{"round_5_rolled_back_1.tar.gz", 0, 0, false},
		{"round_005_rolled_back_1.tgz", 0, 0, false},
	} {
		r, k, ok := ParseArchiveName(tc.name)
		if r != tc.round || k != tc.k || ok != tc.ok {
			t.Errorf("ParseArchiveName(%q) = %d, %d, %v", tc.name, r, k, ok)
		}
		if ok && ArchiveName(r, k) != tc.name {
			t.Errorf("ArchiveName(%d, %d) = %q", r, k, ArchiveName(r, k))
		}
	}
}
