package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/refine-spec/refine/internal/pgtest"
	"github.com/refine-spec/refine/internal/sqlkv"
)

func TestClassify(t *testing.T) {
	pgErr := func(severity, code string) error {
		return fmt.Errorf("postgres: commit to session s: %w", &pgconn.PgError{Severity: severity, Code: code})
	}
	for _, tc := range []struct {
		name string
		err  error
		want sqlkv.Fault
	}{
		{"terminated by an administrator", pgErr("FATAL", "57P01"), sqlkv.FaultBroken},
		{"server shutting down", pgErr("FATAL", "57P02"), sqlkv.FaultBroken},
		{"server starting up", pgErr("FATAL", "57P03"), sqlkv.FaultBroken},
		{"connection failure", pgErr("FATAL", "08006"), sqlkv.FaultBroken},
		{"other fatal", pgErr("FATAL", "XX000"), sqlkv.FaultBroken},
		{"idle in transaction timeout", pgErr("FATAL", "25P03"), sqlkv.FaultAborted},
		{"lock timeout", pgErr("ERROR", "55P03"), sqlkv.FaultAborted},
		{"deadlock", pgErr("ERROR", "40P01"), sqlkv.FaultAborted},
		{"serialization failure", pgErr("ERROR", "40001"), sqlkv.FaultAborted},
		{"unique violation", pgErr("ERROR", "23505"), sqlkv.FaultNone},
		{"syntax error", pgErr("ERROR", "42601"), sqlkv.FaultNone},
		{"commit turned rollback", fmt.Errorf("x: %w", pgx.ErrTxCommitRollback), sqlkv.FaultAborted},
		{"connection refused", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, sqlkv.FaultBroken},
		{"connection reset", fmt.Errorf("read: %w", &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}), sqlkv.FaultBroken},
		{"unexpected EOF", fmt.Errorf("receive: %w", io.ErrUnexpectedEOF), sqlkv.FaultBroken},
		{"closed network connection", fmt.Errorf("write: %w", net.ErrClosed), sqlkv.FaultBroken},
		{"context canceled", context.Canceled, sqlkv.FaultNone},
		{"anything else", errors.New("cannot encode"), sqlkv.FaultNone},
	} {
		if got := (&pool{}).Classify(tc.err); got != tc.want {
			t.Errorf("%s: Classify(%v) = %d, want %d", tc.name, tc.err, got, tc.want)
		}
	}
}

// withParam adds a run-time parameter to a URL or key=value DSN.
func withParam(dsn, name, value string) string {
	switch {
	case !strings.Contains(dsn, "://"):
		return dsn + " " + name + "=" + value
	case strings.Contains(dsn, "?"):
		return dsn + "&" + name + "=" + value
	}
	return dsn + "?" + name + "=" + value
}

// Every connection of the pool carries the timeouts the lease implies,
// unless the DSN sets its own.
func TestConnectionTimeoutsFollowTheLease(t *testing.T) {
	dsn := pgtest.Database(t)
	show := func(db *DB, name string) string {
		var v string
		if err := db.drv.p.QueryRow(t.Context(), "SHOW "+name).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, tc := range []struct {
		dsn             string
		lease           time.Duration
		wantIdle, wantL string
	}{
		{dsn, 0, "15s", "7500ms"},
		{dsn, 4 * time.Second, "2s", "1s"},
		{withParam(dsn, "lock_timeout", "9s"), 4 * time.Second, "2s", "9s"},
	} {
		db, err := Open(t.Context(), tc.dsn, Config{LeaseTTL: tc.lease})
		if err != nil {
			t.Fatal(err)
		}
		idle, lock := show(db, "idle_in_transaction_session_timeout"), show(db, "lock_timeout")
		db.Close()
		if idle != tc.wantIdle || lock != tc.wantL {
			t.Errorf("lease %v, DSN %q: idle_in_transaction_session_timeout %s, lock_timeout %s; want %s, %s",
				tc.lease, tc.dsn, idle, lock, tc.wantIdle, tc.wantL)
		}
	}
}
