package record_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/refine-spec/refine/llm"
	"github.com/refine-spec/refine/llm/record"
	"github.com/refine-spec/refine/validate"
)

type bigRole struct{ n int }

func (b bigRole) Respond(context.Context, llm.Request) (llm.Response, error) {
	return llm.Response{Content: strings.Repeat("x", b.n)}, nil
}

// An answer above the limit is recorded, and passed on, cut at the limit
// plus one byte: a replay then fails it the same way (WRONG_FORMAT).
func TestOversizeAnswerIsCut(t *testing.T) {
	dir := t.TempDir()
	r, err := record.New(bigRole{3 * validate.DefaultMaxOutputBytes}, dir)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := r.Respond(context.Background(), llm.Request{Role: llm.Engineer, Round: 1, Attempt: 1})
	if err != nil {
		t.Fatal(err)
	}
	want := validate.DefaultMaxOutputBytes + 1
	if len(resp.Content) != want {
		t.Errorf("content is %d bytes, want %d", len(resp.Content), want)
	}
	if fi, err := os.Stat(filepath.Join(dir, "engineer-001.md")); err != nil || fi.Size() != int64(want) {
		t.Errorf("recorded file: %v, size %d, want %d", err, fi.Size(), want)
	}
}
