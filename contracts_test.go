package refine_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/llm"
	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/store/memory"
)

// The root names of the Store and Role contracts are the contract
// packages' own types, not copies: a pointer to one is assignable to a
// pointer to the other only when the types are identical, so this does not
// compile if an alias turns into a defined type.
var (
	_ *store.Store          = new(refine.Store)
	_ *store.Op             = new(store.Op)
	_ *store.OpKind         = new(store.OpKind)
	_ *store.Appender       = new(store.Appender)
	_ *store.Copier         = new(store.Copier)
	_ *store.Identified     = new(store.Identified)
	_ *store.Backend        = new(store.Backend)
	_ *store.NamedCreator   = new(store.NamedCreator)
	_ *store.SessionSummary = new(store.SessionSummary)
	_ *store.SessionInfo    = new(store.SessionInfo)
	_ *store.SessionPage    = new(store.SessionPage)
	_ *store.PageRequest    = new(store.PageRequest)
	_ *store.SessionPager   = new(store.SessionPager)
	_ *refine.OutcomeStatus = &new(store.SessionSummary).Outcome

	_ *llm.Role           = new(refine.Role)
	_ *llm.RoleFunc       = new(refine.RoleFunc)
	_ *llm.RoleName       = new(refine.RoleName)
	_ *llm.Request        = new(refine.Request)
	_ *llm.Response       = new(refine.Response)
	_ *llm.Message        = new(refine.Message)
	_ *llm.Usage          = new(refine.Usage)
	_ *llm.Transient      = new(llm.Transient)
	_ *llm.TransientError = new(refine.TransientError)

	_ func(string, []byte) store.Op = store.Put
	_ func(string) store.Op         = store.Delete
	_ func(string, []byte) store.Op = store.Append
	_ func(string, string) store.Op = store.Copy
)

func TestStoreAndRoleAliasesShareSentinels(t *testing.T) {
	tests := []struct {
		name       string
		root, pkgs error
	}{
		{"ErrNotFound", refine.ErrNotFound, store.ErrNotFound},
		{"ErrInvalidKey", refine.ErrInvalidKey, store.ErrInvalidKey},
		{"ErrLocked", refine.ErrLocked, store.ErrLocked},
		{"ErrReadOnly", refine.ErrReadOnly, store.ErrReadOnly},
		{"ErrInvalidCursor", store.ErrInvalidCursor, store.ErrInvalidCursor},
		{"ErrSessionExists", refine.ErrSessionExists, store.ErrSessionExists},
		{"ErrCorrupt", refine.ErrCorrupt, store.ErrCorrupt},
		{"ErrNoResponse", refine.ErrNoResponse, llm.ErrNoResponse},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.root == nil || tt.root != tt.pkgs {
				t.Fatalf("refine.%s = %v, want the contract package's value %v", tt.name, tt.root, tt.pkgs)
			}
			if err := fmt.Errorf("where: %w", tt.pkgs); !errors.Is(err, tt.root) {
				t.Errorf("errors.Is(%v, refine.%s) = false, want true", err, tt.name)
			}
			if err := fmt.Errorf("where: %w", tt.root); !errors.Is(err, tt.pkgs) {
				t.Errorf("errors.Is(%v, contract %s) = false, want true", err, tt.name)
			}
		})
	}
}

func TestStoreAndRoleAliasesWorkAcrossPackages(t *testing.T) {
	ctx := context.Background()
	// A Store the contract package knows, driven through the root's names.
	var st refine.Store = memory.New()
	if err := st.Commit(ctx, store.Put("a", []byte("1")), store.Delete("b")); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	if _, err := st.Get(ctx, "missing"); !errors.Is(err, refine.ErrNotFound) {
		t.Errorf("Get(missing) = %v, want an error wrapping refine.ErrNotFound", err)
	}
	if err := store.ValidKey(".refine-lock"); !errors.Is(err, store.ErrInvalidKey) {
		t.Errorf("store.ValidKey(.refine-lock) = %v, want an error wrapping store.ErrInvalidKey", err)
	}

	// A Role written against llm's names, used where refine's are expected.
	var role refine.Role = llm.RoleFunc(func(context.Context, llm.Request) (llm.Response, error) {
		return llm.Response{}, &refine.TransientError{Err: errors.New("503"), After: time.Second}
	})
	_, err := role.Respond(ctx, refine.Request{Role: refine.Engineer})
	if ok, after := refine.IsTransient(err); !ok || after != time.Second {
		t.Errorf("refine.IsTransient(%v) = %v, %v, want true, 1s", err, ok, after)
	}
	var te *llm.TransientError
	if !errors.As(err, &te) {
		t.Errorf("errors.As(%v, *llm.TransientError) = false, want true", err)
	}
}

// The root's check and listing functions answer as the contract's do: a
// host that calls them through refine gets the same results and errors.
func TestStoreForwardsAnswerAsTheContract(t *testing.T) {
	ops := [][]store.Op{
		{store.Put("a.md", []byte("x")), store.Delete("b.md")},
		{store.Append("log", []byte("x"))},
		{store.Copy("c.md", "a.md")},
		{store.Put("../escape", nil)},
	}
	errStr := func(err error) string { return fmt.Sprint(err) }
	for _, o := range ops {
		if got, want := errStr(store.ValidOps(o)), errStr(store.ValidOps(o)); got != want {
			t.Errorf("ValidOps(%v) = %s, contract %s", o, got, want)
		}
		if got, want := errStr(store.ValidAppendOps(o)), errStr(store.ValidAppendOps(o)); got != want {
			t.Errorf("ValidAppendOps(%v) = %s, contract %s", o, got, want)
		}
	}
	if store.ValidAppendOps(ops[1]) != nil || store.ValidOps(ops[1]) == nil {
		t.Error("an append is valid for an Appender only")
	}
	for _, p := range []string{"", "round_001/", "../x", "a//b"} {
		if got, want := errStr(store.ValidPrefix(p)), errStr(store.ValidPrefix(p)); got != want {
			t.Errorf("ValidPrefix(%q) = %s, contract %s", p, got, want)
		}
	}
	at := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	info := func(id string, updated time.Time) store.SessionInfo {
		return store.SessionInfo{ID: id, SessionSummary: store.SessionSummary{Updated: updated}}
	}
	all := []store.SessionInfo{info("b", at), info("a", at), info("c", at.Add(time.Hour))}
	page, err := store.PageOf(all, store.PageRequest{Limit: 2})
	want, werr := store.PageOf(all, store.PageRequest{Limit: 2})
	if err != nil || werr != nil || fmt.Sprint(page) != fmt.Sprint(want) {
		t.Fatalf("PageOf = %v, %v; contract %v, %v", page, err, want, werr)
	}
	if store.CompareSessions(all[2], all[0]) >= 0 || store.CompareSessions(all[1], all[0]) >= 0 {
		t.Error("CompareSessions: want the newest first, then by ID")
	}
	updated, id, err := store.ParseSessionCursor(store.SessionCursor(all[0]))
	if err != nil || id != "b" || !updated.Equal(at) {
		t.Errorf("ParseSessionCursor(SessionCursor(b)) = %v, %q, %v", updated, id, err)
	}
}
