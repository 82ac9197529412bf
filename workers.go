package refine

import "context"

// Workers runs the concurrent role calls of parallel drafting and carries
// their messages back to the session's goroutine; every other step of a
// session runs on the goroutine that called Run, Step or Rollback. The
// default (nil in Config) uses goroutines and channels. A durable-execution
// host, where goroutines would break replay, supplies its own: the temporal
// module runs calls as workflow coroutines.
type Workers interface {
	// Go runs work concurrently. The ctx handed to work derives from ctx
	// and is the one work calls the Role and its Channel with.
	Go(ctx context.Context, work func(ctx context.Context))
	// NewChannel returns an unbuffered channel between the workers and the
	// session's goroutine.
	NewChannel(ctx context.Context) Channel
}

// Channel is an unbuffered channel made by Workers.NewChannel.
type Channel interface {
	// Send blocks until v is received.
	Send(ctx context.Context, v any)
	// Receive blocks until a value is sent and returns it.
	Receive(ctx context.Context) any
}

// goWorkers is the default Workers: goroutines and channels.
type goWorkers struct{}

func (goWorkers) Go(ctx context.Context, work func(ctx context.Context)) { go work(ctx) }
func (goWorkers) NewChannel(context.Context) Channel                     { return goChannel(make(chan any)) }

type goChannel chan any

func (c goChannel) Send(_ context.Context, v any) { c <- v }
func (c goChannel) Receive(context.Context) any   { return <-c }
