package refine_test

import (
	"context"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/refinetest"
	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/store/fs"
	"github.com/refine-spec/refine/store/memory"
	"github.com/refine-spec/refine/store/sqlite"
)

// A session has one ID: the one its Store knows (a Backend's session, a
// session folder's name), in its state and in every listing (issue #23).
func TestSessionHasTheStoresID(t *testing.T) {
	ctx := context.Background()
	eng, rev := approvingRoles()
	sq, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "s.db"), sqlite.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer sq.Close()
	backends := map[string]store.Backend{
		"memory": memory.NewBackend(),
		"fs":     mustFS(t),
		"sqlite": sq,
	}
	for name, b := range backends {
		t.Run(name, func(t *testing.T) {
			id, st, err := b.Create(ctx)
			if err != nil {
				t.Fatal(err)
			}
			cfg := refinetest.Config(eng, rev, refine.DefaultAsker{})
			cfg.Store = st
			s, err := refine.New(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			status, _ := s.Status(ctx)
			if status.SessionID != id {
				t.Errorf("session ID %q, the %s Backend's %q", status.SessionID, name, id)
			}
			if c, ok := st.(interface{ Close() error }); ok {
				_ = c.Close()
			}
		})
	}
	// A session folder opened on its own is named by the folder.
	st, err := fs.Open(filepath.Join(t.TempDir(), "orders-api"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cfg := refinetest.Config(eng, rev, refine.DefaultAsker{})
	cfg.Store = st
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if status, _ := s.Status(ctx); status.SessionID != "orders-api" {
		t.Errorf("session ID %q, want the folder's name", status.SessionID)
	}
	// Without an ID from the Store: the Backends' format, random, so two
	// processes starting a session in the same second differ.
	seen := map[string]bool{}
	for range 2 {
		cfg := refinetest.Config(eng, rev, refine.DefaultAsker{})
		cfg.IDs = nil
		s, err := refine.New(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		status, _ := s.Status(ctx)
		if !regexp.MustCompile(`^\d{8}-\d{6}-[0-9a-f]{6}$`).MatchString(status.SessionID) || seen[status.SessionID] {
			t.Errorf("default session ID %q: want a fresh 20060102-150405-xxxxxx", status.SessionID)
		}
		seen[status.SessionID] = true
	}
}

func mustFS(t *testing.T) *fs.Backend {
	t.Helper()
	b, err := fs.OpenBackend(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return b
}
