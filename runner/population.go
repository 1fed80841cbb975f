package runner

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/capacity"
	"github.com/servebench/servebench/cells"
	"github.com/servebench/servebench/load"
	"github.com/servebench/servebench/workload"
)

// usersProfile is the profile of use case name's users: the plan's users.profiles (a file's
// from the live run's UserFiles, read where it started), or workload.DefaultProfile
// (workload.UserFiles.ProfileFor).
func (d *decider) usersProfile(name string) workload.UserProfile {
	var files *workload.UserFiles
	if d.live != nil {
		files = d.live.UserFiles
	}
	return files.ProfileFor(d.plan.Users, name)
}

// usersKey is the cell of a population of n users of use case uc (cells.UsersKey).
func usersKey(server servebench.ServerInfo, uc servebench.UseCase, n int) servebench.CellKey {
	return cells.UsersKey(uc, cells.Server{MaxModelLen: server.MaxModelLen}, n)
}

// usersWindow is the longest conversation of use case uc's users (tokens, prompt and answer):
// its context and output tokens, no more than the target's maximum model length (cells.UsersKey).
func usersWindow(server servebench.ServerInfo, uc servebench.UseCase) int {
	return usersKey(server, uc, 0).ContextTokens
}

// fitTurns is how many turns of each user, from the one it joins at, usersFit averages: about
// what a user sends while one population is measured (its warm-up, two turns of the measured
// window and one more).
const fitTurns = 4

// usersFit is how many of the plan's users of use case uc (profile prof, conversations of up to
// window tokens, at most maxUsers) the server's KV cache is expected to hold, and the mean
// tokens of one user's cached history among them: users are counted in order, each with the
// mean prompt (the whole history its turn re-sends, which the cache then keeps) of its first
// fitTurns turns from the one it joins at, drawn exactly as the population draws them
// (workload.NewPopulation: a population of N users is the first N of a larger one's), until
// their sum passes the cache's capacity (server.KVCacheTokens). The draws are seeded, so the
// figure is the same live and recomputed. It is an estimate (the answers being generated, the
// blocks' rounding and the cache's eviction order are left out): the search uses it only to
// choose levels (capacity.SearchConfig.Fit), never to judge one. fit is 0 when the server
// does not say its capacity, or when the users replay a file (a dataset's or a trace's: not
// estimated); maxUsers when every user fits.
func usersFit(server servebench.ServerInfo, up *servebench.UsersPlan, prof workload.UserProfile, window, maxUsers int) (fit int, perUser float64) {
	if server.KVCacheTokens <= 0 || up == nil || maxUsers < 1 || prof.Script != nil {
		return 0, 0 // a population replaying a file (Script) is not estimated: its search climbs as any other
	}
	pop := workload.NewPopulation(workload.PopulationConfig{Users: up, Profile: prof, Window: window, N: maxUsers, MinTokens: 1, Stride: 1})
	var held float64
	for u := range maxUsers {
		turns, join := pop.Session(u, true)
		if join < 0 || join >= len(turns) {
			join = 0
		}
		hist := 0 // the conversation so far
		for _, t := range turns[:join] {
			hist += t.NewTokens + t.OutputTokens
		}
		var sum float64
		n := 0
		for n < fitTurns && len(turns) > 0 {
			for _, t := range turns[join:] {
				if n == fitTurns {
					break
				}
				hist += t.NewTokens
				sum += float64(hist)
				hist += t.OutputTokens
				n++
			}
			if n < fitTurns { // the conversation ended: a new one takes its place
				turns, _ = pop.Session(u, false)
				join, hist = 0, 0
			}
		}
		if n == 0 {
			continue
		}
		w := sum / float64(n)
		if held+w > float64(server.KVCacheTokens) {
			break
		}
		held += w
		fit = u + 1
	}
	if fit == 0 {
		return 0, 0
	}
	return fit, held / float64(fit)
}

// approxTokens writes a token count to three figures: 1.24M, 5.31K, 812.
func approxTokens(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.3gM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.3gK", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}

// minTexter is a PromptBuilder that says the shortest prompt it can build.
type minTexter interface{ MinTokens() int }

// population is the load.Population of the users of uc's cell key, all of them on this machine
// (workload.NewPopulation; a distributed run's workers each build their own users').
func (r *Runner) population(uc servebench.UseCase, key servebench.CellKey) *load.Population {
	least := 1
	if m, ok := r.Prompts.(minTexter); ok {
		least = m.MinTokens()
	}
	return workload.NewPopulation(workload.PopulationConfig{Users: r.Plan.Users, Profile: r.UserFiles.ProfileFor(r.Plan.Users, uc.Name),
		Window: key.ContextTokens, N: key.Concurrency, Prompts: r.Prompts, MinTokens: least, Stride: 1})
}

// serverLoad is what the server's metrics showed while a population ran: its KV-cache usage
// gauge every second (mean and peak, 0..1) and its preemption counter's increase.
type serverLoad struct {
	kvSum, kvMax float64
	kvN          int
	pre0, pre1   float64
	preN         int
}

// watchServer scrapes the server's metrics every second until the returned stop is called, and
// stop returns what they showed; nothing when the run has no metrics.
func (r *Runner) watchServer(ctx context.Context) (stop func() serverLoad) {
	if r.Metrics == nil {
		return func() serverLoad { return serverLoad{} }
	}
	ctx, cancel := context.WithCancel(ctx)
	var sl serverLoad
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			if snap, err := r.Metrics.Scrape(ctx); err == nil && snap != nil {
				if v, ok := snap.KVCacheUsage(); ok {
					sl.kvSum += v
					sl.kvMax = max(sl.kvMax, v)
					sl.kvN++
				}
				if v, ok := snap.Preemptions(); ok {
					if sl.preN == 0 {
						sl.pre0 = v
					}
					sl.pre1 = v
					sl.preN++
				}
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return func() serverLoad {
		cancel()
		<-done
		return sl
	}
}

// fill adds what the server showed to a population's evidence.
func (sl serverLoad) fill(e *servebench.UsersEvidence) {
	if sl.kvN > 0 {
		e.KVCacheUsageMean = servebench.Float(sl.kvSum / float64(sl.kvN))
		e.KVCacheUsageMax = servebench.Float(sl.kvMax)
	}
	if sl.preN > 1 && sl.pre1 >= sl.pre0 {
		n := int64(sl.pre1 - sl.pre0)
		e.Preemptions = &n
	}
}

// searchUsers measures each of the plan's users' use cases: a capacity search in users (the
// use case's thresholds, the same sequential search and 95% range as its capacity in concurrent
// requests), or the plan's fixed populations; each measured population joins done. Populations
// already in done are reused; a recomputation (no live run) ends at one the run did not measure.
func (d *decider) searchUsers(ctx context.Context, done map[servebench.CellKey]servebench.CellResult) error {
	up := d.plan.Users
	if up == nil {
		return nil
	}
	for _, name := range up.UseCases {
		var uc servebench.UseCase
		for _, c := range d.plan.UseCases {
			if c.Name == name {
				uc = c
			}
		}
		if uc.Name == "" {
			continue // plan validation names it
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		prof := d.usersProfile(uc.Name)
		window := usersWindow(d.server, uc)
		phase := servebench.UsersPhase(uc.Name)
		d.emit(Event{Kind: EventPhase, Phase: phase, Title: fmt.Sprintf("users of %s: %s, up to %s of conversation", uc.Name, prof.Title, tokensLabel(window))})
		cells := map[int]servebench.CellResult{}
		loads := map[int]serverLoad{} // a resumed run's populations have none
		measure := func(ctx context.Context, n int) (servebench.CellResult, int, error) {
			key := usersKey(d.server, uc, n)
			if c, ok := done[key]; ok {
				cells[n] = c
				return c, 0, nil
			}
			if d.live == nil {
				return servebench.CellResult{}, 0, errNotMeasured // Recompute: a population the run did not measure
			}
			c, sent, sl, err := d.live.measurePopulation(ctx, uc, n, key, phase)
			loads[n] = sl
			if err != nil {
				return c, sent, err
			}
			done[key] = c
			cells[n] = c
			d.addCell(c)
			return c, sent, nil
		}
		var res servebench.CapacityResult
		if len(up.Populations) > 0 {
			// Fixed populations are decided as the page's what-if decides the measured ones
			// (capacity.ReconsiderUsers): a limit between two of them, a lower bound when all
			// pass, and, when the smallest fails, no limit ("below N"), not an interpolation
			// from an unmeasured 0.
			spent := map[int]int{}
			for _, n := range up.Populations {
				_, sent, err := measure(ctx, n)
				if err != nil {
					return err
				}
				spent[n] = sent
			}
			r := capacity.ReconsiderUsers(uc, up.Populations[len(up.Populations)-1], slices.Collect(maps.Values(cells)))
			res = r.CapacityResult
			for i := range res.Points {
				res.Points[i].Reused, res.Points[i].RequestsSpent = false, spent[res.Points[i].Concurrency]
				res.RequestsSpent += res.Points[i].RequestsSpent
			}
			if !r.Decided && r.Note == "" {
				res.Note = r.Verdict
			}
			res.UseCase, res.Title, res.ContextTokens, res.OutputTokens = uc.Name, uc.Title, window, int(uc.OutputTokens)
		} else {
			var err error
			// The search starts at the use case's cold-prompt limit: a user re-sends a history the
			// server has cached and thinks between turns, so a population of that many users is
			// lighter than that many cold prompts and likely passes; starting there skips the
			// levels 1, 2, 8, … below it. It is measured like any level (if it fails, the search
			// goes down from it). Where the server says its KV cache's size, the climb heeds how
			// many users' histories it holds (fit): it goes to fit, not past it, while every level
			// passes, and past it in small steps (capacity.SearchConfig.Fit); and it starts at fit,
			// where the populations below it, their histories all cached, would pass and say
			// nothing more (15 chat users and 1 coding agent, from the cold limits, took a minute
			// on the H200 simulator before the search went to 229 and 46).
			start := d.cold[uc.Name]
			fit, perUser := usersFit(d.server, up, prof, window, up.MaxUsers)
			if fit > 0 {
				start = fit
				d.emit(Event{Kind: EventNote, Phase: phase, Message: fmt.Sprintf("the server's KV cache holds %s tokens: the histories of about %d of these users (%s tokens each on average); the search starts at %d users, then climbs past it in small steps",
					approxTokens(float64(d.server.KVCacheTokens)), fit, approxTokens(perUser), fit)})
			}
			// A bracket within a sixteenth of the limit whose verdict did not settle at one end is
			// done: the metric sits within its noise of the threshold there (capacity.UsersResolution).
			res, err = capacity.Search(ctx, uc, capacity.SearchConfig{Ceiling: up.MaxUsers, RequestsAt: d.levelCost, Start: start, Fit: fit,
				Resolution: capacity.UsersResolution}, measure)
			if err != nil {
				return err
			}
			res.ContextTokens = window
		}
		out := servebench.UsersCapacity{CapacityResult: res, Profile: prof.Name, ProfileText: prof.Text()}
		for _, p := range res.Points {
			if c, ok := cells[p.Concurrency]; ok {
				e := capacity.UsersEvidenceOf(c, p.Concurrency, p.Pass)
				loads[p.Concurrency].fill(&e)
				out.Points = append(out.Points, e)
			}
		}
		out.Why, out.WhyText = capacity.UsersWhy(res, out.Points)
		out.Tiers = capacity.UsersTiers(up.Tiers, uc, max(up.MaxUsers, res.Ceiling), slices.Collect(maps.Values(cells)), out.Points)
		d.res.AddUsers(out)
		d.flush()
	}
	return nil
}

// measurePopulation measures a population of n users of uc (the cell key), and what the
// server's metrics showed while it ran.
func (r *Runner) measurePopulation(ctx context.Context, uc servebench.UseCase, n int, key servebench.CellKey, phase string) (servebench.CellResult, int, serverLoad, error) {
	r.startLevel(key)
	r.emit(Event{Kind: EventCellStart, Phase: phase, Cell: key, Planned: r.planned(key)})
	r.pop = r.population(uc, key)
	stop := r.watchServer(ctx)
	c, sent, err := r.measure(ctx, key, phase, 0, 0, func(c servebench.CellResult) bool { return capacity.Settled(uc, c) })
	sl := stop()
	r.pop = nil
	r.endCell(key, c)
	return c, sent, sl, err
}
