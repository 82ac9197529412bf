// Package journal turns successive versions of a JSON document into small
// records of what changed, and rebuilds the document from a snapshot and
// the records after it. The session state is such a document: a durable
// point commits a record (the values that changed, the entries appended to
// a log) instead of the whole state, which is rewritten in full only now
// and then.
//
// A record is a list of operations on paths into the document: set a value,
// append elements to an array, delete an object member. Diff descends into
// objects and arrays that changed, a few levels deep, so that one changed
// gap in a list of five hundred costs one gap's bytes, and a log that grew
// costs only its new entries. Rebuilding (Doc) keeps the document's
// top-level members apart and splices a nested change into the bytes it
// replaces, so replaying records costs about their size, not the
// document's size per record. The package does no I/O.
package journal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"maps"
	"slices"
	"strconv"
)

// maxDepth bounds how deep Diff descends before recording a value whole.
const maxDepth = 6

// Op is one change: Set replaces (or adds) the value at Path, Append adds
// the elements of the array Value to the array at Path, Delete removes the
// object member at Path. A path step is an object key or, for arrays, a
// decimal index.
type Op struct {
	Op    string          `json:"op"` // "set", "append" or "delete"
	Path  []string        `json:"path"`
	Value json.RawMessage `json:"value,omitempty"`
}

// Record is what changed between two versions of a document.
type Record struct {
	// Seq numbers the record; records apply in Seq order.
	Seq int64 `json:"seq"`
	Ops []Op  `json:"ops"`
}

// Empty reports whether the record changes nothing.
func (r Record) Empty() bool { return len(r.Ops) == 0 }

// Marshal encodes the record, with its CRC-32C as the last member
// ("crc32c", over the encoding without it), so that ParseRecord refuses a
// damaged record instead of applying it. The values are written as they
// are: they must be valid JSON, as Diff's are (it takes them from
// json.Marshal output), and encoding/json's re-validation of every raw
// value, a tenth of a durable point's work, is skipped. ParseRecord
// validates on reading.
func (r Record) Marshal() ([]byte, error) {
	b := r.marshalBody()
	sum := crc32.Checksum(b, castagnoli)
	b = append(b[:len(b)-1], crcKey...)
	b = fmt.Appendf(b, `%08x"}`, sum)
	return b, nil
}

// crcKey starts a record's checksum member.
const crcKey = `,"crc32c":"`

// castagnoli is the CRC-32C table.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrChecksum marks a record whose checksum does not match its content.
var ErrChecksum = errors.New("journal: record checksum mismatch")

// marshalBody encodes the record without its checksum.
func (r Record) marshalBody() []byte {
	b := make([]byte, 0, 64+r.size())
	b = append(b, `{"seq":`...)
	b = strconv.AppendInt(b, r.Seq, 10)
	b = append(b, `,"ops":[`...)
	for i, op := range r.Ops {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"op":`...)
		b = appendString(b, op.Op)
		b = append(b, `,"path":[`...)
		for j, p := range op.Path {
			if j > 0 {
				b = append(b, ',')
			}
			b = appendString(b, p)
		}
		b = append(b, ']')
		if len(op.Value) > 0 {
			b = append(b, `,"value":`...)
			b = append(b, op.Value...)
		}
		b = append(b, '}')
	}
	return append(b, "]}"...)
}

// size estimates the encoded size.
func (r Record) size() int {
	n := 0
	for _, op := range r.Ops {
		n += 32 + len(op.Value)
		for _, p := range op.Path {
			n += len(p) + 3
		}
	}
	return n
}

// appendString appends s as a JSON string.
func appendString(b []byte, s string) []byte {
	plain := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			plain = false
			break
		}
	}
	if plain {
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	}
	q, _ := json.Marshal(s) // a string always encodes
	return append(b, q...)
}

// ParseRecord decodes a record written by Marshal, refusing one whose
// checksum does not match (an error wrapping ErrChecksum). A record
// without a checksum, as refine wrote before schema 3, is read as it is.
func ParseRecord(b []byte) (Record, error) {
	if n := len(b) - len(crcKey) - 10; n > 0 && string(b[n:n+len(crcKey)]) == crcKey && string(b[len(b)-2:]) == `"}` {
		want, err := strconv.ParseUint(string(b[n+len(crcKey):len(b)-2]), 16, 32)
		if err == nil {
			body := append(b[:n:n], '}')
			if got := crc32.Checksum(body, castagnoli); got != uint32(want) {
				return Record{}, fmt.Errorf("%w (crc32c %08x, the record says %08x)", ErrChecksum, got, want)
			}
			b = body
		}
	}
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return Record{}, fmt.Errorf("journal: record: %w", err)
	}
	for _, op := range r.Ops {
		switch op.Op {
		case "set", "append", "delete":
		default:
			return Record{}, fmt.Errorf("journal: record %d: unknown op %q", r.Seq, op.Op)
		}
		if op.Op != "delete" && len(op.Value) == 0 {
			return Record{}, fmt.Errorf("journal: record %d: %s without a value", r.Seq, op.Op)
		}
		if len(op.Path) == 0 && op.Op == "delete" {
			return Record{}, fmt.Errorf("journal: record %d: %s at the document root", r.Seq, op.Op)
		}
	}
	return r, nil
}

// Diff returns the operations that turn the JSON document old into cur.
// Both must be compact encoding/json output (as json.Marshal writes).
func Diff(old, cur []byte) []Op {
	var ops []Op
	diff(&ops, nil, old, cur, 0)
	return ops
}

// Version is a document with its top-level members split out. A writer
// that diffs each version against the one before keeps the last Version,
// so that every version is scanned once at the top level, not twice.
type Version struct {
	doc  []byte
	keys [][]byte // raw, as members returns them
	vals [][]byte
	subs []*Split // the writer's split of each value, or nil; nil when none has one
	ok   bool     // doc is an object split into keys and vals
	// joined, when not nil, is how to build doc (nil then): the document
	// is only needed whole now and then (a snapshot), and joining it at
	// every durable point copied a long session's whole state.
	joined *joinedMembers
}

// joinedMembers is an object and members to append to it.
type joinedMembers struct {
	base []byte
	keys []string
	vals [][]byte
}

// bytes joins the document.
func (j *joinedMembers) bytes() []byte {
	n := len(j.base)
	for i, k := range j.keys {
		n += len(k) + len(j.vals[i]) + 4 // ,"k":
	}
	doc := make([]byte, 0, n)
	doc = append(doc, j.base[:len(j.base)-1]...)
	for i, k := range j.keys {
		if len(doc) > 1 {
			doc = append(doc, ',')
		}
		doc = append(doc, '"')
		doc = append(doc, k...)
		doc = append(doc, '"', ':')
		doc = append(doc, j.vals[i]...)
	}
	return append(doc, '}')
}

// Split is a JSON value its writer has split already, so that a diff
// need not scan it: an object's members (Keys raw, as they appear
// between the quotes, and Vals) or an array's elements (Keys nil). Subs,
// nil or parallel to Vals, holds the split of a member or element the
// writer has (nil where it has none). Every byte slice must be exactly
// the bytes of that member, key or element in the value's encoding; the
// diff trusts it (a writer that reuses encodings of unchanged parts
// keeps them apart anyway).
type Split struct {
	Keys, Vals [][]byte
	Subs       []*Split
}

func (s *Split) sub(i int) *Split {
	if s == nil || i >= len(s.Subs) {
		return nil
	}
	return s.Subs[i]
}

// NewVersion splits doc, compact encoding/json output, at the top level.
func NewVersion(doc []byte) Version {
	v := Version{doc: doc}
	if len(doc) > 0 && doc[0] == '{' {
		keys, vals, err := members(doc)
		v.keys, v.vals, v.ok = keys, vals, err == nil
	}
	return v
}

// Bytes returns the document.
// For a version joined by AppendMembers, each call joins it again.
func (v Version) Bytes() []byte {
	if v.joined != nil {
		return v.joined.bytes()
	}
	return v.doc
}

// DiffVersions is Diff(old.Bytes(), cur.Bytes()), without scanning old's
// top level again.
func DiffVersions(old, cur Version) []Op {
	var ops []Op
	if !old.ok || !cur.ok {
		diff(&ops, nil, old.Bytes(), cur.Bytes(), 0)
		return ops
	}
	if diffMembers(&ops, nil, &Split{Keys: old.keys, Vals: old.vals, Subs: old.subs}, &Split{Keys: cur.keys, Vals: cur.vals, Subs: cur.subs}, 1) != nil {
		ops = nil
		diff(&ops, nil, old.Bytes(), cur.Bytes(), 0)
	}
	return ops
}

// splitOf returns the members of b: its writer's split when it has one
// for b's kind of value, else b scanned.
func splitOf(b []byte, s *Split) (*Split, error) {
	if s != nil && (b[0] == '{') == (s.Keys != nil) && (s.Keys == nil || len(s.Keys) == len(s.Vals)) {
		return s, nil
	}
	k, v, err := members(b)
	return &Split{Keys: k, Vals: v}, err
}

func diff(ops *[]Op, path []string, old, cur []byte, depth int) {
	diffSplit(ops, path, old, cur, nil, nil, depth)
}

// diffSplit is diff with the writers' splits of old and cur, or nil.
func diffSplit(ops *[]Op, path []string, old, cur []byte, os, cs *Split, depth int) {
	if bytes.Equal(old, cur) {
		return
	}
	set := func() { *ops = append(*ops, Op{Op: "set", Path: slices.Clone(path), Value: slices.Clone(cur)}) }
	if depth >= maxDepth || len(old) == 0 || len(cur) == 0 || old[0] != cur[0] {
		set()
		return
	}
	switch cur[0] {
	case '{':
		o, err1 := splitOf(old, os)
		c, err2 := splitOf(cur, cs)
		if err1 != nil || err2 != nil {
			set()
			return
		}
		mark := len(*ops)
		if diffMembers(ops, path, o, c, depth+1) != nil {
			*ops = (*ops)[:mark]
			set()
		}
	case '[':
		if (os == nil || cs == nil) && len(old) > 2 && len(cur) > len(old) && cur[len(old)-1] == ',' && bytes.Equal(old[:len(old)-1], cur[:len(old)-1]) {
			// Only appended to, as logs are: the kept elements need no
			// scan, the new ones are the tail. With the writers' splits
			// the elements are compared below instead (the same ops: an
			// unchanged element is often the same bytes in memory, which
			// compare at once, where this compared the whole prefix).
			tail := make([]byte, 0, len(cur)-len(old)+2)
			tail = append(append(tail, '['), cur[len(old):]...)
			if _, _, err := members(tail); err == nil {
				*ops = append(*ops, Op{Op: "append", Path: slices.Clone(path), Value: tail})
				return
			}
		}
		os, err1 := splitOf(old, os)
		cs, err2 := splitOf(cur, cs)
		o, c := os.Vals, cs.Vals
		if err1 != nil || err2 != nil || len(c) < len(o) || len(o) == 0 {
			set()
			return
		}
		changed := 0
		for i := range o {
			if !bytes.Equal(o[i], c[i]) {
				changed++
			}
		}
		if changed > len(o)/2 {
			set() // mostly rewritten: one value is smaller than many paths
			return
		}
		for i := range o {
			diffSplit(ops, append(path, strconv.Itoa(i)), o[i], c[i], os.sub(i), cs.sub(i), depth+1)
		}
		if len(c) > len(o) {
			n := 2
			for _, v := range c[len(o):] {
				n += len(v) + 1
			}
			tail := make([]byte, 0, n) // len(cur)-len(old) is no bound: kept elements may have shrunk
			tail = append(tail, '[')
			for i, v := range c[len(o):] {
				if i > 0 {
					tail = append(tail, ',')
				}
				tail = append(tail, v...)
			}
			tail = append(tail, ']')
			*ops = append(*ops, Op{Op: "append", Path: slices.Clone(path), Value: tail})
		}
	default:
		set()
	}
}

// diffMembers diffs two objects split into raw keys and values. Members
// keep their order from one version to the next (encoding/json writes
// struct fields in declaration order and map keys sorted), so matching
// keys are found by walking both lists together, and a key becomes a
// string only on a path that changed; a map is only built when the lists
// part. A key that does not unescape makes the whole object one set.
func diffMembers(ops *[]Op, path []string, o, c *Split, depth int) error {
	ok, ov, ck, cv := o.Keys, o.Vals, c.Keys, c.Vals
	i := 0
	for ; i < len(ok) && i < len(ck) && bytes.Equal(ok[i], ck[i]); i++ {
		if bytes.Equal(ov[i], cv[i]) {
			continue
		}
		k, err := keyString(ck[i])
		if err != nil {
			return err
		}
		diffSplit(ops, append(path, k), ov[i], cv[i], o.sub(i), c.sub(i), depth)
	}
	if i == len(ok) && i == len(ck) {
		return nil
	}
	oks, err := keyStrings(ok[i:])
	if err != nil {
		return err
	}
	cks, err := keyStrings(ck[i:])
	if err != nil {
		return err
	}
	old := make(map[string]int, len(oks))
	for j, k := range oks {
		old[k] = i + j
	}
	seen := make(map[string]bool, len(cks))
	for j, k := range cks {
		seen[k] = true
		if at, had := old[k]; had {
			diffSplit(ops, append(path, k), ov[at], cv[i+j], o.sub(at), c.sub(i+j), depth)
		} else {
			*ops = append(*ops, Op{Op: "set", Path: append(slices.Clone(path), k), Value: slices.Clone(cv[i+j])})
		}
	}
	for _, k := range oks {
		if !seen[k] {
			*ops = append(*ops, Op{Op: "delete", Path: append(slices.Clone(path), k)})
		}
	}
	return nil
}

// Apply returns doc with the record's operations applied, in order (see
// Doc, which applies a run of records without rebuilding the document
// after each).
func (r Record) Apply(doc []byte) ([]byte, error) {
	d := NewDoc(doc)
	if err := d.Apply(r); err != nil {
		return nil, err
	}
	return d.Bytes(), nil
}

var errPath = errors.New("path does not fit the document")

// apply applies one operation to doc by decoding and re-encoding every
// level on its path: Doc's way for what it does not split itself.
func apply(doc []byte, path []string, op Op) ([]byte, error) {
	if len(path) == 0 {
		switch op.Op {
		case "set":
			return slices.Clone(op.Value), nil
		case "append":
			var cur, tail []json.RawMessage
			if err := json.Unmarshal(doc, &cur); err != nil {
				return nil, errPath
			}
			if err := json.Unmarshal(op.Value, &tail); err != nil {
				return nil, fmt.Errorf("append value is not an array: %w", err)
			}
			return json.Marshal(append(cur, tail...))
		}
		return nil, errPath
	}
	doc = bytes.TrimSpace(doc)
	if len(doc) == 0 {
		return nil, errPath
	}
	switch doc[0] {
	case '{':
		var m map[string]json.RawMessage
		if err := json.Unmarshal(doc, &m); err != nil {
			return nil, errPath
		}
		k := path[0]
		if len(path) == 1 && op.Op == "delete" {
			delete(m, k)
			return marshalObject(m), nil
		}
		child, ok := m[k]
		if !ok {
			if len(path) > 1 || op.Op != "set" {
				return nil, errPath
			}
			child = nil
		}
		nv, err := apply(child, path[1:], op)
		if err != nil {
			return nil, err
		}
		m[k] = nv
		return marshalObject(m), nil
	case '[':
		var a []json.RawMessage
		if err := json.Unmarshal(doc, &a); err != nil {
			return nil, errPath
		}
		i, err := strconv.Atoi(path[0])
		if err != nil || i < 0 || i >= len(a) || op.Op == "delete" && len(path) == 1 {
			return nil, errPath
		}
		nv, err := apply(a[i], path[1:], op)
		if err != nil {
			return nil, err
		}
		a[i] = nv
		return json.Marshal(a)
	}
	return nil, errPath
}

// marshalObject writes m with sorted keys, as encoding/json does for maps.
func marshalObject(m map[string]json.RawMessage) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			b.WriteByte(',')
		}
		key, _ := json.Marshal(k)
		b.Write(key)
		b.WriteByte(':')
		b.Write(m[k])
	}
	b.WriteByte('}')
	return b.Bytes()
}

// AppendMembers returns the version of v's object with the members
// keys[i]: vals[i] added after its own, split without scanning them: a
// writer that encodes some members apart (reusing bytes it encoded
// before) joins them here. keys must need no JSON escaping and vals must
// be compact JSON values; v must be an object. The split of v's own
// members keeps pointing into v's document (it is never modified), and
// vals are kept, not copied: the caller must not change them after.
//
// subs, nil or parallel to keys, holds the writer's split of a value (see
// Split), or nil where it has none: a diff then need not scan it.
func (v Version) AppendMembers(keys []string, vals [][]byte, subs []*Split) Version {
	if len(keys) == 0 {
		return v
	}
	j := &joinedMembers{base: v.Bytes(), keys: keys, vals: vals}
	if !v.ok {
		return NewVersion(j.bytes())
	}
	out := Version{ok: true, joined: j}
	out.keys = append(make([][]byte, 0, len(v.keys)+len(keys)), v.keys...)
	out.vals = append(append(make([][]byte, 0, len(v.vals)+len(keys)), v.vals...), vals...)
	for _, k := range keys {
		out.keys = append(out.keys, []byte(k))
	}
	if subs != nil || v.subs != nil {
		out.subs = make([]*Split, len(v.vals), len(v.vals)+len(keys))
		copy(out.subs, v.subs)
		out.subs = append(out.subs, subs...)
	}
	return out
}

// SetMember returns v with the value of its top-level member key
// replaced by val, a compact JSON value: a writer that encodes a member
// apart (reusing the bytes of its unchanged part) puts it back in its
// place, so the document keeps its members in their order. ok is false,
// and v is returned as it is, when v is not an object split by
// NewVersion or has no member key. val is copied.
func (v Version) SetMember(key string, val []byte) (_ Version, ok bool) {
	if !v.ok || v.joined != nil {
		return v, false
	}
	k := slices.IndexFunc(v.keys, func(raw []byte) bool { return string(raw) == key })
	if k < 0 || len(v.vals[k]) == 0 {
		return v, false
	}
	doc := v.doc
	// NewVersion's keys and values are slices of doc: their offsets
	// follow from their capacities.
	at := func(s []byte) int { return cap(doc) - cap(s) }
	start, old := at(v.vals[k]), len(v.vals[k])
	if start < 0 || start+old > len(doc) || &doc[start] != &v.vals[k][0] {
		return v, false
	}
	out := make([]byte, 0, len(doc)-old+len(val))
	out = append(append(append(out, doc[:start]...), val...), doc[start+old:]...)
	shift := func(s []byte) []byte {
		off := at(s)
		if off > start {
			off += len(val) - old
		}
		return out[off : off+len(s)]
	}
	w := Version{doc: out, ok: true, subs: v.subs, keys: make([][]byte, len(v.keys)), vals: make([][]byte, len(v.vals))}
	for i := range v.keys {
		w.keys[i] = shift(v.keys[i])
		if i != k {
			w.vals[i] = shift(v.vals[i])
		}
	}
	w.vals[k] = out[start : start+len(val)]
	return w, true
}
