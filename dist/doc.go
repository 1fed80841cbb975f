// Package dist spreads a run's load over several processes: a Coordinator (inside `servebench
// run --workers N`) and Workers (`servebench worker`). The coordinator is the runner's load
// Generator: for every cell it hands each worker its share of the concurrency (or of the
// arrival schedule), starts the cell on every worker at one instant, receives each request's
// record as it ends, and tells the workers to stop when the runner's own rule (load.Sizing,
// the capacity search) says the cell is sure, judged on the merged records. Workers decide
// nothing.
//
// Clocks: a request's own times (start, first token, end) are taken on one worker, so they
// need no synchronisation. Windows and throughput need every worker's records on one axis: the
// coordinator measures each worker's clock offset NTP-style (stats.ClockOffset) when it joins
// and before every cell, and moves the worker's record offsets onto its own clock with it.
//
// The wire protocol is newline-delimited JSON over one TCP connection per worker. Both sides
// prove they know the shared token (HMAC-SHA256 of the other's random nonce); the token itself
// never crosses the wire. Traffic is not encrypted: keep it inside a private network.
package dist
