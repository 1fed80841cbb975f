package main

import (
	"testing"

	"github.com/servebench/servebench"
)

// servebench report sizes a run recorded without a sizing whose use cases were searched only in
// users (no cold-prompt search) from their users' limits.
func TestWithSizingUsersOnly(t *testing.T) {
	res := servebench.Results{Users: []servebench.UsersCapacity{{Profile: "chat", CapacityResult: servebench.CapacityResult{UseCase: "chat",
		LimitKind: servebench.LimitMeasured, Limit: servebench.Int(30), FirstFailing: servebench.Int(31)}}}}
	withSizing(&res, servebench.Plan{})
	if res.Sizing == nil || len(res.Sizing.UseCases) != 1 || res.Sizing.UseCases[0].Basis != "users" || res.Sizing.UseCases[0].UsersLimit == nil {
		t.Fatalf("sizing %+v, want chat sized from its users' limit of 30", res.Sizing)
	}
}
