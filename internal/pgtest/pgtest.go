// Package pgtest gives tests a PostgreSQL database of their own.
//
// Main, called from a test package's TestMain, starts a throwaway server
// from the postgresql package's binaries (initdb and pg_ctl, found on
// PATH or under /usr/lib/postgresql/*/bin) in a temporary folder,
// listening on 127.0.0.1 at a free port, and stops it when the tests end.
// When the process runs as root, which initdb refuses, the server runs as
// the "postgres" user (created with useradd if missing) through runuser.
// With REFINE_POSTGRES_DSN set, that server is used instead and nothing is
// started.
//
// Database then creates a fresh database for one test and drops it after.
// Without binaries or REFINE_POSTGRES_DSN the test is skipped with a
// message naming the postgresql package, unless REFINE_REQUIRE_POSTGRES=1,
// when it fails. Restart restarts the server Main started, for tests of
// what a server restart does to a client.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// server is what Main started or found; tests of one package share it.
// A package variable because TestMain cannot hand values to tests.
var server struct {
	mu      sync.Mutex
	dsn     string       // admin DSN of the server; "" when none
	why     string       // why there is none
	broken  bool         // the binaries are there but the server did not start
	restart func() error // restarts the server Main started; nil for REFINE_POSTGRES_DSN
}

// errNotInstalled: the PostgreSQL server binaries are not on this machine.
var errNotInstalled = errors.New("not installed")

// Main runs m's tests with a server available to Database and returns the
// exit code for os.Exit.
func Main(m *testing.M) int {
	if dsn := os.Getenv("REFINE_POSTGRES_DSN"); dsn != "" {
		server.dsn = dsn
		return m.Run()
	}
	stop, restart, dsn, err := start()
	if err != nil {
		server.why = err.Error()
		server.broken = !errors.Is(err, errNotInstalled)
	} else {
		server.dsn, server.restart = dsn, restart
		defer stop()
	}
	return m.Run()
}

// Database returns the DSN of a new, empty database that is dropped when t
// ends, or skips t when no server is available (fails it when
// REFINE_REQUIRE_POSTGRES=1).
func Database(t testing.TB) string {
	t.Helper()
	server.mu.Lock()
	admin, why, broken := server.dsn, server.why, server.broken
	server.mu.Unlock()
	if admin == "" {
		if why == "" {
			why, broken = "pgtest.Main was not called from TestMain", true
		}
		if broken || os.Getenv("REFINE_REQUIRE_POSTGRES") == "1" {
			t.Fatalf("store/postgres tests: no PostgreSQL server: %s (the binaries are installed, or REFINE_REQUIRE_POSTGRES=1 asks for them)", why)
		}
		t.Skipf("store/postgres tests skipped: %s; install the postgresql package or set REFINE_POSTGRES_DSN", why)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "refine_test_" + hex.EncodeToString(b[:])
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatalf("pgtest: connect to %s: %v", redact(admin), err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if conn, err := pgx.Connect(ctx, admin); err == nil {
			conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
			conn.Close(ctx)
		}
	})
	dsn, err := withDatabase(admin, name)
	if err != nil {
		t.Fatal(err)
	}
	return dsn
}

// Restart restarts the server (pg_ctl restart -m fast: every connection
// is ended, and the server refuses new ones until it is back), as an
// operator or a failover does, and returns once it accepts connections
// again. It skips t on a server named by REFINE_POSTGRES_DSN, which this
// process did not start. The server is shared by the package's tests: a
// test calling Restart must not run in parallel with others.
func Restart(t testing.TB) {
	t.Helper()
	server.mu.Lock()
	restart := server.restart
	server.mu.Unlock()
	if restart == nil {
		t.Skip("pgtest: the server was not started by this test binary (REFINE_POSTGRES_DSN, or none), so it is not restarted")
	}
	if err := restart(); err != nil {
		t.Fatalf("pgtest: restart: %v", err)
	}
}

// withDatabase points dsn (URL or key=value form) at database name.
func withDatabase(dsn, name string) (string, error) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return "", fmt.Errorf("pgtest: REFINE_POSTGRES_DSN: %w", err)
		}
		u.Path = "/" + name
		return u.String(), nil
	}
	return dsn + " dbname=" + name, nil
}

func redact(dsn string) string {
	if u, err := url.Parse(dsn); err == nil && u.User != nil {
		u.User = url.User(u.User.Username())
		return u.String()
	}
	return "the server"
}

// find returns the path of a PostgreSQL server binary.
func find(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/" + name)
	if len(matches) == 0 {
		return "", fmt.Errorf("%s %w: not on PATH or in /usr/lib/postgresql/*/bin (the postgresql package)", name, errNotInstalled)
	}
	sort.Slice(matches, func(i, j int) bool { return version(matches[i]) > version(matches[j]) })
	return matches[0], nil
}

func version(p string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(p))))
	return n
}

// start runs initdb and pg_ctl start in a temporary folder and returns
// functions that stop the server and remove the folder, and that restart
// the server.
func start() (stop func(), restart func() error, dsn string, err error) {
	initdb, err := find("initdb")
	if err != nil {
		return nil, nil, "", err
	}
	pgctl, err := find("pg_ctl")
	if err != nil {
		return nil, nil, "", err
	}
	dir, err := os.MkdirTemp("", "refine-pgtest-")
	if err != nil {
		return nil, nil, "", err
	}
	fail := func(err error) (func(), func() error, string, error) {
		os.RemoveAll(dir)
		return nil, nil, "", err
	}
	var prefix []string // runs a command as the server's user
	if os.Geteuid() == 0 {
		uid, gid, err := postgresUser()
		if err != nil {
			return fail(err)
		}
		if err := os.Chown(dir, uid, gid); err != nil {
			return fail(err)
		}
		prefix = []string{"runuser", "-u", "postgres", "--"}
	}
	run := func(args ...string) error {
		args = append(prefix, args...)
		out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	data := filepath.Join(dir, "data")
	if err := run(initdb, "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-locale", "--no-sync"); err != nil {
		return fail(fmt.Errorf("pgtest: initdb: %w", err))
	}
	port, err := freePort()
	if err != nil {
		return fail(err)
	}
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200", port, dir)
	logFile := filepath.Join(dir, "server.log")
	if err := run(pgctl, "-D", data, "-l", logFile, "-o", opts, "-w", "-t", "60", "start"); err != nil {
		log, _ := os.ReadFile(logFile)
		return fail(fmt.Errorf("pgtest: pg_ctl start: %w\nserver log:\n%s", err, log))
	}
	stop = func() {
		run(pgctl, "-D", data, "-m", "immediate", "-w", "stop")
		os.RemoveAll(dir)
	}
	restart = func() error {
		return run(pgctl, "-D", data, "-l", logFile, "-o", opts, "-m", "fast", "-w", "-t", "60", "restart")
	}
	return stop, restart, fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port), nil
}

// postgresUser returns the "postgres" user's IDs, creating the user if
// missing.
func postgresUser() (uid, gid int, err error) {
	u, err := user.Lookup("postgres")
	if err != nil {
		var unknown user.UnknownUserError
		if !errors.As(err, &unknown) {
			return 0, 0, err
		}
		if out, err := exec.Command("useradd", "--system", "--user-group", "--no-create-home", "postgres").CombinedOutput(); err != nil {
			return 0, 0, fmt.Errorf("pgtest: useradd postgres: %v: %s", err, out)
		}
		if u, err = user.Lookup("postgres"); err != nil {
			return 0, 0, err
		}
	}
	uid, _ = strconv.Atoi(u.Uid)
	gid, _ = strconv.Atoi(u.Gid)
	return uid, gid, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
