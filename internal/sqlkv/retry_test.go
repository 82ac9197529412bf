package sqlkv

import (
	"context"
	"errors"
	"testing"
	"time"
)

// flaky is a Driver whose queries fail with errs, one a call, before they
// answer; with classify set it is a Classifier too.
type flaky struct {
	errs     []error
	calls    int
	resets   int
	classify func(error) Fault
}

var errBroken = errors.New("connection reset by peer")

func (f *flaky) Query(ctx context.Context, q string, args ...any) (Rows, error) {
	f.calls++
	if len(f.errs) > 0 {
		err := f.errs[0]
		f.errs = f.errs[1:]
		return nil, err
	}
	return &oneRow{}, nil
}

func (f *flaky) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	return 0, errors.New("not used")
}
func (f *flaky) Begin(ctx context.Context) (Tx, error) { return nil, errors.New("not used") }
func (f *flaky) Close() error                          { return nil }

type classifying struct{ *flaky }

func (c classifying) Classify(err error) Fault { return c.classify(err) }
func (c classifying) Reset()                   { c.resets++ }

// oneRow is a result of one row holding the value "v".
type oneRow struct{ done bool }

func (r *oneRow) Next() bool {
	if r.done {
		return false
	}
	r.done = true
	return true
}

func (r *oneRow) Scan(dest ...any) error {
	for _, d := range dest {
		switch d := d.(type) {
		case *[]byte:
			*d = []byte("v")
		case *int:
			*d = 1
		}
	}
	return nil
}
func (r *oneRow) Err() error { return nil }
func (r *oneRow) Close()     {}

func TestReadsRetryBrokenConnections(t *testing.T) {
	brokenOnly := func(err error) Fault {
		if errors.Is(err, errBroken) {
			return FaultBroken
		}
		return FaultNone
	}
	other := errors.New("syntax error")
	for _, tc := range []struct {
		name       string
		errs       []error
		classifier bool
		reconnect  time.Duration
		wantErr    error
		wantCalls  int
		wantResets int
	}{
		{"broken twice, then answered", []error{errBroken, errBroken}, true, time.Minute, nil, 3, 2},
		{"another error is not retried", []error{other, errBroken}, true, time.Minute, other, 1, 0},
		{"a driver without a Classifier is not retried", []error{errBroken}, false, time.Minute, errBroken, 1, 0},
		{"given up after Reconnect", []error{errBroken, errBroken, errBroken, errBroken, errBroken, errBroken, errBroken, errBroken}, true, 25 * time.Millisecond, errBroken, 2, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &flaky{classify: brokenOnly}
			var drv Driver = f
			if tc.classifier {
				drv = classifying{f}
			}
			d := New(drv, &Dialect{Name: "test", SessionExists: "exists", GetEntry: "get"}, Settings{Reconnect: tc.reconnect}, nil)
			st, err := d.View(t.Context(), "s1")
			if err != nil {
				t.Fatal(err)
			}
			f.calls, f.errs = 0, tc.errs
			v, err := st.Get(t.Context(), "k")
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && string(v) != "v") {
				t.Errorf("Get = %q, %v; want v, %v", v, err, tc.wantErr)
			}
			if f.calls != tc.wantCalls || f.resets != tc.wantResets {
				t.Errorf("%d queries, %d pool resets; want %d, %d", f.calls, f.resets, tc.wantCalls, tc.wantResets)
			}
		})
	}
}
