package runner

import (
	"testing"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/workload"
)

// How many users' histories the KV cache holds: users counted in order, each with the mean
// prompt of its first turns as the population draws them, until the cache is full; none when
// the server does not say its capacity. The draws are seeded and a population is the first N
// users of a larger one, so the figure does not depend on the most users searched (beyond it)
// and is the same twice. Coding agents keep longer histories than chat users, so fewer of them
// fit, and a shorter window keeps the agents' histories shorter.
func TestUsersFit(t *testing.T) {
	up := &servebench.UsersPlan{Seed: 1, ThinkScale: 0.25}
	if fit, per := usersFit(servebench.ServerInfo{}, up, workload.ChatUser, 33024, 512); fit != 0 || per != 0 {
		t.Errorf("no KV capacity known: fit %d (%.0f tokens a user), want 0", fit, per)
	}
	srv := servebench.ServerInfo{KVCacheTokens: 1235584}
	chat, chatPer := usersFit(srv, up, workload.ChatUser, 33024, 512)
	agent, agentPer := usersFit(srv, up, workload.CodingAgent, 98560, 512)
	short, shortPer := usersFit(srv, up, workload.CodingAgent, 65792, 512)
	t.Logf("chat %d users (%.0f tokens each), agents %d at 96K (%.0f), %d at 64K (%.0f)", chat, chatPer, agent, agentPer, short, shortPer)
	for _, n := range []int{chat + 1, 300, 1000} {
		if again, per := usersFit(srv, up, workload.ChatUser, 33024, n); again != chat || per != chatPer {
			t.Errorf("searching up to %d users: fit %d (%.0f tokens each), want %d (%.0f) as up to 512", n, again, per, chat, chatPer)
		}
	}
	if few, _ := usersFit(srv, up, workload.ChatUser, 33024, 40); few != 40 {
		t.Errorf("searching up to 40 users, all of whom fit: fit %d, want 40", few)
	}
	for _, c := range []struct {
		name string
		fit  int
		per  float64
	}{{"chat", chat, chatPer}, {"agents at 96K", agent, agentPer}, {"agents at 64K", short, shortPer}} {
		if held := float64(c.fit) * c.per; held > float64(srv.KVCacheTokens)+1e-6 || float64(srv.KVCacheTokens)-held > 131072 {
			t.Errorf("%s: %d users of %.0f tokens hold %.0f of the cache's %d tokens: want it full to within one user", c.name, c.fit, c.per, held, srv.KVCacheTokens)
		}
	}
	// A chat history is a first turn (median 800) plus a few turns of ~500 tokens with answers;
	// an agent's is a 6K system prompt plus ~1K a turn over tens of turns (AA-AgentPerf: mean
	// prompt ≈ 27K).
	if chatPer < 2000 || chatPer > 10000 || agentPer < 15000 || agentPer > 40000 || shortPer >= agentPer {
		t.Errorf("mean history a user: chat %.0f, agent %.0f at 96K, %.0f at 64K: outside what the profiles give", chatPer, agentPer, shortPer)
	}
	if !(agent < short && short < chat) {
		t.Errorf("fit: chat %d, agents %d (96K) and %d (64K): want fewer agents than chat users, fewer at the longer window", chat, agent, short)
	}
}
