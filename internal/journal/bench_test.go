package journal

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// benchDocs returns two versions of a session-state-like document of
// about n issues: the second has one more issue, one changed status and a
// new timestamp, as a durable point sees.
func benchDocs(b *testing.B, n int) (old, cur []byte) {
	type issue struct {
		ID       string `json:"id"`
		Severity string `json:"severity"`
		Status   string `json:"status"`
		Summary  string `json:"summary"`
	}
	type doc struct {
		UpdatedAt string            `json:"updated_at"`
		Round     int               `json:"round"`
		Settings  map[string]string `json:"settings"`
		Issues    []issue           `json:"issues"`
		Log       []string          `json:"log"`
	}
	d := doc{UpdatedAt: "2026-11-23T17:00:00Z", Settings: map[string]string{}}
	for i := range 20 {
		d.Settings[fmt.Sprintf("k%02d", i)] = "value \"quoted\" and a \\ backslash"
	}
	for i := range n {
		d.Issues = append(d.Issues, issue{ID: fmt.Sprintf("ISSUE-R%d-001", i+1), Severity: "LOW", Status: "open",
			Summary: strings.Repeat("be precise about the bound ", 20)})
		d.Log = append(d.Log, fmt.Sprintf("round %d engineer attempt 1 valid", i+1))
	}
	old, err := json.Marshal(d)
	if err != nil {
		b.Fatal(err)
	}
	d.UpdatedAt = "2026-11-23T17:00:01Z"
	d.Issues[0].Status = "resolved"
	d.Issues = append(d.Issues, issue{ID: "ISSUE-R99-001", Severity: "HIGH", Summary: "new"})
	d.Log = append(d.Log, "one more")
	cur, err = json.Marshal(d)
	if err != nil {
		b.Fatal(err)
	}
	return old, cur
}

// BenchmarkDiff: the diff of one durable point over states of 5 and 50
// rounds; MB/s is the bytes of the newer version scanned per second.
func BenchmarkDiff(b *testing.B) {
	for _, n := range []int{5, 50} {
		b.Run(fmt.Sprintf("issues=%d", n), func(b *testing.B) {
			old, cur := benchDocs(b, n)
			b.SetBytes(int64(len(cur)))
			b.ReportAllocs()
			for b.Loop() {
				if ops := Diff(old, cur); len(ops) != 4 {
					b.Fatalf("%d ops", len(ops))
				}
			}
		})
	}
}
