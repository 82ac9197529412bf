package fs

import (
	"fmt"
	"sync"
	"time"
)

// The applier. A commit is durable, and Commit returns, once its log
// record is written and fsynced: that is the commit point. Writing the
// commit's values into the session's files (stage and apply, see
// apply.go) is left to one goroutine per Store, which applies commits in
// sequence while the caller gets on with its next step; in the session
// engine that step is a role call, during which the disk is otherwise
// idle. Until a commit is applied its changes are in the overlay (see
// overlay.go), which reads consult first, so nothing in this process can
// tell the files are behind. A crash before the files catch up loses
// nothing: the records are in the log and Open replays them.
//
// The applier also checkpoints the log when it reaches its thresholds
// (see checkpointDue), and only then: a checkpoint's fsyncs buy nothing a
// crash cannot redo from the log, so they are spent only to let the log
// forget records. A checkpoint covers only the commits applied so far
// (the files of the others may not exist yet), and their records stay in
// the log.
//
// The backlog is bounded, so memory is: a Commit waits while
// maxBacklogCommits commits, or maxBacklogBytes bytes of records, are
// waiting to be applied. A failed apply or checkpoint stops the applier
// and breaks the Store, as a failure past the commit point always did:
// every later call reports it, Close reports it and does not checkpoint,
// and the next Open replays the log.
const (
	maxBacklogCommits = 16
	maxBacklogBytes   = 16 << 20
)

// applier is the queue of commits logged but not yet applied, and the
// state of the goroutine applying them (Store.runApplier).
type applier struct {
	mu       sync.Mutex
	changed  *sync.Cond // broadcast when the queue shrinks and when the goroutine stops
	queue    []queued   // oldest first; the head stays until it is applied
	bytes    int64      // the queued records' size
	enqueued uint64     // commits enqueued so far
	idleAt   uint64     // enqueued+1 when the idle timer was last set; 0: never
	idleDue  bool       // the idle timer fired with nothing enqueued since
	err      error      // the failure that stopped the goroutine
	stop     bool       // apply what is queued, then exit
	drop     bool       // exit at once, applying nothing more
	done     chan struct{}
}

// queued is a logged commit waiting to be applied.
type queued struct {
	seq     uint64
	size    int  // of its log record
	file    bool // the record is a record file, not a frame in the log file
	changes []change
}

func newApplier() *applier {
	a := &applier{done: make(chan struct{})}
	a.changed = sync.NewCond(&a.mu)
	return a
}

// full reports whether the backlog is at its bound. a.mu must be held.
func (a *applier) full() bool {
	return len(a.queue) >= maxBacklogCommits || len(a.queue) > 0 && a.bytes >= maxBacklogBytes
}

// enqueue hands a logged commit to the goroutine.
func (a *applier) enqueue(c queued) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.queue = append(a.queue, c)
	a.bytes += int64(c.size)
	a.enqueued++
	a.changed.Broadcast()
}

// halt stops the goroutine and waits for it, after it has applied what is
// queued (Close) or, if applyQueued is false, after the commit it is
// applying (tests that simulate a crash). It returns the failure that
// stopped the goroutine, if any.
func (a *applier) halt(applyQueued bool) error {
	a.mu.Lock()
	a.stop = true
	a.drop = a.drop || !applyQueued
	a.changed.Broadcast()
	a.mu.Unlock()
	<-a.done
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.err
}

// runApplier is the applier's goroutine: it applies queued commits in
// order until halted or until one fails, and checkpoints the log when it
// is due (see checkpointDue). Once the queue has been empty for
// s.idleDelay it makes spares (see spares.go) and grows the log file
// ahead of its frames (see walLog.reserve), so the disk's work is done
// while the caller is busy elsewhere (in a session, waiting for a role).
// It does not checkpoint when idle: a checkpoint's fsyncs make durable
// what a crash would redo from the log anyway, so they are spent only
// when the log must let records go.
func (s *Store) runApplier() {
	a := s.apl
	defer close(a.done)
	a.mu.Lock()
	defer a.mu.Unlock()
	for {
		for len(a.queue) == 0 && !a.stop && !a.idleDue {
			if s.armIdle(); !a.idleDue {
				a.changed.Wait()
			}
		}
		if a.drop || len(a.queue) == 0 && a.stop {
			return
		}
		var err error
		if len(a.queue) == 0 {
			// Idle: make spares. idleAt stays set, so the timer is not
			// set again until another commit comes.
			a.idleDue = false
			a.mu.Unlock()
			err = s.hook("idle")
			if err == nil {
				if rerr := s.wlog.reserve(); rerr != nil {
					// Appends grow the file then, as they always could.
					s.log.Debug("fs: log file not grown ahead", "dir", s.dir, "err", rerr)
				}
				s.makeSpares()
			}
			a.mu.Lock()
		} else {
			c := a.queue[0]
			a.mu.Unlock()
			err = s.applyQueued(c)
			a.mu.Lock()
			if err == nil && s.checkpointDue(len(a.queue)-1) {
				// Before c leaves the queue, so that flush waits for it.
				a.mu.Unlock()
				err = s.checkpoint()
				a.mu.Lock()
			}
			a.queue[0] = queued{} // let the values go
			a.queue = a.queue[1:]
			a.bytes -= int64(c.size)
		}
		if err != nil {
			s.mu.Lock()
			s.broken = err
			s.mu.Unlock()
			// The rest stay in the log for the next Open to replay.
			a.err = err
			a.queue, a.bytes = nil, 0
			a.changed.Broadcast()
			return
		}
		a.changed.Broadcast()
	}
}

// checkpointDue reports whether the applier should checkpoint now, with
// queued commits still waiting to be applied: once the log has reached
// its thresholds and nothing is queued, so that the checkpoint covers
// every frame in the log file and starts a new generation (the file is
// reused from its start rather than grown); or, should commits keep
// coming, once the log holds twice the thresholds. It runs on the
// applier's goroutine, which owns s.wal.
func (s *Store) checkpointDue(queued int) bool {
	w := &s.wal
	if !w.due() {
		return false
	}
	return queued == 0 || len(w.pending) >= 2*w.maxRecords || w.bytes >= 2*w.maxBytes
}

// makeSpares creates spares until spareTarget are ready, stopping as soon
// as a commit is queued or the Store is closing: applying comes first. A
// spare it cannot create is no failure (puts create their files then).
// Spares are never fsynced: they are temporary files, which Open
// discards. It runs on the applier's goroutine, without a.mu.
func (s *Store) makeSpares() {
	a := s.apl
	for recycles && len(s.spares) < spareTarget {
		a.mu.Lock()
		busy := len(a.queue) > 0 || a.stop
		a.mu.Unlock()
		if busy {
			return
		}
		if err := s.makeSpare(); err != nil {
			s.log.Debug("fs: spare not created; puts create their files", "dir", s.dir, "err", err)
			return
		}
	}
	s.hook("spares ready") // lets tests wait for them
}

// armIdle sets the idle timer, if no timer was set for the commits
// enqueued so far: after the first commit and after each later one. When
// it fires with nothing enqueued since, the applier does its idle work.
// a.mu must be held.
func (s *Store) armIdle() {
	a := s.apl
	if s.idleDelay < 0 || a.enqueued == 0 || a.idleAt == a.enqueued+1 {
		return
	}
	at := a.enqueued + 1 // +1: 0 means no timer
	a.idleAt = at
	if s.idleDelay == 0 {
		a.idleDue = true
		return
	}
	time.AfterFunc(s.idleDelay, func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		if a.idleAt == at && a.enqueued+1 == at {
			a.idleDue = true
			a.changed.Broadcast()
		}
	})
}

// applyQueued writes commit c into the files; runApplier then
// checkpoints the log if it is due. It runs on the applier's goroutine,
// which owns the spares and the log's bookkeeping (s.wal) while the Store
// is open.
func (s *Store) applyQueued(c queued) error {
	// Lets tests hold a commit between its commit point and its apply.
	if err := s.hook("applying"); err != nil {
		return fmt.Errorf("commit %s: %w", describe(c.changes), err)
	}
	temps, err := s.stage(c.seq, c.changes)
	if err == nil {
		err = s.apply(c.seq, c.changes, temps)
		s.discard(temps) // any a failure left behind
	}
	if err == nil {
		err = s.hook("applied")
	}
	if err == nil {
		s.wal.applied(c.seq, c.size, c.file, c.changes)
	}
	if err != nil {
		return fmt.Errorf("commit %s: %w", describe(c.changes), err)
	}
	return nil
}

// waitForRoom waits while the backlog is at its bound. It returns the
// applier's failure, if it has stopped. s.commitMu must be held, so the
// backlog can only shrink meanwhile.
func (s *Store) waitForRoom() error {
	a := s.apl
	a.mu.Lock()
	full := a.full() && a.err == nil
	a.mu.Unlock()
	if full {
		// Lets tests see a commit wait, without timing it.
		if err := s.hook("backlog full"); err != nil {
			return err
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for a.err == nil && a.full() {
		a.changed.Wait()
	}
	return a.err
}

// flush waits until every commit logged so far is in the files (and any
// checkpoint it made due is done), and returns the applier's failure if
// it has stopped.
func (s *Store) flush() error {
	a := s.apl
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for a.err == nil && len(a.queue) > 0 {
		a.changed.Wait()
	}
	return a.err
}
