package main

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/spf13/cobra"

	"github.com/servebench/servebench/store"
)

// indexHelp is the --index flag's help, the same on every command that opens the runs index.
const indexHelp = "runs index: an SQLite file, or a postgres://USER@HOST/DB URL for a store shared by many machines " +
	"(password from PGPASSWORD or ~/.pgpass); default $" + store.IndexEnv + ", else $SERVEBENCH_DATA_DIR/runs.db or ~/.local/share/servebench/runs.db"

// registerIndex adds --index to cmd.
func registerIndex(cmd *cobra.Command, p *string, extra string) {
	cmd.Flags().StringVar(p, "index", "", indexHelp+extra)
	completeFiles(cmd, "index", "db")
}

// indexLocation decides which runs index a command uses: --index, else $SERVEBENCH_INDEX, else
// the default file. A password written into --index is refused: the command line is kept in
// shell history and shown by ps; PGPASSWORD, ~/.pgpass or $SERVEBENCH_INDEX keep it out.
func indexLocation(e *env, flag string) (string, error) {
	if flag != "" {
		if u, err := url.Parse(flag); err == nil && u.Scheme != "" {
			_, hasPW := u.User.Password()
			if hasPW || u.Query().Has("password") {
				return "", withCode(exitUsage, fmt.Errorf("--index %s: a password on the command line is kept in shell history and shown by ps; "+
					"set PGPASSWORD or use ~/.pgpass (or put the whole URL in $%s)", store.RedactLocation(flag), store.IndexEnv))
			}
		}
		return flag, nil
	}
	if v := strings.TrimSpace(e.getenv(store.IndexEnv)); v != "" {
		return v, nil
	}
	p, err := store.DefaultIndexPath()
	if err != nil {
		return "", withCode(exitError, err)
	}
	return p, nil
}

// openIndex opens the runs index a command uses (indexLocation). A location that names no
// kind of index is a usage error; one that cannot be opened is an error.
func openIndex(e *env, flag string) (*store.Index, error) {
	loc, err := indexLocation(e, flag)
	if err != nil {
		return nil, err
	}
	ix, err := store.OpenIndex(loc)
	if err != nil {
		var ue *store.LocationError
		if errors.As(err, &ue) {
			return nil, withCode(exitUsage, err)
		}
		return nil, withCode(exitError, err)
	}
	return ix, nil
}
