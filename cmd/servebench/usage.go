package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// needArgs is a command's argument rule that says what is missing or too much: at least min and
// at most max (max < 0: no upper bound) arguments, each a what ("run folder"), as in the
// command's usage line.
func needArgs(min, max int, what string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		n := len(args)
		if n >= min && (max < 0 || n <= max) {
			return nil
		}
		plural := func(k int) string {
			if k == 1 {
				return fmt.Sprintf("1 %s", what)
			}
			return fmt.Sprintf("%d %ss", k, what)
		}
		var want string
		switch {
		case min == max:
			want = plural(min)
		case max < 0:
			want = "at least " + plural(min)
		default:
			want = fmt.Sprintf("%d to %s", min, plural(max))
		}
		got := "none"
		if n > 0 {
			got = fmt.Sprintf("%d (%s)", n, strings.Join(args, " "))
		}
		return withCode(exitUsage, fmt.Errorf("%s needs %s, got %s: usage %s (see %s --help)", verb(c), want, got, c.UseLine(), c.CommandPath()))
	}
}

// noArgs is cobra.NoArgs saying that the command's settings are flags.
func noArgs(c *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	return withCode(exitUsage, fmt.Errorf("%s takes no arguments, got %q: its settings are flags, e.g. %s (see %s --help)", verb(c), strings.Join(args, " "), exampleFlag(c), c.CommandPath()))
}

// verb is c's path without the program's name ("sim validate"), which error messages already
// start with.
func verb(c *cobra.Command) string {
	p := c.CommandPath()
	if c.HasParent() {
		p = strings.TrimPrefix(p, c.Root().Name()+" ")
	}
	return p
}

// exampleFlag names one of c's flags for noArgs' hint ("--url" for run).
func exampleFlag(c *cobra.Command) string {
	for _, name := range []string{"url", "profile", "coordinator", "listen"} {
		if f := c.Flags().Lookup(name); f != nil {
			return "--" + name
		}
	}
	return "--help"
}

// flagError is the root's flag error: cobra's, with the closest flag of the command when the
// flag is unknown ("unknown flag: --concurency; did you mean --concurrency?").
func flagError(c *cobra.Command, err error) error {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "unknown flag: --"); ok {
		if s := closestFlag(c, name); s != "" {
			msg += "; did you mean --" + s + "?"
		}
	}
	return withCode(exitUsage, fmt.Errorf("%w (see %s --help)", errors.New(msg), c.CommandPath()))
}

// closestFlag is the flag of c (local or inherited) nearest to name by edit distance, when it is
// near enough to be a typo: at most 2 edits, or at most a third of the name's length; "" if none.
func closestFlag(c *cobra.Command, name string) string {
	best, bestD := "", 1<<30
	visit := func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		if d := editDistance(name, f.Name); d < bestD {
			best, bestD = f.Name, d
		}
	}
	c.Flags().VisitAll(visit)
	c.InheritedFlags().VisitAll(visit)
	if best == "" || bestD > max(2, len(name)/3) {
		return ""
	}
	return best
}

// editDistance is the Levenshtein distance between a and b (insertions, deletions and
// substitutions of one byte each cost 1).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
