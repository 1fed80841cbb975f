// Package pgtest starts a throwaway PostgreSQL server for tests: a new cluster in a temporary
// folder (initdb), listening only on a unix socket in that folder (pg_ctl), removed when the
// test ends. It needs Debian's postgresql package (or any initdb and pg_ctl on PATH); as root
// it runs the server as the postgres user, which PostgreSQL requires. Where either is missing
// the test is skipped with a message saying what to install.
package pgtest

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/stdlib"
)

// Server is a running throwaway cluster.
type Server struct {
	dir string
	run func(name string, args ...string) ([]byte, error)
}

// binDir finds the folder of initdb and pg_ctl: PATH first, then Debian's
// /usr/lib/postgresql/VERSION/bin (newest version).
func binDir() (string, bool) {
	if p, err := exec.LookPath("initdb"); err == nil {
		if _, err := exec.LookPath("pg_ctl"); err == nil {
			return filepath.Dir(p), true
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	sort.Slice(dirs, func(i, j int) bool {
		vi, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(dirs[i]))))
		vj, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(dirs[j]))))
		return vi > vj
	})
	if len(dirs) == 0 {
		return "", false
	}
	return filepath.Dir(dirs[0]), true
}

// Start starts a cluster for t and returns it; it is stopped and removed when t ends.
func Start(t testing.TB) *Server {
	t.Helper()
	s, skip, err := start()
	if skip != "" {
		t.Skip(skip)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

var shared struct {
	sync.Mutex
	s       *Server
	skip    string
	err     error
	started bool
}

// Shared is one cluster for every test of a test binary that calls it, started by the first
// (starting a cluster takes seconds); the package's TestMain calls StopShared after m.Run.
func Shared(t testing.TB) *Server {
	t.Helper()
	shared.Lock()
	defer shared.Unlock()
	if !shared.started {
		shared.started = true
		shared.s, shared.skip, shared.err = start()
	}
	if shared.skip != "" {
		t.Skip(shared.skip)
	}
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.s
}

// StopShared stops the cluster Shared started, if any.
func StopShared() {
	shared.Lock()
	defer shared.Unlock()
	if shared.s != nil {
		shared.s.Stop()
		shared.s = nil
	}
}

// start makes and starts a cluster; skip says what is missing when there is none to start.
func start() (s *Server, skip string, err error) {
	bin, ok := binDir()
	if !ok {
		return nil, "PostgreSQL server not installed (no initdb or pg_ctl on PATH or under /usr/lib/postgresql/*/bin): " +
			"apt-get install postgresql, as scripts/test.sh does, to run the PostgreSQL store tests", nil
	}
	var runAs *user.User
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, "running as root and there is no postgres user to run the PostgreSQL server as (PostgreSQL refuses root): " +
				"apt-get install postgresql creates it", nil
		}
		runAs = u
	}
	// not t.TempDir: the server's user must be able to reach the folder
	dir, err := os.MkdirTemp("", "servebench-pg-")
	if err != nil {
		return nil, "", err
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		os.RemoveAll(dir)
		return nil, "", err
	}
	s = &Server{dir: dir}
	s.run = func(name string, args ...string) ([]byte, error) {
		cmd := exec.Command(filepath.Join(bin, name), args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "LC_ALL=C", "TZ=UTC")
		if runAs != nil {
			if err := asUser(cmd, runAs); err != nil {
				return nil, err
			}
		}
		return cmd.CombinedOutput()
	}
	if runAs != nil {
		if err := chown(dir, runAs); err != nil {
			os.RemoveAll(dir)
			return nil, "", err
		}
	}
	if out, err := s.run("initdb", "-D", filepath.Join(dir, "data"), "-U", "servebench", "--auth=trust", "-E", "UTF8", "--no-sync"); err != nil {
		os.RemoveAll(dir)
		return nil, "", fmt.Errorf("initdb: %v\n%s", err, out)
	}
	opts := fmt.Sprintf("-k %s -c listen_addresses= -F -c max_connections=100", dir)
	if out, err := s.run("pg_ctl", "-D", filepath.Join(dir, "data"), "-l", filepath.Join(dir, "log"), "-o", opts, "-w", "-t", "60", "start"); err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "log"))
		s.Stop()
		return nil, "", fmt.Errorf("pg_ctl start: %v\n%s\n%s", err, out, log)
	}
	return s, "", nil
}

// Stop stops the server at once and removes its folder.
func (s *Server) Stop() {
	if out, err := s.run("pg_ctl", "-D", filepath.Join(s.dir, "data"), "-m", "immediate", "-w", "stop"); err != nil && !strings.Contains(string(out), "No such file") {
		fmt.Fprintf(os.Stderr, "stopping the PostgreSQL test server: %v\n%s", err, out)
	}
	os.RemoveAll(s.dir)
}

// URL is the address of database db on the server (the superuser servebench, no password).
func (s *Server) URL(db string) string {
	return "postgres://servebench@/" + db + "?host=" + s.dir + "&sslmode=disable"
}

// CreateDB creates an empty database and returns its URL; each call names a new one.
func (s *Server) CreateDB(t testing.TB, name string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db, err := sql.Open("pgx", s.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	name = fmt.Sprintf("%s_%d", name, dbSeq.Add(1))
	if _, err := db.ExecContext(ctx, `CREATE DATABASE "`+name+`"`); err != nil {
		t.Fatalf("creating database %s: %v", name, err)
	}
	return s.URL(name)
}

var dbSeq atomic.Int64

var _ = stdlib.GetDefaultDriver // registers the "pgx" driver
