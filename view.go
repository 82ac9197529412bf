package refine

import "context"

// bound is a Store read with a context bound: the view a driver hands
// the decisions (decide binds the session's Store and the cold storage
// under the Ready's writes), and how the loading code, which has a
// context, calls what the decisions share with it.
type bound struct {
	ctx context.Context
	st  Store
}

// bind returns st read with ctx.
func bind(ctx context.Context, st Store) bound { return bound{ctx: ctx, st: st} }

// Get returns key's value.
func (b bound) Get(key string) ([]byte, error) { return b.st.Get(b.ctx, key) }

// List returns the keys under prefix.
func (b bound) List(prefix string) ([]string, error) { return b.st.List(b.ctx, prefix) }
