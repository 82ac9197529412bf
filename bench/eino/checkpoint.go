package einobench

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"
)

// FileStore is an eino checkpoint store that keeps each checkpoint in a
// file of its own in Dir, written whole and fsynced on every Set: the
// "file + fsync" peer of issue #30. (It overwrites in place, not through
// a renamed temporary file, as that peer did: a crash mid-write can tear
// a checkpoint, which costs eino nothing here.)
type FileStore struct {
	// Dir holds the checkpoints, one file per checkpoint ID.
	Dir string
	// Sets counts the checkpoints written.
	Sets atomic.Int64
}

func (s *FileStore) path(id string) (string, error) {
	if id == "" || id != filepath.Base(id) || id == "." || id == ".." {
		return "", fmt.Errorf("checkpoint ID %q: want a plain file name", id)
	}
	return filepath.Join(s.Dir, id+".ckpt"), nil
}

// Get returns the checkpoint id, and false if there is none.
func (s *FileStore) Get(_ context.Context, id string) ([]byte, bool, error) {
	p, err := s.path(id)
	if err != nil {
		return nil, false, err
	}
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read checkpoint: %w", err)
	}
	return b, true, nil
}

// Set writes the checkpoint id and fsyncs the file before returning.
func (s *FileStore) Set(_ context.Context, id string, checkpoint []byte) error {
	p, err := s.path(id)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("write checkpoint: %w", err)
	}
	if _, err := f.Write(checkpoint); err != nil {
		f.Close()
		return fmt.Errorf("write checkpoint %s: %w", p, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("fsync checkpoint %s: %w", p, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close checkpoint %s: %w", p, err)
	}
	s.Sets.Add(1)
	return nil
}
