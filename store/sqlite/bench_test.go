package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/refine-spec/refine/internal/sqlkv/sqlkvtest"
	"github.com/refine-spec/refine/store/sqlite"
)

// BenchmarkSessions1000 lists 1,000 sessions that each have a summary
// record; the target is under 50 ms per call.
func BenchmarkSessions1000(b *testing.B) {
	sqlkvtest.Sessions1000(b, open(b, filepath.Join(b.TempDir(), "refine.db"), sqlite.Config{}))
}

// BenchmarkCommit4KB commits one 4 KB value plus the summary record per
// commit, as a session's durable point does, with synchronous=FULL.
func BenchmarkCommit4KB(b *testing.B) {
	sqlkvtest.Commit4KB(b, open(b, filepath.Join(b.TempDir(), "refine.db"), sqlite.Config{}))
}

// BenchmarkOverhead: a 5-round session with 20 ms roles on a SQLite
// session; the target is total/role-latency ≤ 1.10.
func BenchmarkOverhead(b *testing.B) {
	sqlkvtest.Overhead(b, open(b, filepath.Join(b.TempDir(), "refine.db"), sqlite.Config{}))
}

// BenchmarkJournalGrowth: a journal key growing by 1 KB records, appended
// (what the engine does now) or put whole (before #30).
func BenchmarkJournalGrowth(b *testing.B) {
	sqlkvtest.JournalGrowth(b, open(b, filepath.Join(b.TempDir(), "refine.db"), sqlite.Config{}))
}
