package statedoc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"strconv"

	"github.com/refine-spec/refine/internal/core/state"
	"github.com/refine-spec/refine/store"
)

// Checksummed state documents.
//
// A whole state written by this refine (state.json, a snapshot under
// snapshots/, a state backup holding a whole state) is sealed: its first
// members are the CRC-32C and the length of the compact document they
// precede, so the file stays one JSON object a person or jq can read:
//
//	{"checksum":"crc32c:1a2b3c4d","size":12345,"schema":3,...}
//
// A reader verifies both before it uses a byte: a damaged document is
// refused as corrupt, naming the file, and never passed over for an
// older one. A background snapshot is written a chunk per commit, so a
// sealed snapshot shorter than its size is one still being written (or
// left by a crash) and readers pass over it; every chunk is at least the
// header. Documents written before schema 3 carry no checksum and are read
// as they are; schema 3 without one is refused.

// SealPrefix starts every sealed document.
const SealPrefix = `{"checksum":"crc32c:`

// legacyPrefix starts every unsealed compact state document.
const legacyPrefix = `{"schema":`

// castagnoli is the CRC-32C table.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// SealDoc returns doc, a compact JSON object, sealed and newline-terminated.
func SealDoc(doc []byte) []byte {
	head := fmt.Sprintf(`%s%08x","size":%d`, SealPrefix, crc32.Checksum(doc, castagnoli), len(doc))
	out := make([]byte, 0, len(head)+len(doc)+2)
	out = append(out, head...)
	if rest := doc[1:]; len(rest) > 0 && rest[0] != '}' {
		out = append(out, ',')
	}
	out = append(out, doc[1:]...)
	return append(out, '\n')
}

// OpenDoc verifies a stored state document read from key and returns it
// compact, without its seal. complete is false for a snapshot still being
// written (only keys under snapshots/ may be); err wraps ErrCorrupt and
// names key when the document is damaged.
func OpenDoc(key string, b []byte) (doc []byte, complete bool, err error) {
	corrupt := func(why string, args ...any) ([]byte, bool, error) {
		return nil, false, fmt.Errorf("%w: %s: %s (the file is left untouched; restore it from a copy, or roll back to a round whose backup is intact)",
			store.ErrCorrupt, key, fmt.Sprintf(why, args...))
	}
	partialOK := len(key) > len(SnapshotPrefix) && key[:len(SnapshotPrefix)] == SnapshotPrefix
	if !bytes.HasPrefix(b, []byte(SealPrefix)) {
		return openLegacy(key, b, partialOK, corrupt)
	}
	sl, err := parseSeal(b)
	if err != nil {
		return corrupt("%v", err)
	}
	if len(sl.body)+1 < sl.size && partialOK {
		return nil, false, nil // a background snapshot, not all written yet
	}
	if len(sl.body)+1 != sl.size {
		return corrupt("%d bytes, the header says %d", len(sl.body)+1, sl.size)
	}
	doc = make([]byte, 0, sl.size)
	doc = append(append(doc, '{'), sl.body...)
	if got := crc32.Checksum(doc, castagnoli); got != sl.sum {
		return corrupt("checksum mismatch (crc32c %08x, the header says %08x)", got, sl.sum)
	}
	return doc, true, nil
}

// seal is a sealed document's header and the members after it.
type seal struct {
	sum  uint32
	size int
	// body is the document's members after the header, without the
	// newline: the document is '{' and body.
	body []byte
}

// parseSeal reads the header of b, a document that starts with
// sealPrefix; the error says what is wrong with it.
func parseSeal(b []byte) (seal, error) {
	rest := b[len(SealPrefix):]
	if len(rest) < 8 {
		return seal{}, errors.New("the checksum is cut short")
	}
	sum, err := strconv.ParseUint(string(rest[:8]), 16, 32)
	if err != nil {
		return seal{}, fmt.Errorf("the checksum %q is not hexadecimal", rest[:8])
	}
	rest, ok := bytes.CutPrefix(rest[8:], []byte(`","size":`))
	if !ok {
		return seal{}, errors.New("no size after the checksum")
	}
	size, rest, err := parseSize(rest)
	if err != nil {
		return seal{}, err
	}
	rest, _ = bytes.CutSuffix(rest, []byte("\n"))
	return seal{sum: uint32(sum), size: size, body: rest}, nil
}

// parseSize reads the size at the start of b, and returns the members
// after it.
func parseSize(b []byte) (size int, rest []byte, err error) {
	i := 0
	for i < len(b) && i < 12 && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	size, err = strconv.Atoi(string(b[:i]))
	if err != nil || i == 0 || i > 1 && b[0] == '0' {
		return 0, nil, fmt.Errorf("the size %q is not a number", b[:i])
	}
	rest = b[i:]
	if len(rest) == 0 || rest[0] != ',' && rest[0] != '}' {
		return 0, nil, errors.New("the size is not followed by a member")
	}
	if rest[0] == ',' {
		rest = rest[1:]
	}
	return size, rest, nil
}

// openLegacy reads a document without a seal: one written before schema 3.
func openLegacy(key string, b []byte, partialOK bool, corrupt func(string, ...any) ([]byte, bool, error)) ([]byte, bool, error) {
	doc := bytes.TrimSpace(b)
	if !json.Valid(doc) {
		if partialOK && bytes.HasPrefix(doc, []byte(legacyPrefix)) {
			return nil, false, nil // an older refine's snapshot, not all written yet
		}
		return corrupt("not a JSON document and no checksum")
	}
	var head struct {
		Schema *int `json:"schema"`
	}
	if err := json.Unmarshal(doc, &head); err != nil {
		return corrupt("%v", err)
	}
	if head.Schema != nil && *head.Schema >= 3 && *head.Schema <= state.SchemaVersion { // a newer one is refused as such
		return corrupt("schema %d without its checksum", *head.Schema)
	}
	return doc, true, nil
}
