package rollback

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"
)

// t0 is the spec's rollback timestamp, 2026-01-12T14:30:00Z.
var t0 = time.Date(2026, 1, 12, 14, 30, 0, 0, time.UTC)

// store is a test double for the engine's Store: a map with atomic apply.
type store map[string][]byte

func (s store) keys() []string { return slices.Sorted(maps.Keys(s)) }

func (s store) apply(ops []Op) {
	for _, op := range ops {
		if op.Delete {
			delete(s, op.Key)
		} else {
			s[op.Key] = op.Value
		}
	}
}

func (s store) read(t *testing.T, keys []string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, k := range keys {
		v, ok := s[k]
		if !ok {
			t.Fatalf("store has no %s", k)
		}
		out[k] = v
	}
	return out
}

// rotate applies a backup rotation at the start of round n, as the engine does.
func (s store) rotate(n int) {
	r := Rotate(n, DefaultRetention, s.keys())
	for _, k := range r.Delete {
		delete(s, k)
	}
	for _, c := range r.Copies {
		s[c.To] = slices.Clone(s[c.From])
	}
}

// rawEntry is one member of a hand-made tar for the reader's safety tests.
type rawEntry struct {
	hdr  tar.Header
	data []byte
}

func file(name, content string) rawEntry {
	return rawEntry{hdr: tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o600, Size: int64(len(content)), ModTime: t0}, data: []byte(content)}
}

func dir(name string) rawEntry {
	return rawEntry{hdr: tar.Header{Name: name, Typeflag: tar.TypeDir, Mode: 0o700, ModTime: t0}}
}

// metaEntry is a valid metadata file for round 5.
func metaEntry(t testing.TB) rawEntry {
	t.Helper()
	b, err := encodeMetadata(Metadata{OriginalRound: 5, RollbackTimestamp: t0, Reason: "r", AttemptNumber: 1, TargetRound: 4})
	if err != nil {
		t.Fatal(err)
	}
	return file("round_005_rolled_back/"+MetadataName, string(b))
}

func tarGz(t testing.TB, entries ...rawEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		h := e.hdr
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(e.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// session builds a store as it is at the end of round `current`: every
// round ran with the rotation at its start, and each round folder holds an
// engineer output, a reviewer output and a journaled attempt.
func session(t *testing.T, current int) store {
	t.Helper()
	s := store{StatusKey: []byte("# Status\n\nround 0\n"), DecisionsKey: []byte("# Decisions\n"), StateKey: []byte(`{"schema":1,"round":0}`)}
	for n := 1; n <= current; n++ {
		s.rotate(n)
		p := RoundPrefix(n)
		s[p+"engineer.md"] = []byte(fmt.Sprintf("## Gap Resolution: GAP-FLOW-00%d\n\nround %d output\n", n%10, n))
		s[p+"reviewer.md"] = []byte(fmt.Sprintf("## Review: round %d\n\nNO_ISSUES_FOUND\n", n))
		s[p+"attempts/engineer-1.md"] = []byte(fmt.Sprintf("raw response of round %d\n", n))
		s[StatusKey] = []byte(fmt.Sprintf("# Status\n\nround %d\n", n))
		s[DecisionsKey] = []byte(fmt.Sprintf("# Decisions\n\nthrough round %d\n", n))
		s[StateKey] = []byte(fmt.Sprintf(`{"schema":1,"round":%d}`, n))
	}
	return s
}
