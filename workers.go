package refine

import "context"

// workers runs the concurrent role calls of parallel drafting and carries
// their messages back to the session's goroutine; every other step of a
// session runs on the goroutine that called Run, Step, Next or Rollback.
// Run uses goroutines and channels (goWorkers); Next, whose caller makes
// the calls, runs the work inline in a fixed order (inlineWorkers), so a
// durable-execution host replays it identically.
type workers interface {
	// Go runs work concurrently. The ctx handed to work derives from ctx
	// and is the one work calls the Role and its channel with.
	Go(ctx context.Context, work func(ctx context.Context))
	// NewChannel returns an unbuffered channel between the workers and the
	// session's goroutine.
	NewChannel(ctx context.Context) channel
}

// channel is an unbuffered channel made by workers.NewChannel.
type channel interface {
	// Send blocks until v is received.
	Send(ctx context.Context, v any)
	// Receive blocks until a value is sent and returns it.
	Receive(ctx context.Context) any
}

// goWorkers runs work on goroutines.
type goWorkers struct{}

func (goWorkers) Go(ctx context.Context, work func(ctx context.Context)) { go work(ctx) }
func (goWorkers) NewChannel(context.Context) channel                     { return goChannel(make(chan any)) }

type goChannel chan any

func (c goChannel) Send(_ context.Context, v any) { c <- v }
func (c goChannel) Receive(context.Context) any   { return <-c }
