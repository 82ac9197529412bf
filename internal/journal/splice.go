package journal

import (
	"bytes"
	"strconv"
)

// splice applies one operation to doc, compact encoding/json output, by
// finding the bytes it changes and replacing them: no level is decoded
// or encoded again. ok is false when doc is not as splice expects (not
// compact, a key that needs unescaping, a path that does not fit); apply
// then does the operation, or says why it cannot.
func splice(doc []byte, path []string, op Op) (out []byte, ok bool) {
	if len(path) == 0 {
		switch op.Op {
		case "set":
			return append([]byte(nil), op.Value...), true
		case "append":
			return appendElems(doc, op.Value)
		}
		return nil, false
	}
	if len(doc) < 2 {
		return nil, false
	}
	switch doc[0] {
	case '{':
		keys, vals, err := members(doc)
		if err != nil {
			return nil, false
		}
		i := -1
		for j, k := range keys {
			if bytes.IndexByte(k, '\\') >= 0 {
				return nil, false
			}
			if string(k) == path[0] {
				i = j
				break
			}
		}
		if i < 0 {
			if len(path) > 1 || op.Op != "set" || !plainKey(path[0]) {
				return nil, false
			}
			// A new member goes last.
			out = make([]byte, 0, len(doc)+len(path[0])+len(op.Value)+4)
			out = append(out, doc[:len(doc)-1]...)
			if len(keys) > 0 {
				out = append(out, ',')
			}
			out = append(out, '"')
			out = append(out, path[0]...)
			out = append(out, '"', ':')
			out = append(out, op.Value...)
			return append(out, '}'), true
		}
		start, end := offset(doc, vals[i]), offset(doc, vals[i])+len(vals[i])
		if len(path) == 1 && op.Op == "delete" {
			from := offset(doc, keys[i]) - 1 // the key's opening quote
			switch {
			case len(keys) == 1:
				return []byte("{}"), true
			case i > 0:
				from-- // the comma before it
			default:
				end++ // the comma after it
			}
			return join(doc[:from], nil, doc[end:]), true
		}
		v, ok := splice(vals[i], path[1:], op)
		if !ok {
			return nil, false
		}
		return join(doc[:start], v, doc[end:]), true
	case '[':
		n, err := strconv.Atoi(path[0])
		if err != nil || op.Op == "delete" && len(path) == 1 {
			return nil, false
		}
		_, vals, err := members(doc)
		if err != nil || n < 0 || n >= len(vals) {
			return nil, false
		}
		v, ok := splice(vals[n], path[1:], op)
		if !ok {
			return nil, false
		}
		start := offset(doc, vals[n])
		return join(doc[:start], v, doc[start+len(vals[n]):]), true
	}
	return nil, false
}

// appendElems adds the elements of the array tail to the array doc.
func appendElems(doc, tail []byte) ([]byte, bool) {
	if len(doc) < 2 || doc[0] != '[' || doc[len(doc)-1] != ']' || len(tail) < 2 || tail[0] != '[' || tail[len(tail)-1] != ']' {
		return nil, false
	}
	if _, _, err := members(tail); err != nil {
		return nil, false
	}
	elems := bytes.TrimSpace(tail[1 : len(tail)-1]) // "[ ]" adds nothing
	if len(elems) == 0 {
		return append([]byte(nil), doc...), true
	}
	out := make([]byte, 0, len(doc)+len(elems)+1)
	out = append(out, doc[:len(doc)-1]...)
	if len(doc) > 2 {
		out = append(out, ',')
	}
	out = append(out, elems...)
	return append(out, ']'), true
}

// offset returns where sub, a slice of doc, starts in doc.
func offset(doc, sub []byte) int { return cap(doc) - cap(sub) }

func join(a, b, c []byte) []byte {
	out := make([]byte, 0, len(a)+len(b)+len(c))
	return append(append(append(out, a...), b...), c...)
}

// plainKey reports whether k is written as it is inside a JSON string.
func plainKey(k string) bool {
	for i := 0; i < len(k); i++ {
		if c := k[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}
