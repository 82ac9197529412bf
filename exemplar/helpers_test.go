package exemplar

import (
	"os"
	"path/filepath"
	"testing"
)

// specDir holds the project's spec files, relative to this package.
const specDir = "../testdata/spec"

// readSpec returns a spec file, skipping the test when the specs are not
// checked out next to the module.
func readSpec(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(specDir, name))
	if err != nil {
		t.Fatalf("spec corpus (testdata/spec): %v", err)
	}
	return string(b)
}
