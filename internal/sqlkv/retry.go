package sqlkv

import (
	"context"
	"time"
)

// Backoff bounds between attempts after a broken connection or an
// aborted transaction.
const (
	firstBackoff = 10 * time.Millisecond
	maxBackoff   = time.Second
)

// fault classifies err, the error of an attempt run under actx (derived
// from ctx by attempt), with the Driver's Classifier; FaultNone when the
// Driver has none or ctx has ended (the caller gave up, the database did
// not fail). An attempt that ran out of its own time is a broken
// connection: a network that drops packets silently never says so.
func (d *DB) fault(ctx, actx context.Context, err error) Fault {
	c, ok := d.drv.(Classifier)
	if !ok || err == nil || ctx.Err() != nil {
		return FaultNone
	}
	f := FaultBroken
	if actx.Err() == nil {
		f = c.Classify(err)
	}
	if f == FaultBroken {
		c.Reset()
	}
	if f != FaultNone && d.testFault != nil {
		d.testFault(f, err)
	}
	return f
}

// aborted reports, without side effects, whether err is a transaction the
// server aborted (a lock wait timed out).
func (d *DB) aborted(ctx context.Context, err error) bool {
	c, ok := d.drv.(Classifier)
	return ok && err != nil && ctx.Err() == nil && c.Classify(err) == FaultAborted
}

// attempt returns the context for one attempt of a read or a transaction:
// on a Driver that is a Classifier, ctx bounded by Settings.AttemptTimeout.
func (d *DB) attempt(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := d.drv.(Classifier); !ok || d.cfg.AttemptTimeout <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, d.cfg.AttemptTimeout)
}

// SetFaultHook makes d report to hook every broken connection and aborted
// transaction it retries or reports. For tests: set it before d is used.
func SetFaultHook(d *DB, hook func(f Fault, err error)) { d.testFault = hook }

// retrier spaces out the attempts of one operation and says when to stop:
// after Settings.Reconnect of wall time (the database clock of Settings.Now
// does not bound waiting for a server to come back).
type retrier struct {
	deadline time.Time
	wait     time.Duration
}

func (d *DB) newRetrier() *retrier {
	return &retrier{deadline: time.Now().Add(d.cfg.Reconnect), wait: firstBackoff}
}

// pause waits before the next attempt; false when the time is up or ctx
// ended.
func (r *retrier) pause(ctx context.Context) bool {
	if time.Now().Add(r.wait).After(r.deadline) {
		return false
	}
	t := time.NewTimer(r.wait)
	defer t.Stop()
	r.wait = min(2*r.wait, maxBackoff)
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// read runs a statement that changes nothing, or one whose running twice
// leaves what running it once does, until it succeeds, fails for a reason
// other than a broken connection or an aborted transaction, or
// Settings.Reconnect has passed. op runs with the attempt's context.
func (d *DB) read(ctx context.Context, op func(ctx context.Context) error) error {
	var r *retrier
	for {
		actx, cancel := d.attempt(ctx)
		err := op(actx)
		f := d.fault(ctx, actx, err)
		cancel()
		if err == nil || f == FaultNone {
			return err
		}
		if r == nil {
			r = d.newRetrier()
		}
		if !r.pause(ctx) {
			return err
		}
	}
}
