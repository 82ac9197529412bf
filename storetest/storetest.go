// Package storetest checks store.Store implementations against the Store
// contract, in the spirit of testing/fstest.TestFS: a Store author calls
// TestStore from a test, and every Store refine ships (store/memory,
// store/fs) passes it.
//
// It also provides Faulty, a Store wrapper that fails a chosen call, for
// testing code that must survive a failed commit.
package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/refine-spec/refine/store"
)

// TestStore runs the conformance suite against Stores made by open.
//
// open is called once per subtest and must return a new, empty Store that
// nothing else uses. TestStore never closes a Store: open must register any
// cleanup (closing it, releasing a lock) with t.Cleanup. Run the suite with
// -race: the ConcurrentReaders subtest is meant to be run under the race
// detector.
//
// Beyond the Store interface's own documentation, the suite holds Stores to
// these rules, which the session folder layout implies (keys are file
// paths; see docs/workflow.md#session-folder):
//   - List and Get also reject malformed input with ErrInvalidKey: a List
//     prefix must be empty, a valid key, or a valid key followed by '/'
//     (store.ValidPrefix).
//   - Names whose first segment starts with ".refine", in any letter case,
//     are reserved for a Store's own files: every Store rejects them as keys
//     and as List prefixes, while ".refine" deeper in a key ("x/.refine")
//     or without the dot ("refine.md") is an ordinary key.
//   - A key cannot also be a folder of other keys: with "a" stored, putting
//     "a/b" fails with ErrInvalidKey, and so does putting "a" while "a/b" is
//     stored, judged on the state the whole commit would leave (deleting
//     "a" and putting "a/b" in one commit is fine).
//   - A commit containing any invalid op applies nothing, and a Commit with
//     an already cancelled context returns the context's error and applies
//     nothing; Get and List return the context's error too.
//   - Values are copied in both directions, empty values are values, and a
//     16 MiB value round-trips.
//   - A Store that is a store.Appender (Appends() true) applies OpAppend in
//     order with the commit's other ops, all or nothing; any other Store
//     refuses OpAppend with ErrInvalidKey, applying nothing.
//   - A Store that is a store.Copier (Copies() true) applies OpCopy in
//     order with the commit's other ops, all or nothing, copying what the
//     source holds at that point and failing with ErrNotFound on an absent
//     source; any other Store refuses OpCopy with ErrInvalidKey.
//   - A Store that is both applies commits that mix them in order: a copy
//     reads what appends and copies before it left, bytes that are not
//     text survive both, and keys they create obey the key and folder
//     rule.
func TestStore(t *testing.T, open func(t *testing.T) store.Store) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, s store.Store)
	}{
		{"Empty", testEmpty},
		{"PutGet", testPutGet},
		{"Overwrite", testOverwrite},
		{"Delete", testDelete},
		{"CommitOrder", testCommitOrder},
		{"EmptyCommit", testEmptyCommit},
		{"EmptyValue", testEmptyValue},
		{"ValuesCopied", testValuesCopied},
		{"LargeValue", testLargeValue},
		{"List", testList},
		{"MaxKeyLen", testMaxKeyLen},
		{"InvalidKeys", testInvalidKeys},
		{"InvalidPrefixes", testInvalidPrefixes},
		{"Atomicity", testAtomicity},
		{"KeyFolderConflict", testKeyFolderConflict},
		{"ContextCancelled", testContextCancelled},
		{"ConcurrentReaders", testConcurrentReaders},
		{"Append", testAppend},
		{"Copy", testCopy},
		{"AppendCopyOrder", testAppendCopyOrder},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			if s == nil {
				t.Fatal("open returned a nil Store")
			}
			tc.fn(t, s)
		})
	}
}

func testEmpty(t *testing.T, s store.Store) {
	if keys := list(t, s, ""); len(keys) != 0 {
		t.Errorf("List(%q) on a new store = %q, want no keys", "", keys)
	}
	wantNotFound(t, s, "state.json")
	wantNotFound(t, s, "round_001/engineer.md")
}

func testPutGet(t *testing.T, s store.Store) {
	// Odd but valid keys: every Store must accept the whole key alphabet.
	want := map[string]string{
		"state.json":                       `{"schema": 1}`,
		"round_003/engineer.md":            "# Engineer\n",
		"round_003/attempts/engineer-1.md": "raw\r\nresponse",
		".hidden":                          "dot file",
		"a..b":                             "dots inside a segment",
		"-dash_under.score":                "punctuation",
		"UPPER/lower/0123456789":           "digits",
		"trailing.":                        "dot at the end",
		"x/.refine-notes":                  "reserved names are reserved in the first segment only",
		"refine.md":                        "no leading dot, not reserved",
		".refin":                           "one letter short of reserved",
		".git/x":                           "other dot folders are ordinary",
	}
	var ops []store.Op
	for k, v := range want {
		ops = append(ops, store.Put(k, []byte(v)))
	}
	commit(t, s, ops...)
	if diff := cmp.Diff(want, snapshot(t, s)); diff != "" {
		t.Errorf("store after one commit (-want +got):\n%s", diff)
	}
}

func testOverwrite(t *testing.T, s store.Store) {
	commit(t, s, store.Put("state.json", []byte("old, and longer than the new value")))
	commit(t, s, store.Put("state.json", []byte("new")))
	if got := string(get(t, s, "state.json")); got != "new" {
		t.Errorf("Get after overwrite = %q, want %q", got, "new")
	}
}

func testDelete(t *testing.T, s store.Store) {
	commit(t, s,
		store.Put("keep.md", []byte("k")),
		store.Put("round_001/summary.md", []byte("s")),
	)
	commit(t, s, store.Delete("round_001/summary.md"))
	wantNotFound(t, s, "round_001/summary.md")
	if diff := cmp.Diff([]string{"keep.md"}, list(t, s, "")); diff != "" {
		t.Errorf("List after delete (-want +got):\n%s", diff)
	}
	// Deleting what is not there is not an error, whether it never existed
	// or was just deleted.
	commit(t, s, store.Delete("round_001/summary.md"), store.Delete("never/was.md"))
	if diff := cmp.Diff(map[string]string{"keep.md": "k"}, snapshot(t, s)); diff != "" {
		t.Errorf("store after deleting absent keys (-want +got):\n%s", diff)
	}
}

func testCommitOrder(t *testing.T, s store.Store) {
	// Each case runs on its own key so the cases cannot mask each other.
	tests := []struct {
		name string
		ops  func(k string) []store.Op
		want string // "" = absent
	}{
		{"put then delete", func(k string) []store.Op {
			return []store.Op{store.Put(k, []byte("1")), store.Delete(k)}
		}, ""},
		{"delete then put", func(k string) []store.Op {
			return []store.Op{store.Delete(k), store.Put(k, []byte("2"))}
		}, "2"},
		{"last write wins", func(k string) []store.Op {
			return []store.Op{store.Put(k, []byte("first")), store.Put(k, []byte("second"))}
		}, "second"},
		{"put delete put", func(k string) []store.Op {
			return []store.Op{store.Put(k, []byte("a")), store.Delete(k), store.Put(k, []byte("b"))}
		}, "b"},
	}
	for i, tc := range tests {
		k := fmt.Sprintf("order/case-%d.md", i)
		commit(t, s, store.Put(k, []byte("before")))
		commit(t, s, tc.ops(k)...)
		got, err := s.Get(t.Context(), k)
		switch {
		case tc.want == "" && !errors.Is(err, store.ErrNotFound):
			t.Errorf("%s: Get(%q) = %q, %v; want ErrNotFound", tc.name, k, got, err)
		case tc.want != "" && (err != nil || string(got) != tc.want):
			t.Errorf("%s: Get(%q) = %q, %v; want %q", tc.name, k, got, err, tc.want)
		}
	}
}

func testEmptyCommit(t *testing.T, s store.Store) {
	commit(t, s, store.Put("a", []byte("1")))
	commit(t, s)
	if diff := cmp.Diff(map[string]string{"a": "1"}, snapshot(t, s)); diff != "" {
		t.Errorf("store after an empty commit (-want +got):\n%s", diff)
	}
}

func testEmptyValue(t *testing.T, s store.Store) {
	commit(t, s, store.Put("empty", []byte{}), store.Put("nil", nil))
	for _, k := range []string{"empty", "nil"} {
		got, err := s.Get(t.Context(), k)
		if err != nil || len(got) != 0 {
			t.Errorf("Get(%q) = %q, %v; want an empty value and no error", k, got, err)
		}
	}
	if diff := cmp.Diff([]string{"empty", "nil"}, list(t, s, "")); diff != "" {
		t.Errorf("List with empty values (-want +got):\n%s", diff)
	}
}

func testValuesCopied(t *testing.T, s store.Store) {
	v := []byte("original")
	commit(t, s, store.Put("k", v))
	copy(v, "MUTATED!")
	got := get(t, s, "k")
	if string(got) != "original" {
		t.Fatalf("after mutating the slice passed to Put, Get = %q, want %q", got, "original")
	}
	copy(got, "MUTATED!")
	if again := get(t, s, "k"); string(again) != "original" {
		t.Errorf("after mutating the slice Get returned, Get = %q, want %q", again, "original")
	}
}

func testLargeValue(t *testing.T, s store.Store) {
	const size = 16 << 20
	v := make([]byte, size)
	for i := range v {
		// A pattern that is not periodic in any power of two, so a short
		// write or a misplaced chunk shows up.
		v[i] = byte(i*7 + i/251)
	}
	commit(t, s, store.Put("big/blob.bin", v))
	got := get(t, s, "big/blob.bin")
	if !bytes.Equal(got, v) {
		i := 0
		for i < len(got) && i < len(v) && got[i] == v[i] {
			i++
		}
		t.Errorf("16 MiB value did not round-trip: got %d bytes, want %d; first difference at byte %d", len(got), len(v), i)
	}
}

func testList(t *testing.T, s store.Store) {
	// Names chosen so that byte order differs from a naive directory walk:
	// "a-c" and "a.md" sort before "a/b" because '-' and '.' are below '/'.
	keys := []string{
		"state.json", "a/c/d", "a/b", "a.md", "a-c", "Z", "_u", "b",
		"round_003/engineer.md", "round_003/attempts/engineer-1.md", "round_010/x",
	}
	var ops []store.Op
	for _, k := range keys {
		ops = append(ops, store.Put(k, []byte(k)))
	}
	commit(t, s, ops...)
	tests := []struct {
		prefix string
		want   []string
	}{
		{"", []string{"Z", "_u", "a-c", "a.md", "a/b", "a/c/d", "b",
			"round_003/attempts/engineer-1.md", "round_003/engineer.md", "round_010/x", "state.json"}},
		{"a", []string{"a-c", "a.md", "a/b", "a/c/d"}},
		{"a/", []string{"a/b", "a/c/d"}},
		{"a/c", []string{"a/c/d"}},
		{"a/c/d", []string{"a/c/d"}},
		{"round_0", []string{"round_003/attempts/engineer-1.md", "round_003/engineer.md", "round_010/x"}},
		{"round_003/", []string{"round_003/attempts/engineer-1.md", "round_003/engineer.md"}},
		{"round_003/attempts/", []string{"round_003/attempts/engineer-1.md"}},
		{"state.json", []string{"state.json"}},
		{"state.json/", nil},
		{"nope", nil},
		{"A", nil}, // prefixes are case-sensitive
		{"z", nil},
	}
	for _, tc := range tests {
		got := list(t, s, tc.prefix)
		if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("List(%q) (-want +got):\n%s", tc.prefix, diff)
		}
	}
}

func testMaxKeyLen(t *testing.T, s store.Store) {
	flat := "k/" + strings.Repeat("x", store.MaxKeyLen-2)
	deep := strings.Repeat("d/", 100) + strings.Repeat("y", store.MaxKeyLen-200)
	for _, k := range []string{flat, deep} {
		if len(k) != store.MaxKeyLen {
			t.Fatalf("test bug: key is %d bytes, want %d", len(k), store.MaxKeyLen)
		}
		commit(t, s, store.Put(k, []byte("max")))
		if got := get(t, s, k); string(got) != "max" {
			t.Errorf("Get(%d-byte key) = %q, want %q", len(k), got, "max")
		}
	}
}

// hostileKeys are keys every Store must reject: path escapes, absolute and
// Windows paths, bytes outside [A-Za-z0-9._/-], and length or shape errors.
var hostileKeys = []struct{ name, key string }{
	{"empty", ""},
	{"dot", "."},
	{"dotdot", ".."},
	{"parent escape", "../x"},
	{"inner dotdot", "a/../b"},
	{"trailing dotdot", "a/.."},
	{"inner dot", "a/./b"},
	{"leading dot segment", "./a"},
	{"absolute", "/etc/passwd"},
	{"leading slash", "/a"},
	{"trailing slash", "a/"},
	{"only slash", "/"},
	{"double slash", "a//b"},
	{"backslash", `a\b`},
	{"backslash escape", `..\x`},
	{"windows drive", `C:\x`},
	{"colon", "C:/x"},
	{"NUL byte", "a\x00b"},
	{"space", "a b"},
	{"newline", "a\nb"},
	{"tab", "a\tb"},
	{"non-ASCII", "caf\u00e9"},
	{"256 bytes", strings.Repeat("a", store.MaxKeyLen+1)},
	{"256 bytes nested", strings.Repeat("a/", 127) + "ab"},
	{"reserved name", ".refine"},
	{"reserved lock", ".refine.lock"},
	{"reserved log record", ".refine-wal/00000000000000000001.rec"},
	{"reserved prefix of a longer name", ".refinery/notes.md"},
	{"reserved, upper case", ".REFINE-wal"},
	{"reserved, mixed case", ".Refine.lock/x"},
}

func testInvalidKeys(t *testing.T, s store.Store) {
	commit(t, s, store.Put("seed", []byte("seed")))
	ctx := t.Context()
	for _, tc := range hostileKeys {
		if _, err := s.Get(ctx, tc.key); !errors.Is(err, store.ErrInvalidKey) {
			t.Errorf("%s: Get(%q) error = %v, want ErrInvalidKey", tc.name, tc.key, err)
		}
		if err := s.Commit(ctx, store.Put(tc.key, []byte("x"))); !errors.Is(err, store.ErrInvalidKey) {
			t.Errorf("%s: Commit(put %q) error = %v, want ErrInvalidKey", tc.name, tc.key, err)
		}
		if err := s.Commit(ctx, store.Delete(tc.key)); !errors.Is(err, store.ErrInvalidKey) {
			t.Errorf("%s: Commit(delete %q) error = %v, want ErrInvalidKey", tc.name, tc.key, err)
		}
	}
	if diff := cmp.Diff(map[string]string{"seed": "seed"}, snapshot(t, s)); diff != "" {
		t.Errorf("store after rejected commits (-want +got):\n%s", diff)
	}
}

func testInvalidPrefixes(t *testing.T, s store.Store) {
	commit(t, s, store.Put("a/b", []byte("1")))
	ctx := t.Context()
	for _, p := range []string{
		"..", "../", "../x", "a/..", "a/../", "a/../b", ".", "./", "a/.",
		"/", "/a", "/etc/passwd", "a//", `a\`, `..\`, "a\x00", "a b", "caf\u00e9",
		strings.Repeat("a", store.MaxKeyLen+1),
		// Reserved for a Store's own files, so no key can start with them.
		".refine", ".refine/", ".refine-wal/", ".refine.lock", ".REFINE", ".Refine-wal/x/",
	} {
		if keys, err := s.List(ctx, p); !errors.Is(err, store.ErrInvalidKey) {
			t.Errorf("List(%q) = %q, %v; want ErrInvalidKey", p, keys, err)
		}
	}
	for _, p := range []string{"", "a", "a/", "a/b", "a/b/", "a.", "x-", "round_0", ".r", ".refin", "x/.refine", "refine"} {
		if _, err := s.List(ctx, p); err != nil {
			t.Errorf("List(%q) error = %v, want none (a valid prefix)", p, err)
		}
	}
}

func testAtomicity(t *testing.T, s store.Store) {
	seed := map[string]string{"keep.md": "keep", "round_001/engineer.md": "v1"}
	commit(t, s, store.Put("keep.md", []byte("keep")), store.Put("round_001/engineer.md", []byte("v1")))
	tests := []struct {
		name string
		ops  []store.Op
	}{
		{"invalid key in the middle", []store.Op{
			store.Put("round_001/engineer.md", []byte("v2")),
			store.Put("../escape", []byte("x")),
			store.Put("new.md", []byte("n")),
		}},
		{"invalid key last", []store.Op{
			store.Delete("keep.md"),
			store.Put("new.md", []byte("n")),
			store.Delete("/etc/passwd"),
		}},
		{"invalid key first", []store.Op{
			store.Put("a b", []byte("x")),
			store.Delete("round_001/engineer.md"),
		}},
		{"unknown op kind", []store.Op{
			store.Put("new.md", []byte("n")),
			{Kind: store.OpKind(99), Key: "keep.md"},
		}},
		{"zero op", []store.Op{
			store.Delete("keep.md"),
			{},
		}},
	}
	for _, tc := range tests {
		if err := s.Commit(t.Context(), tc.ops...); !errors.Is(err, store.ErrInvalidKey) {
			t.Errorf("%s: Commit(%s) error = %v, want ErrInvalidKey", tc.name, describe(tc.ops), err)
		}
		if diff := cmp.Diff(seed, snapshot(t, s)); diff != "" {
			t.Errorf("%s: a rejected commit changed the store (-want +got):\n%s", tc.name, diff)
		}
	}
}

func testKeyFolderConflict(t *testing.T, s store.Store) {
	commit(t, s, store.Put("doc", []byte("file")), store.Put("dir/x", []byte("in folder")))
	want := map[string]string{"doc": "file", "dir/x": "in folder"}
	rejected := []struct {
		name string
		ops  []store.Op
	}{
		{"under a stored key", []store.Op{store.Put("doc/child", []byte("c"))}},
		{"deep under a stored key", []store.Op{store.Put("doc/a/b", []byte("c"))}},
		{"over a folder of keys", []store.Op{store.Put("dir", []byte("c"))}},
		{"key then child in one commit", []store.Op{store.Put("n", []byte("1")), store.Put("n/m", []byte("2"))}},
		{"child then key in one commit", []store.Op{store.Put("n/m", []byte("2")), store.Put("n", []byte("1"))}},
		{"folder emptied, not of every key", []store.Op{store.Delete("dir/other"), store.Put("dir", []byte("c"))}},
	}
	for _, tc := range rejected {
		if err := s.Commit(t.Context(), tc.ops...); !errors.Is(err, store.ErrInvalidKey) {
			t.Errorf("%s: Commit(%s) error = %v, want ErrInvalidKey", tc.name, describe(tc.ops), err)
		}
		if diff := cmp.Diff(want, snapshot(t, s)); diff != "" {
			t.Errorf("%s: a rejected commit changed the store (-want +got):\n%s", tc.name, diff)
		}
	}
	// The check is on the state a commit leaves, so replacing a key by a
	// folder (or the reverse) in one commit is fine.
	commit(t, s, store.Delete("doc"), store.Put("doc/child", []byte("c")))
	commit(t, s, store.Delete("dir/x"), store.Put("dir", []byte("now a key")))
	want = map[string]string{"doc/child": "c", "dir": "now a key"}
	if diff := cmp.Diff(want, snapshot(t, s)); diff != "" {
		t.Errorf("store after swapping keys and folders (-want +got):\n%s", diff)
	}
}

func testContextCancelled(t *testing.T, s store.Store) {
	commit(t, s, store.Put("seed", []byte("seed")))
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	expired, cancel2 := context.WithDeadline(t.Context(), time.Unix(0, 0))
	defer cancel2()
	tests := []struct {
		name string
		ctx  context.Context
		want error
	}{
		{"cancelled", cancelled, context.Canceled},
		{"deadline exceeded", expired, context.DeadlineExceeded},
	}
	for _, tc := range tests {
		err := s.Commit(tc.ctx, store.Put("new.md", []byte("n")), store.Delete("seed"))
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: Commit error = %v, want %v", tc.name, err, tc.want)
		}
		if _, err := s.Get(tc.ctx, "seed"); !errors.Is(err, tc.want) {
			t.Errorf("%s: Get error = %v, want %v", tc.name, err, tc.want)
		}
		if _, err := s.List(tc.ctx, ""); !errors.Is(err, tc.want) {
			t.Errorf("%s: List error = %v, want %v", tc.name, err, tc.want)
		}
		if diff := cmp.Diff(map[string]string{"seed": "seed"}, snapshot(t, s)); diff != "" {
			t.Errorf("%s: Commit with a done context changed the store (-want +got):\n%s", tc.name, diff)
		}
	}
}

// testConcurrentReaders has one writer commit pairs of keys that always
// hold the same value, while readers check they never see a mix.
//
// Two Gets are not a snapshot, so the check uses monotonicity: values only
// grow, so reading x and then y must give y >= x. A store that applies a
// commit's ops one at a time lets a reader see x new and y old for one
// order or the other, and readers alternate the order. For List, which is
// one call, the two keys added and removed together must be listed both or
// neither.
func testConcurrentReaders(t *testing.T, s store.Store) {
	const (
		commits = 50
		readers = 4
		keyA    = "pair/a.md"
		keyB    = "pair/b.md"
		extra1  = "pair/extra/c1.md"
		extra2  = "pair/extra/c2.md"
	)
	ctx := t.Context()
	commit(t, s, store.Put(keyA, []byte("0")), store.Put(keyB, []byte("0")))

	done := make(chan struct{})
	var ready, wg sync.WaitGroup
	ready.Add(readers)
	reads := make([]int, readers)
	for r := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// The writer starts once every reader has read once, so the
			// reads overlap the commits; a failing reader must still
			// release it.
			started := sync.OnceFunc(ready.Done)
			defer started()
			first, second := keyA, keyB
			if r%2 == 1 {
				first, second = keyB, keyA
			}
			for n := 1; ; n++ {
				if err := readPair(ctx, s, first, second); err != nil {
					t.Errorf("reader %d: %v", r, err)
					return
				}
				first, second = second, first
				keys, err := s.List(ctx, "pair/extra/")
				if err != nil {
					t.Errorf("reader %d: List: %v", r, err)
					return
				}
				if len(keys) != 0 && !cmp.Equal(keys, []string{extra1, extra2}) {
					t.Errorf("reader %d: List(%q) = %q, want both keys of a commit or neither", r, "pair/extra/", keys)
					return
				}
				started()
				select {
				case <-done:
					reads[r] = n
					return
				default:
				}
			}
		}()
	}

	ready.Wait()
	for i := 1; i <= commits; i++ {
		v := []byte(strconv.Itoa(i))
		ops := []store.Op{store.Put(keyA, v), store.Put(keyB, v)}
		if i%2 == 0 {
			ops = append(ops, store.Put(extra1, v), store.Put(extra2, v))
		} else {
			ops = append(ops, store.Delete(extra1), store.Delete(extra2))
		}
		if err := s.Commit(ctx, ops...); err != nil {
			t.Errorf("writer: commit %d: %v", i, err)
			break
		}
	}
	close(done)
	wg.Wait()
	t.Logf("reads per reader during %d commits: %v", commits, reads)
	want := strconv.Itoa(commits)
	if got := string(get(t, s, keyA)); got != want {
		t.Errorf("after the writer finished, Get(%q) = %q, want %q", keyA, got, want)
	}
}

// readPair reads first and then second and reports a mix of commits.
func readPair(ctx context.Context, s store.Store, first, second string) error {
	v1, err := readInt(ctx, s, first)
	if err != nil {
		return err
	}
	v2, err := readInt(ctx, s, second)
	if err != nil {
		return err
	}
	if v2 < v1 {
		return fmt.Errorf("read %s = %d and then %s = %d: saw part of a commit (the two keys are always committed together)", first, v1, second, v2)
	}
	return nil
}

func readInt(ctx context.Context, s store.Store, key string) (int, error) {
	b, err := s.Get(ctx, key)
	if err != nil {
		return 0, fmt.Errorf("Get(%q): %w", key, err)
	}
	n, err := strconv.Atoi(string(b))
	if err != nil {
		return 0, fmt.Errorf("Get(%q) = %q: a torn value: %w", key, b, err)
	}
	return n, nil
}

func commit(t *testing.T, s store.Store, ops ...store.Op) {
	t.Helper()
	if err := s.Commit(t.Context(), ops...); err != nil {
		t.Fatalf("Commit(%s): %v", describe(ops), err)
	}
}

func get(t *testing.T, s store.Store, key string) []byte {
	t.Helper()
	b, err := s.Get(t.Context(), key)
	if err != nil {
		t.Fatalf("Get(%q): %v", key, err)
	}
	return b
}

func list(t *testing.T, s store.Store, prefix string) []string {
	t.Helper()
	keys, err := s.List(t.Context(), prefix)
	if err != nil {
		t.Fatalf("List(%q): %v", prefix, err)
	}
	return keys
}

func wantNotFound(t *testing.T, s store.Store, key string) {
	t.Helper()
	if b, err := s.Get(t.Context(), key); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get(%q) = %q, %v; want ErrNotFound", key, b, err)
	}
}

// snapshot reads the whole store, checking that List is sorted and that
// every listed key can be read.
func snapshot(t *testing.T, s store.Store) map[string]string {
	t.Helper()
	keys := list(t, s, "")
	for i := 1; i < len(keys); i++ {
		if keys[i-1] >= keys[i] {
			t.Errorf("List(%q) is not sorted or has duplicates: %q before %q", "", keys[i-1], keys[i])
		}
	}
	m := make(map[string]string, len(keys))
	for _, k := range keys {
		m[k] = string(get(t, s, k))
	}
	return m
}

// describe renders ops for failure messages without dumping values.
func describe(ops []store.Op) string {
	if len(ops) == 0 {
		return "no ops"
	}
	parts := make([]string, len(ops))
	for i, op := range ops {
		switch op.Kind {
		case store.OpPut:
			parts[i] = fmt.Sprintf("put %q (%d bytes)", op.Key, len(op.Value))
		case store.OpDelete:
			parts[i] = fmt.Sprintf("delete %q", op.Key)
		case store.OpAppend:
			parts[i] = fmt.Sprintf("append %q (%d bytes)", op.Key, len(op.Value))
		case store.OpCopy:
			parts[i] = fmt.Sprintf("copy %q to %q", op.From, op.Key)
		default:
			parts[i] = fmt.Sprintf("op kind %d %q", op.Kind, op.Key)
		}
	}
	return strings.Join(parts, ", ")
}
