package fs

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	iofs "io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/refine-spec/refine/store"
)

// The log folder, .refine-wal, holds:
//
//	log            the log file: a header holding the marker (every record
//	               up to it is reflected, fsynced, in the session's files)
//	               and the records as frames (see logfile.go)
//	<seq>.rec      a record too big for the log file, until a checkpoint
//	               covers it; seq is the commit's sequence number in 20
//	               decimal digits, so names sort in sequence order. Earlier
//	               refines wrote every record so
//	checkpoint     the marker as earlier refines wrote it; Open moves it
//	               into the log file's header
//	*.tmp          a record file or the log file being written, or a put's
//	               value on its way to its key; Open discards them
//
// A record is, with integers little-endian:
//
//	magic   8 bytes  "REFWAL1\n" ("REFWAL", format version '1', newline)
//	seq     uint64   the sequence number, which must match the file name
//	count   uint32   number of ops
//	ops     count times:
//	  kind    uint8    1 put, 2 delete
//	  keylen  uint16   then the key, keylen bytes (a valid refine key)
//	  vallen  uint64   put only: then the value, vallen bytes
//	crc     uint32   CRC-32C (Castagnoli) of every byte before it
//
// A record holds a commit's net effect: each key once, in key order, its
// last op in the commit. A record file takes its name only once written in
// full and fsynced, so a crash never leaves a named record cut short (a
// temporary file at most); the checksum detects one the disk or another
// program damaged since, which Open refuses. It is not a defence against a
// forger, which is why a record that passes it is still checked key by key
// before anything is replayed.
//
// The marker file of earlier refines is "REFCKP1\n", seq uint64, and a
// CRC-32C of those 16 bytes.
const (
	recordMagic  = "REFWAL1\n"
	markerMagic  = "REFCKP1\n"
	magicFamily  = 6 // bytes of a magic that name the kind of file; the rest is its version
	recordSuffix = ".rec"
	tempSuffix   = ".tmp"
	markerName   = "checkpoint"
	seqDigits    = 20
	recordHeader = 8 + 8 + 4
	crcSize      = 4
	markerSize   = 8 + 8 + crcSize
	opPut        = 1
	opDelete     = 2
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// errTorn marks a record that is not whole: too short, or failing its
// checksum. Since records are renamed into place complete, that is damage.
var errTorn = errors.New("not whole: cut short or failing its checksum")

// walPath is the root-relative path of name in the log folder.
func walPath(name string) string { return filepath.Join(walName, name) }

func recordName(seq uint64) string {
	return fmt.Sprintf("%0*d%s", seqDigits, seq, recordSuffix)
}

// parseRecordName returns the sequence number a record's file name holds.
func parseRecordName(name string) (uint64, bool) {
	digits, ok := strings.CutSuffix(name, recordSuffix)
	if !ok || len(digits) != seqDigits {
		return 0, false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, false
		}
	}
	seq, err := strconv.ParseUint(digits, 10, 64)
	if err != nil || seq == 0 {
		return 0, false
	}
	return seq, true
}

// encodeRecord lays out commit seq's changes as a record.
func encodeRecord(seq uint64, changes []change) []byte {
	size := recordHeader + crcSize
	for _, c := range changes {
		size += 1 + 2 + len(c.key)
		if !c.del {
			size += 8 + len(c.value)
		}
	}
	b := make([]byte, 0, size)
	b = append(b, recordMagic...)
	b = binary.LittleEndian.AppendUint64(b, seq)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(changes)))
	for _, c := range changes {
		kind := byte(opPut)
		if c.del {
			kind = opDelete
		}
		b = append(b, kind)
		b = binary.LittleEndian.AppendUint16(b, uint16(len(c.key)))
		b = append(b, c.key...)
		if !c.del {
			b = binary.LittleEndian.AppendUint64(b, uint64(len(c.value)))
			b = append(b, c.value...)
		}
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// decodeRecord parses a record. The changes' values share data's memory.
// An error wraps errTorn if the record is not whole; any other error
// means it is whole but not one this store wrote.
func decodeRecord(data []byte) (seq uint64, changes []change, err error) {
	if len(data) >= magicFamily && string(data[:magicFamily]) == recordMagic[:magicFamily] &&
		len(data) >= len(recordMagic) && string(data[:len(recordMagic)]) != recordMagic {
		// Checked before the checksum: a newer format may checksum
		// differently, and must not be reported as damaged.
		return 0, nil, fmt.Errorf("format version %q, this refine reads %q: written by a newer refine", data[magicFamily], recordMagic[magicFamily])
	}
	if len(data) < recordHeader+crcSize || string(data[:len(recordMagic)]) != recordMagic {
		return 0, nil, errTorn
	}
	body := data[:len(data)-crcSize]
	if binary.LittleEndian.Uint32(data[len(body):]) != crc32.Checksum(body, castagnoli) {
		return 0, nil, errTorn
	}
	seq = binary.LittleEndian.Uint64(body[8:])
	count := binary.LittleEndian.Uint32(body[16:])
	rest := body[recordHeader:]
	// Each op takes at least 3 bytes, which bounds count before allocating.
	if uint64(count) > uint64(len(rest))/3 {
		return 0, nil, fmt.Errorf("%d ops cannot fit in %d bytes", count, len(rest))
	}
	changes = make([]change, 0, count)
	seen := make(map[string]bool, count)
	for i := range count {
		if len(rest) < 3 {
			return 0, nil, fmt.Errorf("op %d: truncated", i)
		}
		kind, keyLen := rest[0], int(binary.LittleEndian.Uint16(rest[1:]))
		rest = rest[3:]
		if len(rest) < keyLen {
			return 0, nil, fmt.Errorf("op %d: key of %d bytes overruns the record", i, keyLen)
		}
		c := change{key: string(rest[:keyLen])}
		rest = rest[keyLen:]
		if err := store.ValidKey(c.key); err != nil {
			return 0, nil, fmt.Errorf("op %d: %w", i, err)
		}
		if seen[c.key] {
			return 0, nil, fmt.Errorf("op %d: key %q appears twice", i, c.key)
		}
		seen[c.key] = true
		switch kind {
		case opDelete:
			c.del = true
		case opPut:
			if len(rest) < 8 {
				return 0, nil, fmt.Errorf("op %d on %q: truncated value length", i, c.key)
			}
			n := binary.LittleEndian.Uint64(rest)
			rest = rest[8:]
			if n > uint64(len(rest)) {
				return 0, nil, fmt.Errorf("op %d on %q: value of %d bytes overruns the record", i, c.key, n)
			}
			c.value = rest[:n:n]
			rest = rest[n:]
		default:
			return 0, nil, fmt.Errorf("op %d on %q: unknown kind %d", i, c.key, kind)
		}
		changes = append(changes, c)
	}
	if len(rest) != 0 {
		return 0, nil, fmt.Errorf("%d bytes after the last op", len(rest))
	}
	return seq, changes, nil
}

// decodeMarker parses an earlier refine's checkpoint marker file. It was
// replaced by rename, so like a record file it is never legitimately
// torn.
func decodeMarker(data []byte) (uint64, error) {
	if len(data) != markerSize || !bytes.HasPrefix(data, []byte(markerMagic)) {
		return 0, fmt.Errorf("not a checkpoint marker of this refine (%d bytes)", len(data))
	}
	if binary.LittleEndian.Uint32(data[16:]) != crc32.Checksum(data[:16], castagnoli) {
		return 0, errors.New("checksum mismatch")
	}
	return binary.LittleEndian.Uint64(data[8:]), nil
}

// appendRecord logs record data as commit seq: the commit point. It
// appends a frame to the log file (see logfile.go), or, if the record
// does not fit there now, writes it as a record file. committed reports
// whether the record may be in the log; an error with committed set means
// it may be there, whole or not, but is not known to be durable. inFile
// reports that it went to a record file, which a checkpoint deletes.
func (s *Store) appendRecord(ctx context.Context, seq uint64, data []byte) (committed, inFile bool, err error) {
	// The last moment to back out: from here on the commit completes.
	if err := s.hook("logged"); err != nil {
		return false, false, err
	}
	if err := ctx.Err(); err != nil {
		return false, false, err
	}
	switch err := s.wlog.append(seq, data); {
	case err == nil:
		return true, false, nil
	case !errors.Is(err, errNoRoom):
		return true, false, err
	}
	committed, err = s.appendRecordFile(seq, data)
	return committed, true, err
}

// appendRecordFile writes record data as the record file of commit seq:
// a temporary file, fsynced, renamed to its name, and the log folder
// fsynced.
func (s *Store) appendRecordFile(seq uint64, data []byte) (committed bool, err error) {
	name := recordName(seq)
	temp := walPath(name + tempSuffix)
	if err := s.replaceFile(temp, data, syncCommit); err != nil {
		return false, fmt.Errorf("write log record %s: %w", name, err)
	}
	if err := s.walDir.renameTo(walBase(temp), s.walDir, name, false); err != nil {
		s.walDir.remove(walBase(temp))
		return false, fmt.Errorf("write log record %s: %w", name, err)
	}
	if err := s.syncDir(walName, syncCommit); err != nil {
		return true, fmt.Errorf("log record %s: %w", name, err)
	}
	return true, nil
}

// replaceFile writes data to rel (in the log folder), replacing whatever
// a failed attempt left there, and fsyncs it for purpose (see writeFile).
// The name is normally free, so it is only cleared when the exclusive
// create finds it taken.
func (s *Store) replaceFile(rel string, data []byte, purpose syncPurpose) error {
	err := s.writeFile(rel, data, purpose)
	if errors.Is(err, iofs.ErrExist) {
		if err := s.walDir.remove(walBase(rel)); err != nil {
			return fmt.Errorf("remove stale %s: %w", rel, err)
		}
		err = s.writeFile(rel, data, purpose)
	}
	if err != nil {
		s.walDir.remove(walBase(rel))
	}
	return err
}

// readLogFile reads rel, a file in the log folder, refusing anything but a
// regular file so that a planted link is not read through.
func (s *Store) readLogFile(rel string) ([]byte, error) {
	fi, err := s.root.Lstat(rel)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%v)", rel, fi.Mode().Type())
	}
	f, err := s.root.Open(rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !os.SameFile(fi, st) {
		return nil, fmt.Errorf("%s %w", rel, errChanged)
	}
	b := make([]byte, st.Size())
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, err
	}
	return b, nil
}
