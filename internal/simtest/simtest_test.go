package simtest_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/servebench/servebench/internal/simtest"
	"github.com/servebench/servebench/sim"
)

// complete asks hc for a completion of out tokens from base and returns the completion tokens
// the usage reports.
func complete(t *testing.T, hc *http.Client, base, model string, out int) int {
	t.Helper()
	body := `{"model":"` + model + `","prompt":"one two three","max_tokens":` + itoa(out) + `,"ignore_eos":true}`
	resp, err := hc.Post(base+"/v1/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var got struct {
		Usage struct {
			CompletionTokens int `json:"completion_tokens"`
		} `json:"usage"`
	}
	if resp.StatusCode != 200 || json.Unmarshal(b, &got) != nil {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	return got.Usage.CompletionTokens
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// Over loopback: the fast profile by default, its model served, a proxy in front when asked.
func TestStart(t *testing.T) {
	proxied := 0
	srv := simtest.Start(t, simtest.Config{Options: sim.Options{Seed: 1}, Wrap: func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { proxied++; h.ServeHTTP(w, r) })
	}})
	if srv.Profile().Name != sim.FastProfile.Name || !strings.HasPrefix(srv.URL, "http://127.0.0.1:") {
		t.Fatalf("profile %s at %s", srv.Profile().Name, srv.URL)
	}
	if n := complete(t, http.DefaultClient, srv.URL, srv.ModelName(), 8); n != 8 || proxied != 1 {
		t.Errorf("%d tokens, %d requests through the proxy", n, proxied)
	}
}

// In memory, on virtual time: a completion takes the engine's time on the bubble's clock (a
// 1,000-token answer on a profile with a twentieth of the bandwidth takes seconds of it), two servers are told apart by
// address through the package's Dial, and an address no server holds is dialled over TCP.
func TestStartInMemory(t *testing.T) {
	slow := sim.FastProfile
	slow.Name = "fast-slowed"
	slow.Engine.BandwidthEfficiency /= 20
	synctest.Test(t, func(t *testing.T) {
		fast := simtest.StartInMemory(t, simtest.Config{})
		slowed := simtest.StartInMemory(t, simtest.Config{Profile: slow})
		if fast.URL == slowed.URL {
			t.Fatalf("two servers at %s", fast.URL)
		}
		hc := &http.Client{Transport: &http.Transport{DialContext: simtest.Dial}}
		defer hc.CloseIdleConnections()
		took := func(s *simtest.Server) time.Duration {
			start := time.Now()
			if n := complete(t, hc, s.URL, s.ModelName(), 1000); n != 1000 {
				t.Errorf("%s: %d tokens", s.Profile().Name, n)
			}
			return time.Since(start)
		}
		f, s := took(fast), took(slowed)
		if f <= 0 || s < 5*f || s < time.Second {
			t.Errorf("1,000 tokens took %v on the fast profile and %v on the slowed one: want the engine's times on the virtual clock, the slowed one several times longer", f, s)
		}
		if c := complete(t, fast.HTTPClient(), "http://elsewhere", fast.ModelName(), 3); c != 3 {
			t.Errorf("the server's own client: %d tokens", c)
		}
	})
	if _, err := simtest.Dial(context.Background(), "tcp", "127.0.0.1:1"); err == nil {
		t.Error("dialling a port where nothing listens succeeded")
	}
}
