//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package fs

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/refine-spec/refine/store"
)

// What Open's recovery logs: the commits a clean Close leaves in the log
// are the normal path (Debug only, so an Info logger prints nothing); the
// same commits left by a writer that stopped without Close are a crash
// recovered from (Info).
func TestRecoveryLogsOnlyACrashAtInfo(t *testing.T) {
	tests := []struct {
		name     string
		stop     func(*Store)
		wantInfo string // "" : nothing at Info or above
	}{
		{"clean Close", func(s *Store) {
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
		}, ""},
		{"crash", (*Store).abandon, "recovered after a crash"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s := mustOpen(t, dir)
			// Logged, and left in the log: no idle checkpoint runs.
			if err := s.Commit(context.Background(), store.Put("state.json", []byte("{}"))); err != nil {
				t.Fatal(err)
			}
			tc.stop(s)
			if n, err := LoggedRecords(dir); err != nil || n == 0 {
				t.Fatalf("the log holds %d records (%v); the test needs one for Open to replay", n, err)
			}

			var info, debug bytes.Buffer
			log := slog.New(teeHandler{
				slog.NewTextHandler(&info, &slog.HandlerOptions{Level: slog.LevelInfo}),
				slog.NewTextHandler(&debug, &slog.HandlerOptions{Level: slog.LevelDebug}),
			})
			s2 := mustOpen(t, dir, WithLogger(log))
			defer s2.Close()
			if !strings.Contains(debug.String(), "records=1") {
				t.Errorf("the replay is not logged at Debug:\n%s", debug.String())
			}
			switch got := info.String(); {
			case tc.wantInfo == "" && got != "":
				t.Errorf("a clean reopen logs at Info or above:\n%s", got)
			case tc.wantInfo != "" && !strings.Contains(got, tc.wantInfo):
				t.Errorf("Info log = %q, want it to say %q", got, tc.wantInfo)
			}
		})
	}
}

// teeHandler sends every record to each handler that takes its level.
type teeHandler []slog.Handler

func (h teeHandler) Enabled(ctx context.Context, l slog.Level) bool {
	for _, x := range h {
		if x.Enabled(ctx, l) {
			return true
		}
	}
	return false
}

func (h teeHandler) Handle(ctx context.Context, r slog.Record) error {
	for _, x := range h {
		if x.Enabled(ctx, r.Level) {
			if err := x.Handle(ctx, r.Clone()); err != nil {
				return err
			}
		}
	}
	return nil
}

func (h teeHandler) WithAttrs(as []slog.Attr) slog.Handler {
	out := make(teeHandler, len(h))
	for i, x := range h {
		out[i] = x.WithAttrs(as)
	}
	return out
}

func (h teeHandler) WithGroup(name string) slog.Handler {
	out := make(teeHandler, len(h))
	for i, x := range h {
		out[i] = x.WithGroup(name)
	}
	return out
}
