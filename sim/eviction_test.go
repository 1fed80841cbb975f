package sim

import "testing"

// conversationHashes is the chained block keys of a prompt of tokens tokens of conversation id:
// turn after turn its prompt grows, and a turn's blocks are the earlier turn's plus new ones.
func conversationHashes(id uint64, tokens, bs int) []uint64 {
	out := make([]uint64, tokens/bs)
	for j := range out {
		out[j] = mix64(id<<32 ^ uint64(j))
	}
	return out
}

// runConversations sends turns of users conversations round robin, every user's turn t before
// any turn t + 1, one request at a time (each conversation's history: first + t × grow tokens),
// and returns the prefix-cache hit rate of the turns after the first (hit tokens / queried).
func runConversations(t *testing.T, p Profile, users, turns, first, grow int) float64 {
	t.Helper()
	c := newCore(p, "m")
	bs := p.Engine.BlockSize
	var id uint64
	var hits, queries int64
	for turn := range turns {
		for u := range users {
			tokens := first + turn*grow
			id++
			q := &seq{id: id, promptTokens: tokens, maxTokens: 16, target: 16, blockHashes: conversationHashes(uint64(u+1), tokens, bs)}
			q.arrival = c.now
			h0, q0 := c.truth.PrefixCacheHits, c.truth.PrefixCacheQueries
			c.add(q)
			for steps := 0; c.hasWork(); steps++ {
				if _, ok := c.step(); !ok {
					t.Fatalf("no progress after %d steps", steps)
				}
			}
			if turn > 0 {
				hits += c.truth.PrefixCacheHits - h0
				queries += c.truth.PrefixCacheQueries - q0
			}
		}
	}
	return float64(hits) / float64(queries)
}

// The prefix cache is bounded by the KV cache: conversations whose histories fit keep hitting;
// once the population's working set outgrows the cache, least-recently-used eviction throws
// each history out before its next turn and the hit rate falls below 50%.
func TestPrefixCacheEvictsPastKVCapacity(t *testing.T) {
	p := FastProfile
	capTokens := p.KVCapacityTokens() // about 33K tokens
	first, grow, turns := 4096, 512, 4
	last := first + (turns-1)*grow // a conversation's largest history
	fit := capTokens / last / 2    // well inside the cache
	over := 3 * capTokens / last   // three times the cache
	if fit < 2 {
		t.Fatalf("cache of %d tokens holds fewer than 2 conversations of %d", capTokens, last)
	}
	inside := runConversations(t, p, fit, turns, first, grow)
	outside := runConversations(t, p, over, turns, first, grow)
	t.Logf("%d conversations (working set %d of %d tokens): hit rate %.2f; %d conversations (%d tokens): %.2f",
		fit, fit*last, capTokens, inside, over, over*last, outside)
	if inside < 0.8 {
		t.Errorf("working set inside the KV cache: hit rate %.2f, want at least 0.8", inside)
	}
	if outside >= 0.5 {
		t.Errorf("working set three times the KV cache: hit rate %.2f, want below 0.5", outside)
	}
}

// A history partly evicted keeps its beginning: a freed request's blocks are queued for
// eviction last block first (as vLLM frees them), so what eviction takes is the tail, and the
// next turn still hits the prefix that survived. Evicting the first block first would leave the
// survivors unreachable (a prefix match stops at the first missing block).
func TestEvictionTakesTheTailFirst(t *testing.T) {
	p := FastProfile
	bs := p.Engine.BlockSize
	c := newCore(p, "m")
	run := func(id uint64, conv uint64, tokens int) (hit int) {
		q := &seq{id: id, promptTokens: tokens, maxTokens: 1, target: 1, blockHashes: conversationHashes(conv, tokens, bs)}
		h0 := c.truth.PrefixCacheHits
		c.add(q)
		for c.hasWork() {
			c.step()
		}
		return int(c.truth.PrefixCacheHits - h0)
	}
	capTokens := p.KVCapacityTokens()
	a := capTokens / 2
	run(1, 1, a)                        // conversation 1 fills half the cache
	run(2, 2, capTokens-a/2)            // another request needs a quarter of conversation 1's blocks
	hit := run(3, 1, a+2*bs)            // conversation 1's next turn
	if want := a/2 - 2*bs; hit < want { // its first half (at least) survived
		t.Errorf("next turn hit %d tokens of its %d-token history, want at least %d (the beginning survives)", hit, a, want)
	}
}
