package runner

import (
	"github.com/servebench/servebench"
	"github.com/servebench/servebench/workload"
)

// UsersFit is usersFit for the profile called profile (tests outside the package): how many of
// its users' histories the server's KV cache holds (0: unknown).
func UsersFit(server servebench.ServerInfo, up *servebench.UsersPlan, profile string, window int) int {
	prof, err := workload.LookupProfile(profile)
	if err != nil {
		return 0
	}
	fit, _ := usersFit(server, up, prof, window, 512)
	return fit
}
