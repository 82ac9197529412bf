package journal

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Every single-bit flip of a record is refused, or leaves the record
// as it was (a flip in its checksum member's name); a record written
// before checksums (schema 2) still parses.
func TestRecordChecksum(t *testing.T) {
	r := Record{Seq: 42, Ops: []Op{
		{Op: "set", Path: []string{"round"}, Value: json.RawMessage(`7`)},
		{Op: "append", Path: []string{"issues"}, Value: json.RawMessage(`[{"id":"ISSUE-R7-001","text":"é \u202e"}]`)},
		{Op: "delete", Path: []string{"current"}},
	}}
	enc, err := r.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(enc, []byte(`,"crc32c":"`)) || !json.Valid(enc) {
		t.Fatalf("record %s: want valid JSON with a crc32c member", enc)
	}
	got, err := ParseRecord(enc)
	if err != nil || !cmp.Equal(r, got) {
		t.Fatalf("ParseRecord(Marshal) = %+v, %v", got, err)
	}
	refused := 0
	for i := range len(enc) * 8 {
		b := bytes.Clone(enc)
		b[i/8] ^= 1 << (i % 8)
		got, err := ParseRecord(b)
		switch {
		case err != nil:
			refused++
		case !cmp.Equal(r, got):
			t.Errorf("flip of bit %d of byte %d (%q) parsed to a different record: %+v", i%8, i/8, enc[i/8], got)
		}
	}
	if refused == 0 {
		t.Errorf("no flip was refused")
	}
	b := bytes.Clone(enc)
	b[bytes.Index(b, []byte(`"value":7`))+len(`"value":`)] = '6' // still JSON: only the checksum tells
	if _, err := ParseRecord(b); !errors.Is(err, ErrChecksum) {
		t.Errorf("a changed value: %v, want ErrChecksum", err)
	}
	legacy := []byte(`{"seq":3,"ops":[{"op":"set","path":["a"],"value":1}]}`)
	if got, err := ParseRecord(legacy); err != nil || got.Seq != 3 || len(got.Ops) != 1 {
		t.Errorf("a record without a checksum: %+v, %v", got, err)
	}
}
