package core_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/refine-spec/refine/internal/core/coretest"
)

// TestScripts runs the interaction scripts of testdata/*.txt: the
// decisions driven through their protocol alone (Create, Load, Handle,
// Advance, Status) by the coretest harness, with each Ready printed. They
// specify the decisions' behaviour; regenerate the expected output with
//
//	go test ./internal/core -run TestScripts -rewrite
func TestScripts(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts in testdata (%v)", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) { coretest.Run(t, f) })
	}
}
