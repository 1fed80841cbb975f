package report

import (
	"fmt"
	"math"
	"strings"

	servebench "github.com/servebench/servebench"
	"github.com/servebench/servebench/capacity"
)

// fmtMonthly writes a monthly amount in whole dollars with thousands separators: "$10,950".
func fmtMonthly(v float64) string { return "$" + fmtInt(int(math.Round(v))) }

// fmtUsers writes a user count: "1,000", "96", "12.5".
func fmtUsers(v float64) string {
	if v == math.Trunc(v) {
		return fmtInt(int(v))
	}
	return fmtNum(v, 1)
}

// sizingCell writes one target's deployment: "3 replicas (6 GPUs), $10,950/month", prefixed
// with "at most" for a lower bound and "~" for an interpolated limit.
func sizingCell(u servebench.UseCaseSizing, t servebench.SizingTarget, gpusPerReplica int) string {
	s := plural(t.Replicas, "replica")
	if gpusPerReplica != 1 {
		s += " (" + plural(t.GPUs, "GPU") + ")"
	}
	if t.MonthlyUSD != nil {
		s += ", " + fmtMonthly(*t.MonthlyUSD) + "/month"
	}
	switch {
	case u.AtMost:
		s = "at most " + s
	case u.Approximate:
		s = "~" + s
	}
	return s
}

// perMillion writes the cost per 1M output tokens at the limit: "$2.78 ($2.53 GPU + $0.25
// electricity)".
func perMillion(u servebench.UseCaseSizing) string {
	if u.TotalUSDPerMillionOutputTokens == nil {
		if u.ElectricityUSDPerMillionOutputTokens != nil {
			return fmtUSD(*u.ElectricityUSDPerMillionOutputTokens) + " electricity only (GPU price not given)"
		}
		return "—"
	}
	s := fmtUSD(*u.TotalUSDPerMillionOutputTokens)
	if u.ElectricityUSDPerMillionOutputTokens != nil {
		s += fmt.Sprintf(" (%s GPU + %s electricity)", fmtUSD(*u.HardwareUSDPerMillionOutputTokens), fmtUSD(*u.ElectricityUSDPerMillionOutputTokens))
	} else {
		s += " (GPU only)"
	}
	if u.AtMost {
		s = "at most " + s
	}
	return s
}

// sectionCapacityPlanning answers the buyer's question (how many GPUs and dollars for N users)
// from results.json's sizing.
func (b *builder) sectionCapacityPlanning() {
	const id, title = "capacity-planning", "Capacity Planning"
	sz := b.res.Sizing
	if sz == nil || len(sz.UseCases) == 0 {
		b.add(id, title, 1, missing("No capacity limit was searched in this run, so there is nothing to size. Run with --use-cases default (or name use cases in the plan) to turn capacity limits into replicas, GPUs and cost."))
		return
	}
	gpus := plural(sz.GPUsPerReplica, "GPU")
	src := sz.GPUsPerReplicaSource
	switch {
	case src == "plan":
		src = "as set in sizing.gpus_per_replica"
	case strings.HasPrefix(src, "declared GPU: "):
		src = "from the declared GPU \"" + strings.TrimPrefix(src, "declared GPU: ") + "\""
	default:
		src = "no GPU count declared: set metadata.gpu (e.g. \"2x H100\") or --gpus-per-replica"
	}
	price := "No GPU price was given, so the table shows replicas and GPUs only: pass --gpu-price USD per GPU-hour (or sizing.gpu_usd_per_hour in the plan) for monthly cost and cost per token."
	if sz.GPUUSDPerHour > 0 {
		price = fmt.Sprintf("GPUs cost %s per GPU-hour; a month is %s hours.", fmtUSD(sz.GPUUSDPerHour), fmtNum(sz.HoursPerMonth, 0))
	}
	intro := para("How many replicas of the measured system serve a given number of users of each use case. One replica is the system measured here: %s (%s). One concurrent request slot serves %s (users pause to read and type between requests; set sizing.users_per_slot or --users-per-slot), so a replica serves capacity limit × %s. %s",
		gpus, src, counted(fmtUsers(sz.UsersPerSlot), "active user"), counted(fmtUsers(sz.UsersPerSlot), "user"), price)
	byUsers := false
	for _, u := range sz.UseCases {
		byUsers = byUsers || u.Basis != ""
	}
	if byUsers {
		intro = para("How many replicas of the measured system serve a given number of users of each use case. One replica is the system measured here: %s (%s). Where this run measured a use case's capacity in users (Capacity in Users), a replica serves its users' limit: that many users of its profile, each thinking between turns as its profile does, with the server's prompt cache, measured; users per slot does not apply to it. Elsewhere one concurrent request slot serves %s (users pause to read and type between requests; set sizing.users_per_slot or --users-per-slot), so a replica serves the cold-prompt limit × %s. The SIZED FROM column says which limit each row uses. %s",
			gpus, src, counted(fmtUsers(sz.UsersPerSlot), "active user"), counted(fmtUsers(sz.UsersPerSlot), "user"), price)
	}

	header := []string{"USE CASE", "CAPACITY LIMIT"}
	if byUsers {
		header = append(header, "SIZED FROM")
	}
	header = append(header, "USERS PER REPLICA")
	for _, n := range sz.TargetUsers {
		header = append(header, strings.ToUpper(plural(n, "user")))
	}
	header = append(header, "$ PER 1M OUTPUT TOKENS AT THE LIMIT")
	t := &Table{Header: header}
	var notes, lines []string
	for _, u := range sz.UseCases {
		cr := b.capacityOf(u.UseCase)
		row := []string{useCaseHeading(cr), b.limitLabelOf(u.UseCase)}
		if byUsers {
			row = append(row, b.sizedFrom(u, sz.UsersPerSlot))
		}
		if u.UsersPerReplica == nil {
			row = append(row, "—")
			for range sz.TargetUsers {
				row = append(row, "—")
			}
			row = append(row, "—")
			t.Rows = append(t.Rows, row)
			notes = append(notes, useCaseTitle(cr)+": "+u.Note)
			lines = append(lines, useCaseTitle(cr)+": "+b.limitLabelOf(u.UseCase)+", no size")
			continue
		}
		users := usersLabel(u)
		row = append(row, users)
		for _, tg := range u.Targets {
			row = append(row, sizingCell(u, tg, sz.GPUsPerReplica))
		}
		row = append(row, perMillion(u))
		t.Rows = append(t.Rows, row)
		line := fmt.Sprintf("%s: %s per replica", useCaseTitle(cr), counted(users, "user"))
		if byUsers {
			line += ", from the " + b.sizedFrom(u, sz.UsersPerSlot)
		}
		for _, tg := range u.Targets {
			line += fmt.Sprintf("; %s → %s", plural(tg.Users, "user"), sizingCell(u, tg, sz.GPUsPerReplica))
		}
		if u.TotalUSDPerMillionOutputTokens != nil {
			line += "; " + perMillion(u) + " per 1M output tokens"
		}
		lines = append(lines, line)
	}
	blocks := []Block{intro, tableB(t)}
	blocks = append(blocks, para("Replicas = ⌈users ÷ users per replica⌉, GPUs = replicas × %s per replica. A capacity limit written N+ is a lower bound (the highest level tested still passed), so its replica counts and costs read \"at most\"; ~N is interpolated between two measured levels. Cost per 1M output tokens is the replica's GPU rental divided by its system output throughput at the capacity limit, every slot busy (GPUs × price per hour ÷ (tokens/s × 3,600) × 1,000,000), plus the electricity measured in that cell where GPU power was recorded; an idle or half-used replica costs more per token.", gpus))
	for _, n := range notes {
		blocks = append(blocks, note(n))
	}
	if b.rep.Simulated {
		blocks = append(blocks, note("SIMULATED: these sizes follow from simulated capacity limits. They show how the arithmetic works, not what to buy."))
	}
	b.add(id, title, 1, blocks...)
	b.rep.Planning = t
	perSlot := fmt.Sprintf("%s per request slot, %s per replica", counted(fmtUsers(sz.UsersPerSlot), "user"), gpus)
	if sz.GPUUSDPerHour > 0 {
		perSlot += ", " + fmtUSD(sz.GPUUSDPerHour) + " per GPU-hour"
	}
	b.rep.PlanningSummary = append([]string{perSlot}, lines...)
}

// sizedFrom says which limit a row of a run with populations is sized from: "users' limit 37
// (chat users, prompt cache)" or "cold-prompt limit × 4 (not searched in users)".
func (b *builder) sizedFrom(u servebench.UseCaseSizing, perSlot float64) string {
	if u.Basis == capacity.SizeBasisUsers {
		label := "—"
		for _, uc := range b.res.Users {
			if uc.UseCase == u.UseCase {
				label = usersLimit(uc.CapacityResult)
			}
		}
		who := "users"
		if u.UsersProfile != "" {
			who = u.UsersProfile + " users"
		}
		return fmt.Sprintf("users' limit %s (%s, prompt cache)", label, who)
	}
	s := "cold-prompt limit"
	if u.UsersPerReplica != nil {
		s += " × " + fmtUsers(perSlot)
	}
	if u.BasisNote != "" {
		s += " (" + u.BasisNote + ")"
	}
	return s
}

// capacityOf returns the cold-prompt capacity result of a use case; for a use case searched
// only in users, its users' result (title and context); a zero value named name when neither.
func (b *builder) capacityOf(name string) servebench.CapacityResult {
	for _, cr := range b.res.Capacity {
		if cr.UseCase == name {
			return cr
		}
	}
	for _, u := range b.res.Users {
		if u.UseCase == name {
			return u.CapacityResult
		}
	}
	return servebench.CapacityResult{UseCase: name, Title: name}
}

// limitLabelOf returns the verdict's label of a use case ("24", "125+", "not viable").
func (b *builder) limitLabelOf(name string) string {
	for _, v := range b.rep.Capacity {
		if v.UseCase == name {
			return v.LimitLabel
		}
	}
	return "—"
}

// usersLabel writes the users one replica serves: "96", "128+" (lower bound), "~40".
func usersLabel(u servebench.UseCaseSizing) string {
	if u.UsersPerReplica == nil {
		return "—"
	}
	users := fmtUsers(*u.UsersPerReplica)
	if u.AtMost {
		users += "+"
	} else if u.Approximate {
		users = "~" + users
	}
	return users
}

// sizingOf returns the sizing of a use case, nil when none.
func (b *builder) sizingOf(name string) *servebench.UseCaseSizing {
	if b.res.Sizing == nil {
		return nil
	}
	for i := range b.res.Sizing.UseCases {
		if b.res.Sizing.UseCases[i].UseCase == name {
			return &b.res.Sizing.UseCases[i]
		}
	}
	return nil
}
