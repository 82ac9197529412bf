package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/store/fs"
)

// cmdExport copies a session out of a store into a session folder:
// refine export --store URL --session ID --dir DIR.
func cmdExport(ctx context.Context, c *cli, args []string) int {
	fl := flag.NewFlagSet("refine export", flag.ContinueOnError)
	fl.SetOutput(c.stderr)
	storeURL := storeFlag(fl, "", "the store holding the session (required)")
	id := fl.String("session", "", "the session's ID (required)")
	dir := fl.String("dir", "", "the session folder to write; must not hold a session yet (required)")
	if err := fl.Parse(args); err != nil {
		return exitUsage
	}
	if *storeURL == "" || *id == "" || *dir == "" {
		fmt.Fprintln(c.stderr, "refine export: --store, --session and --dir are required")
		return exitUsage
	}
	if err := refuseExisting(*dir); err != nil {
		fmt.Fprintf(c.stderr, "refine export: %v\n", err)
		return exitUsage
	}
	src, loc, err := c.openLoc(ctx, "", *storeURL, *id, openRead)
	if err != nil {
		fmt.Fprintf(c.stderr, "refine export: %v\n", safeErr(err))
		return exitUsage
	}
	defer src.Close()
	dst, err := c.openStore(*dir)
	if err != nil {
		fmt.Fprintf(c.stderr, "refine export: %v\n", safeErr(err))
		return exitUsage
	}
	n, err := copyKeys(ctx, src, dst)
	if err == nil {
		// The folder stands on its own: one whole state.json, whole state
		// backups, no journal.
		err = refine.Compact(ctx, dst)
	}
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		fmt.Fprintf(c.stderr, "refine export: %v\n", safeErr(err))
		return exitFailed
	}
	fmt.Fprintf(c.stdout, "Exported session %s (%d files) to %s\nOpen %s first; continue there with: refine resume --dir %s --llm …\n",
		safeLine(loc.id), n, *dir, filepath.Join(*dir, "status.md"), *dir)
	return exitOK
}

// cmdImport copies a session folder into a store: refine import --dir DIR
// --store URL [--session ID].
func cmdImport(ctx context.Context, c *cli, args []string) int {
	fl := flag.NewFlagSet("refine import", flag.ContinueOnError)
	fl.SetOutput(c.stderr)
	dir := fl.String("dir", "", "the session folder to read (required)")
	storeURL := storeFlag(fl, "", "the store to copy it into (required)")
	id := fl.String("session", "", "the new session's ID (default: a fresh one)")
	limit := fl.Int64("max-file-bytes", maxInputBytes, "refuse the import if a file of the folder is larger than this")
	if err := fl.Parse(args); err != nil {
		return exitUsage
	}
	if *storeURL == "" || *dir == "" {
		fmt.Fprintln(c.stderr, "refine import: --dir and --store are required")
		return exitUsage
	}
	if *limit <= 0 {
		fmt.Fprintf(c.stderr, "refine import: --max-file-bytes %d: give a positive size\n", *limit)
		return exitUsage
	}
	// Opened read-only, as its log says: the folder is never written (a
	// crashed run's last commits are read from its log, not replayed into
	// the folder), and a live run's folder is refused rather than copied
	// half-way.
	src, err := openSnapshot(*dir)
	if err != nil {
		fmt.Fprintf(c.stderr, "refine import: %v\n", safeErr(err))
		return exitUsage
	}
	defer src.Close()
	// Every value is checked against the limit, from its size, before any
	// is read.
	sizes, err := valueSizes(ctx, src, *limit)
	var skipped []skippedEntry
	if err == nil {
		skipped, err = scanFolder(*dir)
	}
	if err != nil {
		fmt.Fprintf(c.stderr, "refine import: %v\n", safeErr(err))
		return exitUsage
	}
	u, err := parseStoreURL(*storeURL)
	if err != nil {
		fmt.Fprintf(c.stderr, "refine import: %v\n", err)
		return exitUsage
	}
	b, err := c.openBackend(ctx, u)
	if err != nil {
		fmt.Fprintf(c.stderr, "refine import: %v\n", safeErr(err))
		return exitUsage
	}
	defer b.Close()
	var dst refine.Store
	newID := *id
	if newID == "" {
		newID, dst, err = b.Create(ctx)
	} else if nc, ok := b.(store.NamedCreator); ok {
		dst, err = nc.CreateNamed(ctx, newID)
	} else {
		err = errors.New("this store cannot create a chosen ID; leave out --session")
	}
	if err != nil {
		fmt.Fprintf(c.stderr, "refine import: %v\n", safeErr(err))
		return exitUsage
	}
	n, err := copyKeysLimited(ctx, src, dst, sizes, *limit)
	if cl, ok := dst.(io.Closer); ok {
		if cerr := cl.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		// Leave no half-imported session behind (the copy is one commit,
		// so the session is empty; remove it).
		_ = b.Delete(context.WithoutCancel(ctx), newID)
		fmt.Fprintf(c.stderr, "refine import: %v\n", safeErr(err))
		return exitFailed
	}
	loc := sessionLoc{store: u.Shown, id: newID}
	fmt.Fprintf(c.stdout, "Imported %s (%d files) as session %s\n%s\n", *dir, n, newID, importedNext(ctx, src, loc))
	for _, sk := range skipped {
		fmt.Fprintf(c.stderr, "refine import: skipped %s: %s\n", safeLine(sk.path), sk.why)
	}
	return exitOK
}

// openSnapshot opens the session folder dir read-only, as its log says
// (fs.OpenSnapshot): nothing is written to it.
func openSnapshot(dir string) (*fs.Store, error) {
	if err := checkSessionDir(dir); err != nil {
		return nil, err
	}
	return fs.OpenSnapshot(dir)
}

// valueSizes returns the size of every value of src, refusing one above
// limit before any is read.
func valueSizes(ctx context.Context, src *fs.Store, limit int64) (map[string]int64, error) {
	keys, err := src.List(ctx, "")
	if err != nil {
		return nil, err
	}
	sizes := make(map[string]int64, len(keys))
	for _, k := range keys {
		n, err := src.Size(ctx, k)
		if err != nil {
			return nil, err
		}
		if n > limit {
			return nil, tooLarge(k, n, limit)
		}
		sizes[k] = n
	}
	return sizes, nil
}

// refuseExisting fails if dir already holds a session (or anything at
// all), so an export never mixes two sessions' files.
func refuseExisting(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if len(entries) > 0 {
		return fmt.Errorf("%s is not empty; pick a new folder", dir)
	}
	return nil
}

// copyKeys copies every key of src into dst in one commit, so the copy is
// whole or absent.
func copyKeys(ctx context.Context, src, dst refine.Store) (int, error) {
	return copyKeysLimited(ctx, src, dst, nil, -1)
}

// copyKeysLimited is copyKeys refusing a value above limit bytes (-1: no
// limit): a value whose size (sizes, from valueSizes) is above it is
// refused before it is read.
func copyKeysLimited(ctx context.Context, src, dst refine.Store, sizes map[string]int64, limit int64) (int, error) {
	keys, err := src.List(ctx, "")
	if err != nil {
		return 0, err
	}
	ops := make([]store.Op, 0, len(keys))
	for _, k := range keys {
		if size, ok := sizes[k]; ok && limit >= 0 && size > limit {
			return 0, tooLarge(k, size, limit)
		}
		v, err := src.Get(ctx, k)
		if err != nil {
			return 0, err
		}
		if limit >= 0 && int64(len(v)) > limit {
			return 0, tooLarge(k, int64(len(v)), limit)
		}
		ops = append(ops, store.Put(k, v))
	}
	if err := dst.Commit(ctx, ops...); err != nil {
		return 0, err
	}
	return len(ops), nil
}

// tooLarge is the error of a file above the import's limit.
func tooLarge(key string, size, limit int64) error {
	return fmt.Errorf("%s is %w: %d bytes, above the limit of %d bytes; nothing was imported (--max-file-bytes raises the limit)",
		key, errTooLarge, size, limit)
}

// skippedEntry is an entry of a session folder an import does not copy.
type skippedEntry struct{ path, why string }

// scanFolder walks the session folder dir without following links, and
// returns the entries an import does not copy, with why: links, named
// pipes, devices, sockets and names that cannot be store keys. It reads
// no file.
func scanFolder(dir string) ([]skippedEntry, error) {
	var skipped []skippedEntry
	err := filepath.WalkDir(dir, func(p string, d iofs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, rerr := filepath.Rel(dir, p)
		if rerr != nil || rel == "." {
			return rerr
		}
		key := filepath.ToSlash(rel)
		if strings.HasPrefix(strings.ToLower(key), ".refine") {
			if d.IsDir() {
				return iofs.SkipDir
			}
			return nil // the store's own files (lock, log)
		}
		skip := func(why string) error {
			skipped = append(skipped, skippedEntry{key, why})
			if d.IsDir() {
				return iofs.SkipDir
			}
			return nil
		}
		if err := store.ValidKey(key); err != nil {
			return skip(fmt.Sprintf("the name cannot be a session key (%v)", err))
		}
		switch t := d.Type(); {
		case d.IsDir():
			return nil
		case t&iofs.ModeSymlink != 0:
			return skip("a symbolic link (links are not followed; copy the file it points to instead)")
		case t&iofs.ModeNamedPipe != 0:
			return skip("a named pipe (FIFO), not a file")
		case t&iofs.ModeSocket != 0:
			return skip("a socket, not a file")
		case t&iofs.ModeDevice != 0, t&iofs.ModeCharDevice != 0:
			return skip("a device, not a file")
		case !t.IsRegular():
			return skip("not a regular file")
		}
		return nil
	})
	return skipped, err
}

// importedNext says what to do with a session just imported, by where it
// stands: a finished one is read, not resumed (#40).
func importedNext(ctx context.Context, src refine.Store, loc sessionLoc) string {
	st, err := refine.Inspect(ctx, src)
	if err != nil {
		return fmt.Sprintf("Continue with: refine resume %s --llm …", loc.flags())
	}
	switch {
	case st.Outcome.Terminal() && len(st.Pending) > 0:
		return fmt.Sprintf("The session is finished (%s); a question still waits: refine resume %s --answer KEY", st.Outcome, loc.flags())
	case st.Outcome.Terminal():
		return fmt.Sprintf("The session is finished (%s): read it with refine status %s, or refine serve --store %s", st.Outcome, loc.flags(), shellQuote(loc.store))
	case len(st.Pending) > 0:
		return fmt.Sprintf("The session waits for an answer: refine resume %s --answer KEY[:text]", loc.flags())
	}
	return fmt.Sprintf("Continue with: refine resume %s --llm …", loc.flags())
}
