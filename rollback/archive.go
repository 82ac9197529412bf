package rollback

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/refine-spec/refine/internal/rollbackfmt"
)

// Archive errors. ReadArchive and ListArchive wrap one of them with the
// offending entry; match with errors.Is.
var (
	// errUnsafeArchive: an entry could escape or subvert extraction: an
	// absolute path, a ".." segment, a link, a device, or a name outside
	// the Store key alphabet.
	errUnsafeArchive = errors.New("unsafe archive")
	// errArchiveTooLarge: the archive unpacks to more than Limits allow.
	errArchiveTooLarge = errors.New("archive too large")
	// errCorruptArchive: not a well-formed gzip'd tar of a rolled-back
	// round (truncated, bad checksum, missing or invalid metadata).
	errCorruptArchive = errors.New("corrupt archive")
)

// maxUnpacked is the default limit on the bytes an archive unpacks to
// (64 MiB), so reading back an archive cannot exhaust memory.
const maxUnpacked int64 = 64 << 20

// defaultMaxEntries is the default limit on the number of entries.
const defaultMaxEntries = 4096

// Names inside an archive.
const (
	// MetadataName is the metadata file at the archive folder's top.
	MetadataName = "rollback_metadata.json"
	// analysisName is the optional rollback analysis report.
	analysisName = "analysis.md"
)

// RoundPrefix is the key prefix of round n's folder ("round_005/").
func RoundPrefix(n int) string { return fmt.Sprintf("round_%03d/", n) }

// ArchiveFolder is the folder an archive of round n unpacks to
// ("round_005_rolled_back"), as the spec's rename-then-tar produces.
func ArchiveFolder(n int) string { return fmt.Sprintf("round_%03d_rolled_back", n) }

// DecisionsFileName is the archived decisions file of round n
// ("decisions_from_round_5.md").
func DecisionsFileName(n int) string { return fmt.Sprintf("decisions_from_round_%d.md", n) }

// ArchiveName is the key of the k-th archive of round n
// ("round_005_rolled_back_1.tar.gz"); k counts that round's rollbacks from 1.
func ArchiveName(n, k int) string { return fmt.Sprintf("round_%03d_rolled_back_%d.tar.gz", n, k) }

var (
	archiveNamePattern   = regexp.MustCompile(`^round_(\d{3,6})_rolled_back_([1-9]\d{0,5})\.tar\.gz$`)
	archiveFolderPattern = regexp.MustCompile(`^round_(\d{3,6})_rolled_back$`)
)

// ParseArchiveName recognises an archive key and returns its round and
// rollback number.
func ParseArchiveName(name string) (round, k int, ok bool) {
	m := archiveNamePattern.FindStringSubmatch(name)
	if m == nil {
		return 0, 0, false
	}
	round, _ = strconv.Atoi(m[1])
	k, _ = strconv.Atoi(m[2])
	if fmt.Sprintf("%03d", round) != m[1] || round < 1 {
		return 0, 0, false // "round_0005" is not how round 5 is written
	}
	return round, k, true
}

// Metadata is rollback_metadata.json. The first five fields are the spec's,
// with its names; the rest record what the spec shows elsewhere (mode,
// trigger, the round restored to).
type Metadata struct {
	OriginalRound     int
	RollbackTimestamp time.Time // written as YYYY-MM-DDTHH:MM:SSZ
	Reason            string
	AttemptNumber     int
	UserAdjustments   []string
	Mode              Mode
	Trigger           Trigger
	// TargetRound is the round the session was restored to (OriginalRound-1
	// for a single-round rollback).
	TargetRound int
}

type metadataJSON struct {
	OriginalRound     int      `json:"original_round"`
	RollbackTimestamp string   `json:"rollback_timestamp"`
	Reason            string   `json:"reason"`
	AttemptNumber     int      `json:"attempt_number"`
	UserAdjustments   []string `json:"user_adjustments"`
	Mode              Mode     `json:"mode,omitempty"`
	Trigger           Trigger  `json:"trigger,omitempty"`
	TargetRound       int      `json:"target_round"`
}

// MarshalJSON writes the spec's field names and timestamp format;
// user_adjustments is always an array.
func (m Metadata) MarshalJSON() ([]byte, error) {
	adj := m.UserAdjustments
	if adj == nil {
		adj = []string{}
	}
	return marshalNoEscape(metadataJSON{
		OriginalRound: m.OriginalRound, RollbackTimestamp: rollbackfmt.FormatTimestamp(m.RollbackTimestamp),
		Reason: m.Reason, AttemptNumber: m.AttemptNumber, UserAdjustments: adj,
		Mode: m.Mode, Trigger: m.Trigger, TargetRound: m.TargetRound,
	})
}

// marshalNoEscape is json.Marshal without HTML escaping: the files are read
// by people and tools, not embedded in HTML, and "<" should stay "<".
func marshalNoEscape(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// UnmarshalJSON reads rollback_metadata.json.
func (m *Metadata) UnmarshalJSON(b []byte) error {
	var j metadataJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	t, err := rollbackfmt.ParseTimestamp(j.RollbackTimestamp)
	if err != nil {
		return err
	}
	*m = Metadata{
		OriginalRound: j.OriginalRound, RollbackTimestamp: t, Reason: j.Reason,
		AttemptNumber: j.AttemptNumber, UserAdjustments: j.UserAdjustments,
		Mode: j.Mode, Trigger: j.Trigger, TargetRound: j.TargetRound,
	}
	return nil
}

func (m Metadata) validate() error {
	switch {
	case m.OriginalRound < 1:
		return fmt.Errorf("original_round %d: must be >= 1", m.OriginalRound)
	case m.AttemptNumber < 1:
		return fmt.Errorf("attempt_number %d: must be >= 1", m.AttemptNumber)
	case m.RollbackTimestamp.IsZero():
		return errors.New("rollback_timestamp is unset")
	case m.TargetRound < 0 || m.TargetRound >= m.OriginalRound:
		return fmt.Errorf("target_round %d: must be in [0, %d)", m.TargetRound, m.OriginalRound)
	}
	return nil
}

// encodeMetadata is the metadata file's bytes: two-space indented like the
// spec's sample, no HTML escaping (a reason may contain "<"), trailing newline.
func encodeMetadata(m Metadata) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(m); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// ArchiveOption adds optional content to BuildArchive.
type ArchiveOption func(*archiveOptions)

type archiveOptions struct{ analysis string }

// withAnalysis adds analysis.md (the "Rollback Analysis" report) to the archive.
func withAnalysis(markdown string) ArchiveOption {
	return func(o *archiveOptions) { o.analysis = markdown }
}

// BuildArchive produces the archive of a rolled-back round: a gzip'd tar of
// the folder round_NNN_rolled_back/ holding the round folder's files (files
// maps Store keys under RoundPrefix(meta.OriginalRound) to their bytes),
// rollback_metadata.json, decisions_from_round_N.md (decisionsFromRound; the
// empty string renders DecisionsFromRound with no decisions) and optionally
// analysis.md.
//
// The bytes are deterministic for the same input: entries sorted by name,
// directories before their contents, every mtime the rollback timestamp,
// files 0600 and folders 0700 (owner-only, like every session file), no
// owner names, and a gzip header with no name or time. An archive ReadArchive would refuse (more
// than maxUnpacked, unsafe names) is refused here.
func BuildArchive(files map[string][]byte, meta Metadata, decisionsFromRound string, opts ...ArchiveOption) ([]byte, error) {
	var o archiveOptions
	for _, opt := range opts {
		opt(&o)
	}
	if err := meta.validate(); err != nil {
		return nil, fmt.Errorf("rollback: build archive: metadata: %w", err)
	}
	round := meta.OriginalRound
	prefix := RoundPrefix(round)
	reserved := map[string]bool{MetadataName: true, DecisionsFileName(round): true, analysisName: true}

	content := make(map[string][]byte, len(files)+3)
	var total int64
	for key, data := range files {
		rel, ok := strings.CutPrefix(key, prefix)
		if !ok {
			return nil, fmt.Errorf("rollback: build archive: key %q is not in round %d's folder %s", key, round, prefix)
		}
		if why := unsafeName(rel); why != "" {
			return nil, fmt.Errorf("rollback: build archive: key %q: %s", key, why)
		}
		if reserved[rel] {
			return nil, fmt.Errorf("rollback: build archive: key %q collides with the archive's own %s", key, rel)
		}
		content[rel] = data
		total += int64(len(data))
	}
	if decisionsFromRound == "" {
		decisionsFromRound = DecisionsFromRound(round, nil)
	}
	content[DecisionsFileName(round)] = []byte(decisionsFromRound)
	mj, err := encodeMetadata(meta)
	if err != nil {
		return nil, fmt.Errorf("rollback: build archive: %w", err)
	}
	content[MetadataName] = mj
	if o.analysis != "" {
		content[analysisName] = []byte(o.analysis)
	}
	total += int64(len(decisionsFromRound) + len(mj) + len(o.analysis))
	if total > maxUnpacked {
		return nil, fmt.Errorf("rollback: build archive: %w: %d bytes, the limit is %d", errArchiveTooLarge, total, maxUnpacked)
	}
	dirs, err := directories(content)
	if err != nil {
		return nil, fmt.Errorf("rollback: build archive: %w", err)
	}

	top := ArchiveFolder(round)
	names := []string{top + "/"}
	for d := range dirs {
		names = append(names, top+"/"+d+"/")
	}
	for rel := range content {
		names = append(names, top+"/"+rel)
	}
	slices.Sort(names) // a parent is a prefix of its children, so it sorts first

	mtime := meta.RollbackTimestamp.UTC().Truncate(time.Second)
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, name := range names {
		h := &tar.Header{Name: name, ModTime: mtime}
		var data []byte
		if strings.HasSuffix(name, "/") {
			h.Typeflag, h.Mode = tar.TypeDir, 0o700
		} else {
			data = content[strings.TrimPrefix(name, top+"/")]
			h.Typeflag, h.Mode, h.Size = tar.TypeReg, 0o600, int64(len(data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("rollback: build archive: %s: %w", name, err)
		}
		if _, err := tw.Write(data); err != nil {
			return nil, fmt.Errorf("rollback: build archive: %s: %w", name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("rollback: build archive: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("rollback: build archive: %w", err)
	}
	return buf.Bytes(), nil
}

// directories returns every parent folder of the relative paths in files,
// and fails when a path is both a file and a folder (extraction would
// break).
func directories(files map[string][]byte) (map[string]bool, error) {
	dirs := map[string]bool{}
	for rel := range files {
		for i := strings.IndexByte(rel, '/'); i >= 0; {
			dirs[rel[:i]] = true
			j := strings.IndexByte(rel[i+1:], '/')
			if j < 0 {
				break
			}
			i += 1 + j
		}
	}
	for rel := range files {
		if dirs[rel] {
			return nil, fmt.Errorf("%q is both a file and a folder", rel)
		}
	}
	return dirs, nil
}

// unsafeName returns why a relative entry path is unacceptable, or "".
// Names are held to the Store key rules (relative, '/'-separated, made of
// [A-Za-z0-9._/-], no ".." segment; see docs/workflow.md#session-folder),
// which rules out absolute paths, "..", backslashes, drive letters and
// control bytes.
func unsafeName(name string) string {
	switch {
	case name == "":
		return "empty name"
	case len(name) > 1024:
		return "name longer than 1024 bytes"
	case name[0] == '/':
		return "absolute path"
	case len(name) >= 2 && name[1] == ':':
		return "absolute path (drive letter)"
	case strings.IndexByte(name, '\\') >= 0:
		return "backslash in path"
	}
	for seg := range strings.SplitSeq(name, "/") {
		switch seg {
		case "..":
			return `".." path segment (path traversal)`
		case ".":
			return `"." path segment`
		case "":
			return "empty path segment"
		}
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '/' || c == '-') {
			return fmt.Sprintf("byte %q at %d is not one of [A-Za-z0-9._/-]", c, i)
		}
	}
	return ""
}

// Limits bound what reading an archive may unpack. The zero value means the
// defaults (maxUnpacked, defaultMaxEntries).
type Limits struct {
	// maxBytes bounds the file content unpacked, counted as bytes actually
	// read (so a lying header or a sparse file cannot get past it).
	maxBytes int64
	// maxEntries bounds the number of entries, folders included.
	maxEntries int
}

func (l Limits) norm() Limits {
	if l.maxBytes <= 0 {
		l.maxBytes = maxUnpacked
	}
	if l.maxEntries <= 0 {
		l.maxEntries = defaultMaxEntries
	}
	return l
}

// streamCap bounds the whole decompressed tar stream (headers, PAX records,
// padding and file data), so a bomb made of headers rather than content is
// stopped too. Each entry may cost a few header blocks and at most one PAX
// record; 4 KiB per entry plus 2 MiB of slack is generous for both.
func (l Limits) streamCap() int64 {
	return l.maxBytes + int64(l.maxEntries)*4096 + 2<<20
}

var errStreamCap = errors.New("decompressed stream limit reached")

// capReader fails once more than n bytes have been read through it.
type capReader struct {
	r io.Reader
	n int64
}

// Read reads from the underlying reader until the cap is spent.
func (c *capReader) Read(p []byte) (int, error) {
	if c.n <= 0 {
		return 0, errStreamCap
	}
	if int64(len(p)) > c.n {
		p = p[:c.n]
	}
	n, err := c.r.Read(p)
	c.n -= int64(n)
	return n, err
}

// Entry is one member of an archive, as ListArchive reports it.
type Entry struct {
	Name    string
	size    int64
	Dir     bool
	mode    int64
	modTime time.Time
}

// walk decompresses and checks every entry of an archive, calling fn with
// each entry and, when keep is set, its content. It verifies the gzip
// checksum at the end, so truncation and corruption are reported.
func walk(b []byte, lim Limits, keep bool, fn func(Entry, []byte) error) error {
	lim = lim.norm()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("%w: not a gzip stream: %v", errCorruptArchive, err)
	}
	stream := &capReader{r: zr, n: lim.streamCap()}
	tr := tar.NewReader(stream)
	streamErr := func(what string, err error) error {
		if errors.Is(err, errStreamCap) {
			return fmt.Errorf("%w: decompressed stream exceeds %d bytes", errArchiveTooLarge, lim.streamCap())
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return fmt.Errorf("%w: %s: truncated", errCorruptArchive, what)
		}
		return fmt.Errorf("%w: %s: %v", errCorruptArchive, what, err)
	}
	seen := map[string]bool{}
	var total int64
	for entries := 0; ; entries++ {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return streamErr("reading entry header", err)
		}
		if entries >= lim.maxEntries {
			return fmt.Errorf("%w: more than %d entries", errArchiveTooLarge, lim.maxEntries)
		}
		name := h.Name
		isDir := h.Typeflag == tar.TypeDir
		if isDir {
			name = strings.TrimSuffix(name, "/")
		}
		if why := unsafeName(name); why != "" {
			return fmt.Errorf("%w: entry %q: %s", errUnsafeArchive, h.Name, why)
		}
		switch h.Typeflag {
		case tar.TypeReg, tar.TypeDir:
		case tar.TypeSymlink:
			return fmt.Errorf("%w: entry %q: symbolic link (to %q)", errUnsafeArchive, h.Name, h.Linkname)
		case tar.TypeLink:
			return fmt.Errorf("%w: entry %q: hard link (to %q)", errUnsafeArchive, h.Name, h.Linkname)
		case tar.TypeChar, tar.TypeBlock:
			return fmt.Errorf("%w: entry %q: device file", errUnsafeArchive, h.Name)
		case tar.TypeFifo:
			return fmt.Errorf("%w: entry %q: named pipe", errUnsafeArchive, h.Name)
		default:
			return fmt.Errorf("%w: entry %q: unsupported type %q (only files and folders)", errUnsafeArchive, h.Name, h.Typeflag)
		}
		if seen[name] {
			return fmt.Errorf("%w: entry %q appears twice", errCorruptArchive, name)
		}
		seen[name] = true
		e := Entry{Name: name, Dir: isDir, mode: h.Mode, modTime: h.ModTime}
		var data []byte
		if !isDir {
			left := lim.maxBytes - total
			if h.Size < 0 {
				return fmt.Errorf("%w: entry %q: negative size", errCorruptArchive, name)
			}
			if h.Size > left {
				return fmt.Errorf("%w: entry %q declares %d bytes; the archive may unpack to at most %d", errArchiveTooLarge, name, h.Size, lim.maxBytes)
			}
			// The header's size is a claim; count the bytes that actually
			// arrive, reading at most left+1 so a stream that delivers more
			// than it declared is stopped at the limit too.
			var n int64
			if keep {
				data = make([]byte, h.Size) // h.Size <= left: bounded by the limit
				var m int
				m, err = io.ReadFull(tr, data)
				n = int64(m)
				if err == nil {
					var extra int64
					extra, err = io.Copy(io.Discard, io.LimitReader(tr, left-n+1))
					n += extra
				}
			} else {
				n, err = io.Copy(io.Discard, io.LimitReader(tr, left+1))
			}
			if err != nil {
				return streamErr(fmt.Sprintf("reading entry %q", name), err)
			}
			total += n
			if total > lim.maxBytes {
				return fmt.Errorf("%w: unpacks to more than %d bytes (at entry %q)", errArchiveTooLarge, lim.maxBytes, name)
			}
			e.size = n
		}
		if err := fn(e, data); err != nil {
			return err
		}
	}
	// Drain the rest (tar padding) so the gzip trailer is checked.
	if _, err := io.Copy(io.Discard, stream); err != nil {
		return streamErr("reading gzip trailer", err)
	}
	return nil
}

// ListArchive lists an archive's entries in archive order, applying the
// same safety checks and limits as ReadArchive but not requiring the
// rolled-back-round layout; for `refine archives`.
func ListArchive(b []byte, lim Limits) ([]Entry, error) {
	var out []Entry
	err := walk(b, lim, false, func(e Entry, _ []byte) error {
		out = append(out, e)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("rollback: list archive: %w", err)
	}
	return out, nil
}

// ReadArchive unpacks an archive made by BuildArchive, in memory. It returns
// the files keyed by their path inside the archive folder ("engineer.md",
// "attempts/engineer-1.md", "rollback_metadata.json",
// "decisions_from_round_5.md", "analysis.md") and the parsed metadata.
//
// It refuses, with an error wrapping errUnsafeArchive, absolute paths, ".."
// segments, names outside the Store key alphabet, symbolic and hard links,
// devices, pipes and any other non-file, non-folder entry; with
// errArchiveTooLarge, more than lim.MaxBytes of content (counted as read,
// before it is all allocated) or lim.MaxEntries entries; with
// errCorruptArchive, bad or truncated gzip or tar data, duplicate entries,
// entries outside a single round_NNN_rolled_back/ folder, and missing or
// inconsistent metadata.
func ReadArchive(b []byte, lim Limits) (map[string][]byte, Metadata, error) {
	fail := func(err error) (map[string][]byte, Metadata, error) {
		return nil, Metadata{}, fmt.Errorf("rollback: read archive: %w", err)
	}
	files := map[string][]byte{}
	var top string
	err := walk(b, lim, true, func(e Entry, data []byte) error {
		folder, rel, _ := strings.Cut(e.Name, "/")
		if !archiveFolderPattern.MatchString(folder) {
			return fmt.Errorf("%w: entry %q is not inside a round_NNN_rolled_back/ folder", errCorruptArchive, e.Name)
		}
		if top == "" {
			top = folder
		} else if folder != top {
			return fmt.Errorf("%w: entries in two folders, %q and %q", errCorruptArchive, top, folder)
		}
		if e.Dir {
			return nil
		}
		if rel == "" {
			return fmt.Errorf("%w: %q is a file, want a folder", errCorruptArchive, e.Name)
		}
		files[rel] = data
		return nil
	})
	if err != nil {
		return fail(err)
	}
	if top == "" {
		return fail(fmt.Errorf("%w: empty archive", errCorruptArchive))
	}
	if _, err := directories(files); err != nil {
		return fail(fmt.Errorf("%w: %v", errCorruptArchive, err))
	}
	raw, ok := files[MetadataName]
	if !ok {
		return fail(fmt.Errorf("%w: no %s", errCorruptArchive, MetadataName))
	}
	var meta Metadata
	if err := json.Unmarshal(raw, &meta); err != nil {
		return fail(fmt.Errorf("%w: %s: %v", errCorruptArchive, MetadataName, err))
	}
	if err := meta.validate(); err != nil {
		return fail(fmt.Errorf("%w: %s: %v", errCorruptArchive, MetadataName, err))
	}
	if ArchiveFolder(meta.OriginalRound) != top {
		return fail(fmt.Errorf("%w: folder %s holds metadata of round %d", errCorruptArchive, top, meta.OriginalRound))
	}
	return files, meta, nil
}

// roundFiles maps the round-folder files of an unpacked archive back to
// their Store keys ("engineer.md" → "round_005/engineer.md"), leaving out the
// archive's own metadata, decisions and analysis files.
func roundFiles(files map[string][]byte, round int) map[string][]byte {
	out := map[string][]byte{}
	for _, rel := range slices.Sorted(maps.Keys(files)) {
		switch rel {
		case MetadataName, DecisionsFileName(round), analysisName:
			continue
		}
		out[RoundPrefix(round)+rel] = files[rel]
	}
	return out
}
