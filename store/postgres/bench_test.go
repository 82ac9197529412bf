package postgres_test

import (
	"testing"

	"github.com/refine-spec/refine/internal/pgtest"
	"github.com/refine-spec/refine/internal/sqlkv/sqlkvtest"
	"github.com/refine-spec/refine/store/postgres"
)

// BenchmarkSessions1000 lists 1,000 sessions with summary records; the
// target is under 50 ms per call.
func BenchmarkSessions1000(b *testing.B) {
	sqlkvtest.Sessions1000(b, open(b, pgtest.Database(b), postgres.Config{}))
}

// BenchmarkCommit4KB commits one 4 KB value per commit over loopback.
func BenchmarkCommit4KB(b *testing.B) {
	sqlkvtest.Commit4KB(b, open(b, pgtest.Database(b), postgres.Config{}))
}

// BenchmarkOverhead: a 5-round session with 20 ms roles on a PostgreSQL
// session over loopback; the target is total/role-latency ≤ 1.15.
func BenchmarkOverhead(b *testing.B) {
	sqlkvtest.Overhead(b, open(b, pgtest.Database(b), postgres.Config{}))
}
