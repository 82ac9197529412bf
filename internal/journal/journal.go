// Package journal turns successive versions of a JSON object into small
// records of what changed, and rebuilds the object from a snapshot and the
// records after it. The session state is such an object: a durable point
// commits a record (a few hundred bytes: the fields that changed, the
// entries appended to a log) instead of the whole state, and the state is
// rewritten in full only now and then.
//
// A record names top-level fields. A field whose JSON value is an array
// that only grew at its end is recorded as the appended elements; any
// other changed field is recorded whole; a field that disappeared is
// recorded as deleted. The package does no I/O.
package journal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
)

// Fields is a JSON object split into its top-level fields, each as raw
// JSON.
type Fields map[string]json.RawMessage

// Split marshals v (anything encoding/json makes an object of) and splits
// it into its top-level fields.
func Split(v any) (Fields, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return Parse(b)
}

// Parse splits the JSON object b into its top-level fields.
func Parse(b []byte) (Fields, error) {
	var f Fields
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("journal: not a JSON object: %w", err)
	}
	if f == nil {
		return nil, errors.New("journal: not a JSON object: null")
	}
	return f, nil
}

// Join marshals the fields back into one JSON object, keys sorted.
func (f Fields) Join() []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range slices.Sorted(maps.Keys(f)) {
		if i > 0 {
			b.WriteByte(',')
		}
		key, _ := json.Marshal(k)
		b.Write(key)
		b.WriteByte(':')
		b.Write(f[k])
	}
	b.WriteByte('}')
	return b.Bytes()
}

// Size is the number of bytes Join would produce, without producing them.
func (f Fields) Size() int {
	n := 2
	for k, v := range f {
		n += len(k) + 3 + len(v) + 1
	}
	return n
}

// Record is what changed between two versions of an object.
type Record struct {
	// Seq numbers the record; records apply in Seq order.
	Seq int64 `json:"seq"`
	// Set holds fields that are new or changed, whole.
	Set Fields `json:"set,omitempty"`
	// Append holds, for array fields that only grew at the end, the new
	// elements as a JSON array.
	Append Fields `json:"append,omitempty"`
	// Delete names fields that are gone.
	Delete []string `json:"delete,omitempty"`
}

// Empty reports whether the record changes nothing.
func (r Record) Empty() bool { return len(r.Set) == 0 && len(r.Append) == 0 && len(r.Delete) == 0 }

// Diff returns the record that turns old into cur (Seq left zero).
func Diff(old, cur Fields) Record {
	var r Record
	for k, v := range cur {
		o, ok := old[k]
		switch {
		case ok && bytes.Equal(o, v):
		case ok:
			if tail, ok := appended(o, v); ok {
				if r.Append == nil {
					r.Append = Fields{}
				}
				r.Append[k] = tail
				continue
			}
			fallthrough
		default:
			if r.Set == nil {
				r.Set = Fields{}
			}
			r.Set[k] = v
		}
	}
	for k := range old {
		if _, ok := cur[k]; !ok {
			r.Delete = append(r.Delete, k)
		}
	}
	slices.Sort(r.Delete)
	return r
}

// appended reports whether cur is the JSON array old with elements added
// at the end, and returns those elements as an array. Both are compact
// encoding/json output, so elements are separated by a bare comma.
func appended(old, cur []byte) (json.RawMessage, bool) {
	if len(old) < 3 || len(cur) <= len(old) || old[0] != '[' || old[len(old)-1] != ']' || cur[len(cur)-1] != ']' {
		return nil, false // an empty old array ("[]") is simply set
	}
	prefix := old[:len(old)-1]
	if !bytes.HasPrefix(cur, prefix) || cur[len(prefix)] != ',' {
		return nil, false
	}
	tail := make([]byte, 0, len(cur)-len(prefix))
	tail = append(tail, '[')
	tail = append(tail, cur[len(prefix)+1:]...)
	if !json.Valid(tail) {
		// The comma sat inside the last old element (a string); not an append.
		return nil, false
	}
	return tail, true
}

// Apply changes f as r says. It fails, changing nothing, when an append
// names a field that is not an array.
func (r Record) Apply(f Fields) error {
	grown := make(Fields, len(r.Append))
	for k, tail := range r.Append {
		cur, ok := f[k]
		switch {
		case !ok || bytes.Equal(bytes.TrimSpace(cur), []byte("null")):
			grown[k] = tail
		case len(cur) >= 2 && cur[0] == '[' && cur[len(cur)-1] == ']' && len(tail) >= 2 && tail[0] == '[':
			inner := tail[1:]
			var b []byte
			if bytes.Equal(bytes.TrimSpace(cur), []byte("[]")) {
				b = append([]byte{'['}, inner...)
			} else {
				b = make([]byte, 0, len(cur)+len(inner))
				b = append(b, cur[:len(cur)-1]...)
				b = append(b, ',')
				b = append(b, inner...)
			}
			grown[k] = b
		default:
			return fmt.Errorf("journal: record %d appends to %q, which is not an array", r.Seq, k)
		}
	}
	for _, k := range r.Delete {
		delete(f, k)
	}
	maps.Copy(f, r.Set)
	maps.Copy(f, grown)
	return nil
}

// Marshal encodes the record.
func (r Record) Marshal() ([]byte, error) { return json.Marshal(r) }

// ParseRecord decodes a record written by Marshal.
func ParseRecord(b []byte) (Record, error) {
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return Record{}, fmt.Errorf("journal: record: %w", err)
	}
	return r, nil
}
