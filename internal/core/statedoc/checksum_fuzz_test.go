package statedoc

import (
	"bytes"
	"errors"
	"testing"

	"github.com/refine-spec/refine/store"
)

// FuzzOpenDoc: a sealed document opens to what was sealed; any bytes
// either open to a document whose checksum holds, read as a legacy or
// incomplete one, or are refused as corrupt; never a panic.
func FuzzOpenDoc(f *testing.F) {
	f.Add([]byte(`{"schema":3,"round":2}`), uint(5), "state.json")
	f.Add([]byte(`{"schema":3,"journal_seq":7,"issues":[1,2]}`), uint(20), "snapshots/state_0000000007.json")
	f.Add([]byte(`{}`), uint(0), "state.json")
	f.Fuzz(func(t *testing.T, doc []byte, flip uint, key string) {
		if len(doc) < 2 || doc[0] != '{' || doc[len(doc)-1] != '}' {
			return
		}
		sealed := SealDoc(doc)
		got, ok, err := OpenDoc(key, sealed)
		if err != nil || !ok || !bytes.Equal(got, doc) {
			t.Fatalf("openDoc(sealDoc(%q)) = %q, %v, %v", doc, got, ok, err)
		}
		damaged := bytes.Clone(sealed)
		i := int(flip % uint(len(damaged)*8))
		damaged[i/8] ^= 1 << (i % 8)
		got, ok, err = OpenDoc(key, damaged)
		switch {
		case err != nil && !errors.Is(err, store.ErrCorrupt):
			t.Fatalf("flip %d: %v, want ErrCorrupt", i, err)
		case err == nil && ok && !bytes.Equal(got, doc) && bytes.HasPrefix(damaged, []byte(SealPrefix)):
			t.Fatalf("flip %d of %q opened to %q", i, sealed, got)
		}
	})
}
