package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/refine-spec/refine"
)

// cmdExport copies a session out of a store into a session folder:
// refine export --store URL --session ID --dir DIR.
func cmdExport(ctx context.Context, c *cli, args []string) int {
	fl := flag.NewFlagSet("refine export", flag.ContinueOnError)
	fl.SetOutput(c.stderr)
	store := fl.String("store", "", "the store holding the session (required)")
	id := fl.String("session", "", "the session's ID (required)")
	dir := fl.String("dir", "", "the session folder to write; must not hold a session yet (required)")
	if err := fl.Parse(args); err != nil {
		return exitUsage
	}
	if *store == "" || *id == "" || *dir == "" {
		fmt.Fprintln(c.stderr, "refine export: --store, --session and --dir are required")
		return exitUsage
	}
	if err := refuseExisting(*dir); err != nil {
		fmt.Fprintf(c.stderr, "refine export: %v\n", err)
		return exitUsage
	}
	src, loc, err := c.openLoc(ctx, "", *store, *id, openRead)
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
	store := fl.String("store", "", "the store to copy it into (required)")
	id := fl.String("session", "", "the new session's ID (default: a fresh one)")
	if err := fl.Parse(args); err != nil {
		return exitUsage
	}
	if *store == "" || *dir == "" {
		fmt.Fprintln(c.stderr, "refine import: --dir and --store are required")
		return exitUsage
	}
	// Opened for writing: a folder a crash left is recovered first, and a
	// live run's folder is refused rather than copied half-way.
	src, err := c.openSession(*dir, false)
	if err != nil {
		fmt.Fprintf(c.stderr, "refine import: %v\n", safeErr(err))
		return exitUsage
	}
	defer src.Close()
	u, err := parseStoreURL(*store)
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
	} else if nc, ok := b.(refine.NamedCreator); ok {
		dst, err = nc.CreateNamed(ctx, newID)
	} else {
		err = errors.New("this store cannot create a chosen ID; leave out --session")
	}
	if err != nil {
		fmt.Fprintf(c.stderr, "refine import: %v\n", safeErr(err))
		return exitUsage
	}
	n, err := copyKeys(ctx, src, dst)
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
	fmt.Fprintf(c.stdout, "Imported %s (%d files) as session %s\nContinue with: refine resume --store %s --session %s --llm …\n", *dir, n, newID, shellQuote(u.Shown), newID)
	return exitOK
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
	keys, err := src.List(ctx, "")
	if err != nil {
		return 0, err
	}
	ops := make([]refine.Op, 0, len(keys))
	for _, k := range keys {
		v, err := src.Get(ctx, k)
		if err != nil {
			return 0, err
		}
		ops = append(ops, refine.Put(k, v))
	}
	if err := dst.Commit(ctx, ops...); err != nil {
		return 0, err
	}
	return len(ops), nil
}
