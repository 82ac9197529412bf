package journal

import (
	"bytes"
	"encoding/json"
	"errors"
)

// A JSON document from json.Marshal is valid and compact, so Diff splits
// objects and arrays into their members by scanning bytes instead of
// decoding them (decoding validated the whole document again at every
// level, which cost more than everything else a durable point does).

var errNotSplittable = errors.New("not a compact JSON object or array")

// members splits the object or array b into its members: for an object,
// keys and values; for an array, values only (keys nil). A key is its
// JSON string's raw content, still escaped (see keyString). b must be
// compact (no whitespace between tokens), as json.Marshal writes.
func members(b []byte) (keys, vals [][]byte, err error) {
	if len(b) < 2 {
		return nil, nil, errNotSplittable
	}
	object := b[0] == '{'
	closer := byte(']')
	if object {
		closer = '}'
	}
	if !object && b[0] != '[' || b[len(b)-1] != closer {
		return nil, nil, errNotSplittable
	}
	i := 1
	if i == len(b)-1 {
		return nil, nil, nil // {} or []
	}
	for i < len(b)-1 {
		if object {
			end, err := scanString(b, i)
			if err != nil || end >= len(b) || b[end] != ':' {
				return nil, nil, errNotSplittable
			}
			keys = append(keys, b[i+1:end-1])
			i = end + 1
		}
		end, err := scanValue(b, i)
		if err != nil {
			return nil, nil, err
		}
		vals = append(vals, b[i:end])
		i = end
		if i < len(b)-1 {
			if b[i] != ',' {
				return nil, nil, errNotSplittable
			}
			i++
		}
	}
	return keys, vals, nil
}

// keyString returns an object key split out by members as a string,
// unescaped.
func keyString(raw []byte) (string, error) {
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw), nil
	}
	var k string
	q := make([]byte, 0, len(raw)+2)
	q = append(append(append(q, '"'), raw...), '"')
	if err := json.Unmarshal(q, &k); err != nil {
		return "", errNotSplittable
	}
	return k, nil
}

// keyStrings converts the keys members split out.
func keyStrings(raw [][]byte) ([]string, error) {
	out := make([]string, len(raw))
	for i, r := range raw {
		k, err := keyString(r)
		if err != nil {
			return nil, err
		}
		out[i] = k
	}
	return out, nil
}

// scanString returns the index just past the JSON string starting at b[i].
// It jumps from quote to quote (bytes.IndexByte is vectorised: strings
// are most of a state's bytes); a quote preceded by an odd run of
// backslashes is escaped.
func scanString(b []byte, i int) (int, error) {
	if i >= len(b) || b[i] != '"' {
		return 0, errNotSplittable
	}
	j := i + 1
	for {
		q := bytes.IndexByte(b[j:], '"')
		if q < 0 {
			return 0, errNotSplittable
		}
		j += q
		bs := 0
		for k := j - 1; k > i && b[k] == '\\'; k-- {
			bs++
		}
		if bs%2 == 0 {
			return j + 1, nil
		}
		j++
	}
}

// scanValue returns the index just past the JSON value starting at b[i].
func scanValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, errNotSplittable
	}
	switch b[i] {
	case '"':
		return scanString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end, err := scanString(b, j)
				if err != nil {
					return 0, err
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, errNotSplittable
	default: // number, true, false, null
		j := i
		for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' {
			j++
		}
		if j == i {
			return 0, errNotSplittable
		}
		return j, nil
	}
}
