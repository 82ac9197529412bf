package fs

import (
	"errors"
	"fmt"
	"os"
)

// Spares. Creating a file is the dearest part of a put: on the project
// machine (ext4 on a VM) an exclusive create took 60-400 µs, while opening
// an existing file, rewriting it and truncating it took about 6 µs. So
// when replace swaps a new value into its key (renameat2 RENAME_EXCHANGE),
// the old value's file, now at the put's temporary name in the log folder,
// is kept as a spare rather than removed, and a later put writes its value
// into a spare instead of creating a file.
//
// Why this keeps every guarantee:
//
//   - A spare is never at a key, so in-process readers, which only read
//     keys and are kept out while apply moves files, never see one being
//     rewritten; and a value is moved to its key only after it is written
//     in full, so a key always names a whole value.
//   - A reader in another process (OpenReadOnly) may have opened a key's
//     file just before a commit swapped it out. It takes a shared flock on
//     the file and then checks the key still names it (readOnce); a spare
//     is only rewritten under an exclusive flock taken without waiting, so
//     a spare such a reader holds is left alone (removed, and a file
//     created instead), and a file the reader checked cannot change while
//     it reads. Programs other than this store that keep a key's file open
//     across a later commit may see it rewritten; they should re-open the
//     key, which always names a whole value.
//   - Crashes and power loss: spares are temporary files, discarded by
//     Open. A spare's old contents are rewritten, without fsync, only
//     after the commit that swapped it out is logged; should a power loss
//     undo that swap, leaving the rewritten file at its old key, that
//     key's commit is either still in the log, which Open replays, or was
//     checkpointed, which fsynced the key's folder so the swap cannot be
//     undone.
//   - A spare is rewritten only if it is a regular file with mode 0600,
//     owned by this user, with no other link (a planted hard link at a key
//     must not let a put write outside the folder); otherwise it is
//     removed and a file created.
//
// A commit's new keys (a round's prompts, attempts and outputs) find no
// spare from their own puts, so when the applier is idle (in a session,
// while a role is called) it creates empty spares until spareTarget are
// ready: the files a later commit puts are created off its path, and
// Close, which waits for the last commit's files, waits for rewrites
// rather than creates.
//
// Spares exist only where exchange works (Linux); elsewhere puts create
// their files as before.
const (
	maxSpares   = 64
	spareTarget = 16
)

// errNotSpare: a spare failed the checks above, or a reader holds it.
var errNotSpare = errors.New("not reusable as a spare")

// tempName returns the temporary file for put i of commit seq: a spare if
// there is one. Only the owner of the spares (the applier, or Open and
// Close around it) may call it.
func (s *Store) tempName(seq uint64, i int) (name string, spare bool) {
	if n := len(s.spares); n > 0 {
		name = s.spares[n-1]
		s.spares = s.spares[:n-1]
		return name, true
	}
	return walPath(fmt.Sprintf("%0*d-%d%s", seqDigits, seq, i, tempSuffix)), false
}

// keepSpare keeps temp, which holds a value swapped out of a key, as a
// spare, or removes it if there are enough. Only the owner of the spares
// may call it.
func (s *Store) keepSpare(temp string) {
	if recycles && len(s.spares) < maxSpares {
		s.spares = append(s.spares, temp)
		return
	}
	if err := s.walDir.remove(walBase(temp)); err != nil {
		// Open discards it with the other temporary files.
		s.log.Warn("fs: could not remove a replaced value; the next Open discards it", "dir", s.dir, "file", temp, "err", err)
	}
}

// makeSpare creates an empty spare. Only the owner of the spares may call
// it.
func (s *Store) makeSpare() error {
	s.spareSeq++
	name := walPath(fmt.Sprintf("spare-%d%s", s.spareSeq, tempSuffix))
	if err := s.writeFile(name, nil, syncNone); err != nil {
		return fmt.Errorf("create spare %s: %w", name, err)
	}
	s.spares = append(s.spares, name)
	return nil
}

// dropSpares removes the spares, at Close: they hold old values.
func (s *Store) dropSpares() {
	for _, t := range s.spares {
		s.walDir.remove(walBase(t))
	}
	s.spares = nil
}

// writeSpare writes data over the spare rel, without fsync. An error
// wrapping errNotSpare means rel is left as it was and must not be used.
func (s *Store) writeSpare(rel string, data []byte) error {
	return s.walDir.rewrite(walBase(rel), data, func(fi os.FileInfo) bool { return reusable(fi, s.euid) })
}
