package fs

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"sync"
)

// The log file, .refine-wal/log, is where commits are logged: one write
// and one fdatasync each. A commit that overwrites blocks the file already
// has changes no metadata, so its fdatasync flushes the record's blocks
// and nothing else (on the project machine 0.3 ms, against 1.1 ms for a
// record file's fsync, rename and folder fsync); one that goes past the
// end grows the file, and its fdatasync also flushes the new size and
// blocks (about 0.15 ms more). The file is created with its header and a
// little room (written in full and fsynced once), grows while commits
// come faster than checkpoints, up to logMaxSize, and never shrinks: once
// a checkpoint has covered every frame, the next frames are written from
// the start again, over blocks the file already has. It is laid out in
// blocks of logBlock bytes, integers little-endian:
//
//	block 0, block 1   the header, two copies (slots); each holds
//	                     magic  8 bytes "REFLOG1\n"
//	                     gen    uint64  bumped at every header write
//	                     salt   uint32  the file's, chosen at random
//	                     marker uint64  every record up to here is
//	                                    reflected, fsynced, in the files
//	                     start  uint64  the generation's first record
//	                     crc    uint32  CRC-32C of the 36 bytes before it
//	block 2 onwards    frames, each starting on a block boundary:
//	                     len    uint32  the record's length
//	                     crc    uint32  CRC-32C of salt, len and record
//	                     record len bytes, a record as wal.go lays it out
//
// A header write goes to the slot gen selects (gen%2), so the other slot
// keeps the previous header whole should the write be torn; Open takes
// the whole slot with the higher gen. A frame is whole if its length fits
// in the file and its checksum matches; the salt keeps bytes that merely
// look like a frame (a value holding a copy of another log's frame, say)
// from passing. Frames start on block boundaries so appending one never
// rewrites a block that holds an earlier one: a torn append can only
// damage itself.
//
// A checkpoint that covers every frame in the log starts a new
// generation: a header whose start is the next record, after which frames
// are written from block 2 again. The old frames stay on disk, but their
// records come before start, so they read as the end of the log.
const (
	logName        = "log"
	logMagic       = "REFLOG1\n"
	logBlock       = 4096
	logFrames      = 2 * logBlock // the first frame's offset
	slotSize       = 8 + 8 + 4 + 8 + 8 + crcSize
	frameHeader    = 4 + 4
	defaultLogSize = 64 << 10  // created with room for a few commits
	logMaxSize     = 16 << 20  // records that would take it further go to record files
	logReserve     = 256 << 10 // room the idle applier keeps after the next frame (see reserve)
)

// logHeader is one slot's content.
type logHeader struct {
	gen    uint64
	salt   uint32
	marker uint64
	start  uint64
}

func encodeSlot(h logHeader) []byte {
	b := make([]byte, 0, slotSize)
	b = append(b, logMagic...)
	b = binary.LittleEndian.AppendUint64(b, h.gen)
	b = binary.LittleEndian.AppendUint32(b, h.salt)
	b = binary.LittleEndian.AppendUint64(b, h.marker)
	b = binary.LittleEndian.AppendUint64(b, h.start)
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// decodeSlot parses a header slot; an error means it is not whole.
func decodeSlot(b []byte) (logHeader, error) {
	if len(b) < slotSize || string(b[:len(logMagic)]) != logMagic {
		if len(b) >= len(logMagic) && string(b[:magicFamily]) == logMagic[:magicFamily] && b[magicFamily] != logMagic[magicFamily] {
			return logHeader{}, fmt.Errorf("format version %q, this refine reads %q: written by a newer refine", b[magicFamily], logMagic[magicFamily])
		}
		return logHeader{}, errTorn
	}
	b = b[:slotSize]
	if binary.LittleEndian.Uint32(b[slotSize-crcSize:]) != crc32.Checksum(b[:slotSize-crcSize], castagnoli) {
		return logHeader{}, errTorn
	}
	return logHeader{
		gen:    binary.LittleEndian.Uint64(b[8:]),
		salt:   binary.LittleEndian.Uint32(b[16:]),
		marker: binary.LittleEndian.Uint64(b[20:]),
		start:  binary.LittleEndian.Uint64(b[28:]),
	}, nil
}

// frameSum is a frame's checksum: CRC-32C of the salt, the length and the
// record.
func frameSum(salt uint32, record []byte) uint32 {
	var pre [8]byte
	binary.LittleEndian.PutUint32(pre[:], salt)
	binary.LittleEndian.PutUint32(pre[4:], uint32(len(record)))
	return crc32.Update(crc32.Checksum(pre[:], castagnoli), castagnoli, record)
}

func encodeFrame(salt uint32, record []byte) []byte {
	b := make([]byte, 0, frameHeader+len(record))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(record)))
	b = binary.LittleEndian.AppendUint32(b, frameSum(salt, record))
	return append(b, record...)
}

// frameAt returns the record of the whole frame at off in log, or ok
// false if there is none there: zeros, or a frame cut short or damaged.
// zero reports that the frame's header is all zeros.
func frameAt(log []byte, off int64, salt uint32) (record []byte, ok, zero bool) {
	if off+frameHeader > int64(len(log)) {
		return nil, false, false
	}
	n := int64(binary.LittleEndian.Uint32(log[off:]))
	sum := binary.LittleEndian.Uint32(log[off+4:])
	if n == 0 && sum == 0 {
		return nil, false, true
	}
	end := off + frameHeader + n
	if n < recordHeader+crcSize || end > int64(len(log)) {
		return nil, false, false
	}
	record = log[off+frameHeader : end]
	if frameSum(salt, record) != sum {
		return nil, false, false
	}
	return record, true, false
}

// nextFrame returns where the frame after one of n bytes at off starts.
func nextFrame(off int64, n int) int64 {
	end := off + frameHeader + int64(n)
	return (end + logBlock - 1) / logBlock * logBlock
}

// errNoRoom: the record does not fit in the log file now; it goes to a
// record file instead (see wal.go), and later records that fit go on in
// the log file.
var errNoRoom = errors.New("no room in the log file")

// walLog is the open log file. Commits append to it (under the Store's
// commitMu) while the applier's checkpoints rewrite its header; mu keeps
// the two apart where it matters: a new generation is started only when
// no frame of the old one is waiting for a checkpoint, and no frame is
// written until the new header is durable.
type walLog struct {
	f     *os.File
	sync  func(f *os.File, c syncCall) error // nil: NoSync
	limit int64                              // the size the file may grow to (logMaxSize but in tests)

	mu     sync.Mutex
	hdr    logHeader // as last written, durably
	off    int64     // where the next frame goes
	size   int64     // the file's size, as far as known: every frame lies below it
	last   uint64    // the last record written to this generation's frames
	sealed bool      // a frame's write failed: write no more until the next generation
}

// append writes record seq as a frame and fdatasyncs it. It returns
// errNoRoom, having written nothing, if the frame would take the file past
// its limit; any other
// error means the frame may be partly or wholly on disk.
func (l *walLog) append(seq uint64, record []byte) error {
	l.mu.Lock()
	end := l.off + frameHeader + int64(len(record))
	if l.sealed || end > l.limit {
		l.mu.Unlock()
		return errNoRoom
	}
	off := l.off
	_, err := l.f.WriteAt(encodeFrame(l.hdr.salt, record), off)
	l.off = nextFrame(off, len(record))
	l.size = max(l.size, end)
	l.last = seq
	if err != nil {
		l.sealed = true // whatever is at off now, write nothing after it
	}
	l.mu.Unlock()
	if err == nil && l.sync != nil {
		err = l.sync(l.f, syncCall{purpose: syncCommit, path: walPath(logName), data: true})
	}
	if err != nil {
		return fmt.Errorf("log file at offset %d: %w", off, err)
	}
	return nil
}

// mark durably records in the header that every record up to marker is
// reflected in the files. If no frame after marker has been written, it
// also starts a new generation, so the log is empty again. purpose is the
// header's sync call's: a checkpoint's, or Open's starting a generation.
func (l *walLog) mark(marker uint64, purpose syncPurpose) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	h := logHeader{gen: l.hdr.gen + 1, salt: l.hdr.salt, marker: marker, start: l.hdr.start}
	fresh := l.last <= marker
	if fresh {
		h.start = marker + 1
	}
	if _, err := l.f.WriteAt(encodeSlot(h), int64(h.gen%2)*logBlock); err != nil {
		return fmt.Errorf("write the log header: %w", err)
	}
	if l.sync != nil {
		if err := l.sync(l.f, syncCall{purpose: purpose, path: walPath(logName), data: true}); err != nil {
			return fmt.Errorf("write the log header: %w", err)
		}
	}
	l.hdr = h
	if fresh {
		l.off, l.sealed = logFrames, false
		// Not needed for safety (the old frames' records come before
		// start), and so not synced: a zeroed first frame tells the next
		// Open that this generation has nothing in it, so it need not start
		// another.
		if _, err := l.f.WriteAt(make([]byte, frameHeader), logFrames); err != nil {
			return fmt.Errorf("write the log file: %w", err)
		}
	}
	return nil
}

// reserve grows the file by logReserve bytes of zeros, once fewer than
// logReserve/2 bytes follow the next frame's offset (within the limit),
// and fdatasyncs them. Only the applier calls it, when idle. An append
// past the file's end changes its size and blocks, so its fdatasync also
// commits the file system's journal (about 0.15 ms more on the project
// machine); and with no checkpoint between commits to restart the log
// from its start, the frames of a session go on growing the file, so
// every commit would pay that. Grown ahead and synced off the commit
// path, the file costs one sync call per reserve instead (about one per
// 30 commits of a session), and commits' fdatasyncs flush their frames
// alone. Zeros after the last frame read as the log's end, and the growth
// writes only past every frame, so a crash or a power loss during it
// loses nothing.
func (l *walLog) reserve() error {
	l.mu.Lock()
	if l.f == nil || l.sealed || l.size-l.off >= logReserve/2 || l.size >= l.limit {
		l.mu.Unlock()
		return nil
	}
	grown := min(max(l.size, l.off)+logReserve, l.limit)
	_, err := l.f.WriteAt(make([]byte, grown-l.size), l.size)
	if err == nil {
		l.size = grown
	}
	l.mu.Unlock()
	if err == nil && l.sync != nil {
		err = l.sync(l.f, syncCall{purpose: syncReserve, path: walPath(logName), data: true})
	}
	if err != nil {
		return fmt.Errorf("grow the log file: %w", err)
	}
	return nil
}

func (l *walLog) close() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// createLog creates the log file of size bytes, its header saying every
// record up to marker is reflected in the files: written in full to a
// temporary file, fsynced, renamed into place and the log folder fsynced,
// so the log is always whole.
func (s *Store) createLog(size int64, marker uint64) (*walLog, error) {
	h := logHeader{gen: 1, salt: rand.Uint32(), marker: marker, start: marker + 1}
	data := make([]byte, size)
	copy(data[logBlock:], encodeSlot(h)) // gen 1: slot 1
	temp := walPath(logName + tempSuffix)
	if err := s.replaceFile(temp, data, syncOpen); err != nil {
		return nil, fmt.Errorf("create the log file: %w", err)
	}
	if err := s.walDir.renameTo(walBase(temp), s.walDir, logName, false); err != nil {
		s.walDir.remove(walBase(temp))
		return nil, fmt.Errorf("create the log file: %w", err)
	}
	if err := s.syncDir(walName, syncOpen); err != nil {
		return nil, fmt.Errorf("create the log file: %w", err)
	}
	return s.openLog(h, logFrames, 0)
}

// openLog opens the log file for appending, as the scan found it.
func (s *Store) openLog(h logHeader, off int64, last uint64) (*walLog, error) {
	f, err := s.walDir.openFile(logName, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("open the log file: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("open the log file: %w", err)
	}
	l := &walLog{f: f, limit: s.logLimit, hdr: h, off: off, size: fi.Size(), last: last}
	if s.sync {
		l.sync = s.syncCall
	}
	return l, nil
}
