// Package frontier turns a run's measured concurrency levels into the buyer's view: output
// tokens per second per GPU against tokens per second per user (the Pareto frontier of each
// workload), what those tokens cost and draw, which measured cell is cheapest under each TTFT
// cap, and how many users each SLO tier (a per-user speed floor under a TTFT ceiling) holds per
// GPU, per megawatt and per dollar-hour.
//
//	h := frontier.Resolve(plan.Sizing, plan.Metadata.GPU) // GPUs, $/GPU·h and kW, each with its source
//	a := frontier.Analyze(frontier.Input{Cells: res.Cells, Capacity: res.Capacity, Plan: plan.Sizing, DeclaredGPU: gpu})
//	r := a.Curves[0].At(50, h)                           // throughput per GPU and cost at 50 tok/s per user
//
// Every formula is one function here with its unit in its doc comment (USDPerMillionTokens,
// TokensPerUSD, TokensPerSecondPerMW, AllInJoulesPerToken, ReplicasFor, MonthlyUSD). Every
// figure carries where its inputs came from (Source: measured, declared, default). A value
// read between two measured points says so (ReadInterpolated); the first-token table and the
// SLO tiers cite measured cells only. The package is pure: no I/O, no clock.
package frontier
