package fs

import (
	"errors"
	"strings"
	"testing"

	"github.com/refine-spec/refine/store"
)

// The locked error is read by CLI users: it names commands, not library
// calls.
func TestLockedErrorNamesCommands(t *testing.T) {
	err := lockedError("/s", strings.NewReader("1\n"), "")
	msg := err.Error()
	if !errors.Is(err, store.ErrLocked) || strings.Contains(msg, "OpenReadOnly") || !strings.Contains(msg, "refine status --dir /s") {
		t.Errorf("locked error = %q; want ErrLocked naming refine status, not OpenReadOnly", msg)
	}
}
