// Package record provides a Role wrapper that saves every successful answer
// of a live Role, in the layout [github.com/refine-spec/refine/llm/replay]
// reads: engineer-001.md, engineer-002.md, …, reviewer-001.md, … and, for
// the discovery call, discovery-001.md, … in one directory.
//
// Numbering is per role and follows the order in which answers complete;
// failed calls are not recorded and leave no gap, so the n-th file is the
// n-th answer the engine received — exactly what a replay serves to the n-th
// call. Files are created with mode 0600, the directory with 0700. An
// existing file is never overwritten: a resumed session must continue the
// numbering with [WithStart] or [Role.Resume].
package record

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"

	"github.com/refine-spec/refine/llm"
	"github.com/refine-spec/refine/llm/replay"
	"github.com/refine-spec/refine/validate"
)

// Role forwards calls to an inner Role and writes each successful answer to
// its directory. It is safe for concurrent use. Create it with [New].
type Role struct {
	inner    llm.Role
	dir      string
	maxBytes int // answers are cut at maxBytes+1 bytes

	mu    sync.Mutex
	calls map[llm.RoleName]int // answers recorded so far, per role
}

// Option configures a Role.
type Option func(*Role)

// WithStart makes the first recorded answer of role file n+1, as if n
// answers had already been recorded (a resumed session). n < 0 counts as 0.
func WithStart(role llm.RoleName, n int) Option {
	return func(r *Role) { r.calls[role] = max(n, 0) }
}

// WithMaxBytes sets the limit of an answer: one above n bytes is recorded,
// and returned, cut at n+1 bytes, which the engine fails as WRONG_FORMAT
// naming its limit (and a replay of the recording fails the same way).
// Set it to the session's Config.MaxOutputBytes; the default is that
// field's default, 1 MiB. n < 1 keeps the default.
func WithMaxBytes(n int) Option {
	return func(r *Role) {
		if n > 0 {
			r.maxBytes = n
		}
	}
}

// New returns a Role that forwards to inner and records its answers in dir,
// creating dir (mode 0700) if needed.
func New(inner llm.Role, dir string, opts ...Option) (*Role, error) {
	if inner == nil {
		return nil, errors.New("record: nil inner Role: pass the live Role to record")
	}
	if dir == "" {
		return nil, errors.New("record: empty directory: pass the directory to record into")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("record: creating directory %s: %w", dir, err)
	}
	r := &Role{inner: inner, dir: dir, maxBytes: validate.DefaultMaxOutputBytes, calls: make(map[llm.RoleName]int)}
	for _, o := range opts {
		o(r)
	}
	return r, nil
}

// Respond calls the inner Role and, if it succeeds, writes the answer's
// Content to the file named by the request's call number (Request.Call;
// the role's next file for a request without one) before returning the
// answer unchanged (but for an answer above the limit, cut as WithMaxBytes
// says). An empty Content (a missing output) is recorded as an empty
// file, to keep the numbering aligned with the calls. Errors of the
// inner Role are returned as they are (their transient classification
// preserved) and nothing is written. A failed write is returned as an error
// and the answer is dropped, since a recording with a hole would replay
// wrong answers.
func (r *Role) Respond(ctx context.Context, req llm.Request) (llm.Response, error) {
	if err := checkRoleName(req.Role); err != nil {
		return llm.Response{}, err
	}
	resp, err := r.inner.Respond(ctx, req)
	if err != nil {
		return resp, err
	}
	if len(resp.Content) > r.maxBytes+1 {
		resp.Content = resp.Content[:r.maxBytes+1] // still over the limit, not stored in full
	}

	r.mu.Lock()
	defer r.mu.Unlock()
	// Name the file by the request's call number, so a replay of the
	// recording serves each call the answer it got (see replay.Role).
	who := req.FileRole() // discovery-NNN.md for the discovery call
	n := req.Call
	if n <= 0 {
		n = r.calls[who] + 1
	}
	name := replay.FileName(who, n)
	if err := writeNew(filepath.Join(r.dir, name), []byte(resp.Content)); err != nil {
		return llm.Response{}, fmt.Errorf("record: saving the %s answer for round %d attempt %d as %s in %s: %w; free space or fix permissions, then continue with refine resume (which numbers on from the answers recorded)",
			req.Role, req.Round, req.Attempt, name, r.dir, err)
	}
	r.calls[who] = max(r.calls[who], n)
	return resp, nil
}

// Resume sets the number of answers of role already recorded, so that the
// next one is written to file calls+1, and forwards to the inner Role if it
// implements Resume too. It implements
// [github.com/refine-spec/refine/llm.Resumer]. calls < 0 counts as 0.
func (r *Role) Resume(role llm.RoleName, calls int) {
	r.mu.Lock()
	r.calls[role] = max(calls, 0)
	r.mu.Unlock()
	if rs, ok := r.inner.(interface {
		Resume(llm.RoleName, int)
	}); ok {
		rs.Resume(role, calls)
	}
}

// Calls returns the number of answers of role recorded so far, including
// the ones set by [WithStart] or [Role.Resume].
func (r *Role) Calls(role llm.RoleName) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[role]
}

// Dir returns the directory the Role records into.
func (r *Role) Dir() string { return r.dir }

// writeNew creates name (which must not exist) with mode 0600, writes data
// and syncs it. On failure it removes what it created.
func writeNew(name string, data []byte) (err error) {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%w (refusing to overwrite an earlier recording)", err)
		}
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			_ = os.Remove(name)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return err
	}
	return f.Sync()
}

// checkRoleName rejects role names that are not a single path element, so
// that a file name built from one cannot leave the directory.
func checkRoleName(role llm.RoleName) error {
	s := string(role)
	if s == "" || strings.ContainsAny(s, `/\`) || s == "." || s == ".." || path.Clean(s) != s {
		return fmt.Errorf("record: role name %q cannot name a file; use a plain name such as %q", s, llm.Engineer)
	}
	return nil
}
