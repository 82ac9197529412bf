package replay_test

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/refine-spec/refine/llm"
	"github.com/refine-spec/refine/llm/replay"
	"github.com/refine-spec/refine/validate"
)

// A recorded answer above the limit is read only up to the limit plus one
// byte: enough for the engine to fail it as WRONG_FORMAT, naming the limit.
func TestOversizeFileIsReadToTheLimit(t *testing.T) {
	big := strings.Repeat("x", 3*validate.DefaultMaxOutputBytes)
	for _, tc := range []struct {
		opts []replay.Option
		want int
	}{
		{nil, validate.DefaultMaxOutputBytes + 1},
		{[]replay.Option{replay.WithMaxBytes(100)}, 101},
	} {
		r := replay.New(fstest.MapFS{"engineer-001.md": {Data: []byte(big)}}, tc.opts...)
		resp, err := r.Respond(context.Background(), llm.Request{Role: llm.Engineer, Round: 1, Attempt: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Content) != tc.want {
			t.Errorf("content is %d bytes, want %d", len(resp.Content), tc.want)
		}
	}
}
