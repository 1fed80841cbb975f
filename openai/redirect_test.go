package openai

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// elsewhere is a server on another port of the same host that records what reaches it.
type elsewhere struct {
	mu   sync.Mutex
	got  []string // "METHOD path auth=… key=… body=…" per request
	srv  *httptest.Server
	hits int
}

func newElsewhere(t *testing.T) *elsewhere {
	e := &elsewhere{}
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		e.mu.Lock()
		e.hits++
		e.got = append(e.got, r.Method+" "+r.URL.Path+" auth="+r.Header.Get("Authorization")+" key="+r.Header.Get("X-Api-Key")+" body="+string(b))
		e.mu.Unlock()
		_, _ = io.WriteString(w, `{"data":[{"id":"m"}],"count":3,"tokens":[1,2,3]}`)
	}))
	t.Cleanup(e.srv.Close)
	return e
}

// TestCredentialsNeverFollowARedirect: a target that redirects to another origin (here another
// port of the same host, where net/http would resend even the bearer key) gets the redirect
// refused, with an error that says why; nothing reaches the other origin: neither the bearer
// key, nor an X-Api-Key header, nor a /tokenize body. A redirect within the origin is followed.
func TestCredentialsNeverFollowARedirect(t *testing.T) {
	other := newElsewhere(t)
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/models", "/tokenize":
			http.Redirect(w, r, other.srv.URL+r.URL.Path, http.StatusTemporaryRedirect)
		case "/same/v1/models":
			http.Redirect(w, r, "/v1/ok/models", http.StatusFound)
		case "/v1/ok/models":
			_, _ = io.WriteString(w, `{"data":[{"id":"m"}]}`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer target.Close()
	cfg := Config{BaseURL: target.URL + "/v1", Model: "m", APIKey: "sk-secret-key-123456", Headers: http.Header{"X-Api-Key": {"custom-secret-987654"}}}

	_, _, err := Discover(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "another origin") || !strings.Contains(err.Error(), "--url") {
		t.Errorf("Discover through a cross-origin redirect: error %v, want a refusal that says why", err)
	}
	if err != nil && (strings.Contains(err.Error(), "sk-secret") || strings.Contains(err.Error(), "custom-secret")) {
		t.Errorf("the error shows a credential: %v", err)
	}

	// /tokenize as package workload posts it, through the client run gives it
	hc := NewHTTPClient(0)
	req, _ := http.NewRequest(http.MethodPost, target.URL+"/tokenize", strings.NewReader(`{"prompt":"the user's private prompt"}`))
	req.Header.Set("Authorization", "Bearer "+cfg.APIKey)
	req.Header.Set("X-Api-Key", "custom-secret-987654")
	resp, err := hc.Do(req)
	if err == nil {
		resp.Body.Close()
		t.Errorf("POST /tokenize followed a cross-origin redirect (status %d)", resp.StatusCode)
	} else if !strings.Contains(err.Error(), "another origin") {
		t.Errorf("POST /tokenize: error %v, want the refusal", err)
	}
	if other.hits > 0 {
		t.Errorf("the other origin received %v", other.got)
	}

	// within the origin a redirect is followed
	cfg.BaseURL = target.URL + "/same/v1"
	info, _, err := Discover(context.Background(), cfg)
	if err != nil || len(info.Models) != 1 {
		t.Errorf("same-origin redirect: models %v, error %v", info.Models, err)
	}
}
