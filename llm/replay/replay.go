// Package replay provides a Role that answers from recorded files instead of
// a live LLM.
//
// A recording is a directory (any [fs.FS]) holding one markdown file per
// answer: engineer-001.md, engineer-002.md, … for the Engineer,
// reviewer-001.md, … for the Reviewer, and discovery-001.md, … for the
// discovery call (a Reviewer call with Request.Discovery set, numbered
// apart, so a recording of a session given its gaps replays the same
// rounds after a discovery). The n-th call of a role gets the
// content of its n-th file; numbering is per role and follows call order.
// Files not named ROLE-NNN.md (other extensions, notes, READMEs) are ignored.
// Running out of files is an error naming the missing file; it matches
// llm.ErrNoResponse (the integration step then keeps the appendix form,
// so recordings made before it keep working).
//
// The layout is the one [github.com/refine-spec/refine/llm/record] writes,
// so a live session recorded with record can be replayed exactly.
//
// # Resuming and concurrency
//
// The engine numbers each role's calls over the whole session
// (Request.Call), and the file a call gets is the one its number names:
// a session resumed in a new process, parallel drafting, or a new worker
// after a crash all replay deterministically. Only a request without a
// number (Call 0, a host calling the Role directly) takes the role's next
// file from an in-memory index, which [WithStart] and [Role.Resume] set.
// A Role is safe for concurrent use.
package replay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"

	"github.com/refine-spec/refine/llm"
	"github.com/refine-spec/refine/validate"
)

// Role answers each call with the next recorded file of the called role.
// Create it with [New] or [Dir].
type Role struct {
	fsys     fs.FS
	label    string
	maxBytes int // a file is read up to maxBytes+1 bytes

	mu    sync.Mutex
	calls map[llm.RoleName]int // calls served so far, per role
}

// Option configures a Role.
type Option func(*Role)

// WithStart makes the first call of role get file n+1, as if n calls had
// already been made (a resumed session). n < 0 counts as 0.
func WithStart(role llm.RoleName, n int) Option {
	return func(r *Role) { r.calls[role] = max(n, 0) }
}

// WithMaxBytes bounds what is read of each file: at most n+1 bytes, so
// a file above n comes back cut at n+1 bytes, which the engine fails as
// WRONG_FORMAT naming its limit, without reading the rest (a recording
// could hold a device or a huge file). Set it to the session's
// Config.MaxOutputBytes; the default is that field's default, 1 MiB.
// n < 1 keeps the default.
func WithMaxBytes(n int) Option {
	return func(r *Role) {
		if n > 0 {
			r.maxBytes = n
		}
	}
}

// WithLabel sets how errors name the recording, for example its directory
// path. [Dir] sets it to the directory; the default is "the recording".
func WithLabel(label string) Option {
	return func(r *Role) { r.label = label }
}

// New returns a Role that replays the recording at the root of fsys.
// It panics if fsys is nil.
func New(fsys fs.FS, opts ...Option) *Role {
	if fsys == nil {
		panic("replay.New: nil fs.FS")
	}
	r := &Role{fsys: fsys, label: "the recording", maxBytes: validate.DefaultMaxOutputBytes, calls: make(map[llm.RoleName]int)}
	for _, o := range opts {
		o(r)
	}
	return r
}

// Dir returns a Role that replays the recording in directory dir of the
// operating system. Errors name dir.
func Dir(dir string, opts ...Option) *Role {
	return New(os.DirFS(dir), append([]Option{WithLabel(dir)}, opts...)...)
}

// FileName returns the name of the n-th (1-based) recorded answer of role:
// FileName("engineer", 3) is "engineer-003.md".
func FileName(role llm.RoleName, n int) string {
	return fmt.Sprintf("%s-%03d.md", role, n)
}

// Model is the model name a replayed Response carries, so telemetry and
// status name the backend that answered.
const Model = "replay"

// Respond returns the content of file req.Call of req.Role
// (engineer-003.md for the Engineer's third call of the session), with
// Model "replay": parallel calls, a resumed session and a new worker after
// a crash all get the file their call number names. A request without a
// call number (Call 0, a host calling directly) gets the role's next file.
// Usage is zero: a replay spends no tokens. If the file is missing,
// Respond returns an error naming it and does not advance.
func (r *Role) Respond(ctx context.Context, req llm.Request) (llm.Response, error) {
	if err := ctx.Err(); err != nil {
		return llm.Response{}, fmt.Errorf("replay: %s call for round %d attempt %d: %w", req.Role, req.Round, req.Attempt, err)
	}
	if err := checkRoleName(req.Role); err != nil {
		return llm.Response{}, err
	}

	r.mu.Lock()
	defer r.mu.Unlock()

	// The discovery call's answers are discovery-NNN.md, numbered apart.
	who := req.FileRole()
	n := req.Call
	if n <= 0 {
		n = r.calls[who] + 1
	}
	name := FileName(who, n)
	data, err := readAtMost(r.fsys, name, r.maxBytes+1)
	if errors.Is(err, fs.ErrNotExist) {
		have := r.count(who)
		return llm.Response{}, fmt.Errorf("replay: no file %s in %s for round %d attempt %d: the recording has %d %s responses; record more or start a live run: %w (%w)",
			name, r.label, req.Round, req.Attempt, have, who, err, llm.ErrNoResponse)
	}
	if err != nil {
		return llm.Response{}, fmt.Errorf("replay: reading %s in %s for round %d attempt %d: %w", name, r.label, req.Round, req.Attempt, err)
	}
	r.calls[who] = max(r.calls[who], n)
	return llm.Response{Content: string(data), Model: Model}, nil
}

// Resume sets the number of calls role has already made, so that the next
// call gets file calls+1. It implements
// [github.com/refine-spec/refine/llm.Resumer]. calls < 0 counts as 0.
func (r *Role) Resume(role llm.RoleName, calls int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls[role] = max(calls, 0)
}

// Calls returns the number of files served to role so far, including the
// calls set by [WithStart] or [Role.Resume].
func (r *Role) Calls(role llm.RoleName) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[role]
}

// count returns how many ROLE-NNN.md files the recording holds, for error
// messages. A directory that cannot be read counts 0.
func (r *Role) count(role llm.RoleName) int {
	entries, err := fs.ReadDir(r.fsys, ".")
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range entries {
		if !e.IsDir() && isAnswerFile(e.Name(), role) {
			n++
		}
	}
	return n
}

// isAnswerFile reports whether name is ROLE-NNN.md with NNN a positive
// decimal number.
func isAnswerFile(name string, role llm.RoleName) bool {
	rest, ok := strings.CutPrefix(name, string(role)+"-")
	if !ok {
		return false
	}
	num, ok := strings.CutSuffix(rest, ".md")
	if !ok || num == "" {
		return false
	}
	for _, c := range num {
		if c < '0' || c > '9' {
			return false
		}
	}
	n, err := strconv.Atoi(num)
	return err == nil && n > 0
}

// checkRoleName rejects role names that are not a single path element, so
// that a file name built from one cannot leave the recording.
func checkRoleName(role llm.RoleName) error {
	s := string(role)
	if s == "" || strings.ContainsAny(s, `/\`) || s == "." || s == ".." || path.Clean(s) != s {
		return fmt.Errorf("replay: role name %q cannot name a file; use a plain name such as %q", s, llm.Engineer)
	}
	return nil
}

// readAtMost reads at most n bytes of the file name.
func readAtMost(fsys fs.FS, name string, n int) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, int64(n)))
}
