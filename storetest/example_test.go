package storetest_test

import (
	"testing"

	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/store/memory"
	"github.com/refine-spec/refine/storetest"
)

// A Store author runs the conformance suite from a test, with a new, empty
// Store per subtest; a Backend author runs TestBackend the same way.
func ExampleTestStore() {
	var t *testing.T // the *testing.T of a func TestMyStore(t *testing.T)
	if t == nil {
		return // shown, not run: TestStore needs a real test
	}
	storetest.TestStore(t, func(t *testing.T) store.Store { return memory.New() })
	storetest.TestBackend(t, func(t *testing.T) store.Backend { return memory.NewBackend() })
}
