package rollbackfmt

import (
	"testing"
	"time"
)

func TestWords(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{Plural(1, "decision", "decisions"), "1 decision"},
		{Plural(0, "decision", "decisions"), "0 decisions"},
		{Ordinal(2), "second"},
		{Ordinal(11), "11th"},
		{Capitalize("second"), "Second"},
		{Capitalize("Ökonomie"), "Ökonomie"},
		{TimesWord(1), "once"},
		{TimesWord(2), "twice"},
		{TimesWord(3), "3 times"},
		{FormatSize(512), "512 B"},
		{FormatSize(2150), "2.1 KB"},
		{FormatSize(3 << 20), "3.0 MB"},
		{FormatSize(5 << 30), "5.0 GB"},
		{Cell("a|b\nc\r"), `a\|b c `},
		{OneLine(" a\n## b\t c "), "a ## b c"},
		{JoinInts([]int{6, 7, 8}), "6, 7, 8"},
		{JoinInts(nil), ""},
		{Wrap("aa bb cc dd", 5, "  "), "aa bb\n  cc dd"},
		{Wrap("averyverylongword x", 4, ""), "averyverylongword\nx"},
		{string(AppendBlock(nil, "## B\n")), "## B\n"},
		{string(AppendBlock([]byte("no newline"), "## B\n")), "no newline\n\n## B\n"},
		{string(AppendBlock([]byte("a\n"), "## B\n")), "a\n\n## B\n"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

func TestTimestamp(t *testing.T) {
	at := time.Date(2026, 1, 12, 14, 30, 0, 0, time.FixedZone("CET", 3600))
	s := FormatTimestamp(at)
	if s != "2026-01-12T13:30:00Z" {
		t.Fatalf("FormatTimestamp = %q", s)
	}
	back, err := ParseTimestamp(s)
	if err != nil || !back.Equal(at) {
		t.Fatalf("ParseTimestamp(%q) = %v, %v", s, back, err)
	}
	if _, err := ParseTimestamp("2026-01-12 13:30"); err == nil {
		t.Fatal("ParseTimestamp accepted a timestamp without T and Z")
	}
}

func FuzzParseTimestamp(f *testing.F) {
	f.Add("2026-01-12T14:30:00Z")
	f.Add("2026-13-40T25:61:61Z")
	f.Add("2026-01-12T1:30:00Z") // one-digit hour: refused, not read as 01
	f.Fuzz(func(t *testing.T, s string) {
		at, err := ParseTimestamp(s)
		if err != nil {
			return
		}
		if got := FormatTimestamp(at); got != s {
			t.Fatalf("round trip: %q -> %q", s, got)
		}
	})
}
