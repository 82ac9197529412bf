package refine

import (
	"context"

	"github.com/refine-spec/refine/store"
)

// ListSessions returns one page of b's sessions, newest activity first, then
// by ID ([store.ListSessions]).
func ListSessions(ctx context.Context, b Backend, req PageRequest) (SessionPage, error) {
	return store.ListSessions(ctx, b, req)
}
