package journal

import (
	"bytes"
	"fmt"
	"slices"
)

// Doc is a document being rebuilt from a snapshot and the records after
// it. Its top-level members are kept apart, so that an operation costs
// the member it changes, not the whole document, and an append to a
// top-level log costs only the appended elements: rebuilding a state from
// many records stays linear in their size.
type Doc struct {
	keys  []string
	vals  [][]byte
	owned []bool // vals[i] is a copy this Doc may append to in place
	// whole holds a document that is not a splittable object (isWhole);
	// ops then apply to it whole.
	whole   []byte
	isWhole bool
}

// NewDoc starts a rebuild from doc, compact encoding/json output. doc is
// not modified.
func NewDoc(doc []byte) *Doc {
	d := &Doc{}
	d.reset(doc)
	return d
}

func (d *Doc) reset(doc []byte) {
	raw, vals, err := members(doc)
	var keys []string
	if err == nil {
		keys, err = keyStrings(raw)
	}
	if err != nil || len(doc) == 0 || doc[0] != '{' {
		*d = Doc{whole: slices.Clone(doc), isWhole: true}
		return
	}
	*d = Doc{keys: keys, vals: vals, owned: make([]bool, len(keys))}
}

// Apply applies the record's operations, in order. On error the Doc is
// left partly changed: discard it.
func (d *Doc) Apply(r Record) error {
	for i, op := range r.Ops {
		if err := d.apply(op); err != nil {
			return fmt.Errorf("journal: record %d op %d (%s %v): %w", r.Seq, i, op.Op, op.Path, err)
		}
	}
	return nil
}

func (d *Doc) apply(op Op) error {
	if len(op.Path) == 0 {
		if op.Op != "set" {
			b, err := apply(d.Bytes(), nil, op)
			if err != nil {
				return err
			}
			d.reset(b)
			return nil
		}
		d.reset(op.Value)
		return nil
	}
	if d.isWhole {
		b, err := apply(d.whole, op.Path, op)
		if err != nil {
			return err
		}
		d.whole = b
		return nil
	}
	i := slices.Index(d.keys, op.Path[0])
	switch {
	case len(op.Path) == 1 && op.Op == "delete":
		if i >= 0 {
			d.keys, d.vals, d.owned = slices.Delete(d.keys, i, i+1), slices.Delete(d.vals, i, i+1), slices.Delete(d.owned, i, i+1)
		}
		return nil
	case len(op.Path) == 1 && op.Op == "set":
		v := slices.Clone(op.Value)
		if i < 0 {
			d.keys, d.vals, d.owned = append(d.keys, op.Path[0]), append(d.vals, v), append(d.owned, true)
			return nil
		}
		d.vals[i], d.owned[i] = v, true
		return nil
	case i < 0:
		return errPath
	case len(op.Path) == 1 && op.Op == "append":
		return d.appendTo(i, op.Value)
	}
	v, ok := splice(d.vals[i], op.Path[1:], op)
	if !ok {
		var err error
		if v, err = apply(d.vals[i], op.Path[1:], op); err != nil {
			return err
		}
	}
	d.vals[i], d.owned[i] = v, true
	return nil
}

// appendTo appends the elements of the array tail to member i, an array.
func (d *Doc) appendTo(i int, tail []byte) error {
	v := d.vals[i]
	if len(v) < 2 || v[0] != '[' || v[len(v)-1] != ']' || len(tail) < 2 || tail[0] != '[' || tail[len(tail)-1] != ']' {
		b, err := apply(v, nil, Op{Op: "append", Value: tail})
		if err != nil {
			return err
		}
		d.vals[i], d.owned[i] = b, true
		return nil
	}
	if _, _, err := members(tail); err != nil {
		return fmt.Errorf("append value is not an array: %w", err)
	}
	elems := bytes.TrimSpace(tail[1 : len(tail)-1])
	if len(elems) == 0 {
		return nil
	}
	if !d.owned[i] {
		v = append(make([]byte, 0, 2*len(v)+len(elems)), v...)
	}
	v = v[:len(v)-1]
	if len(v) > 1 {
		v = append(v, ',')
	}
	v = append(append(v, elems...), ']')
	d.vals[i], d.owned[i] = v, true
	return nil
}

// Bytes returns the document as it stands.
func (d *Doc) Bytes() []byte {
	if d.isWhole {
		return d.whole
	}
	n := 2
	for i, k := range d.keys {
		n += len(k) + len(d.vals[i]) + 4
	}
	b := make([]byte, 0, n)
	b = append(b, '{')
	for i, k := range d.keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		b = append(b, d.vals[i]...)
	}
	return append(b, '}')
}
