package openai

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/servebench/servebench"
)

// A Retry-After is read in both of its forms and bounded: the server is not trusted to send
// a sane one.
func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		v    string
		want float64 // -1: none
	}{
		{"", -1},
		{"7", 7},                              // delay-seconds
		{" 30 ", 30},                          // surrounding space
		{"0", 0},                              // try again at once
		{"Thu, 26 Nov 2026 09:01:30 GMT", 90}, // an HTTP date, from when the answer arrived
		{"Thu, 26 Nov 2026 08:59:00 GMT", 0},  // a date already past: no wait
		{"-5", -1},                            // negative: not a Retry-After
		{"soon", -1},                          // neither form
		{"99999999999999999999", -1},          // overflows: unreadable
		{"1000000", maxRetryAfterSeconds},     // a wait longer than a day is kept as a day
		{"Fri, 01 Jan 2100 00:00:00 GMT", maxRetryAfterSeconds},
	} {
		got := retryAfter(tc.v, now)
		if (got == nil) != (tc.want < 0) || (got != nil && *got != tc.want) {
			t.Errorf("Retry-After %q: %v, want %v", tc.v, deref(got), tc.want)
		}
	}
}

// A refusal's Retry-After reaches the record on both transports (the plain-HTTP reader and
// net/http), and an answer without one leaves it absent.
func TestRefusalKeepsRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		header string
		want   float64 // -1: absent
	}{
		{"rate limited", http.StatusTooManyRequests, "7", 7},
		{"overloaded", http.StatusServiceUnavailable, "120", 120},
		{"rate limited without a Retry-After", http.StatusTooManyRequests, "", -1},
	} {
		base := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if tc.header != "" {
				w.Header().Set("Retry-After", tc.header)
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(tc.status)
			_, _ = w.Write([]byte(`{"error":{"message":"slow down"}}`))
		}))
		for _, netHTTP := range []bool{false, true} {
			c := newClient(t, base, nil)
			if netHTTP {
				c.h1 = nil
			} else if c.h1 == nil {
				t.Fatal("an http:// target should take the plain-HTTP path")
			}
			rec := c.Do(context.Background(), testRequest())
			got := rec.RetryAfterSeconds
			if rec.ErrorClass != servebench.ErrHTTPStatus || rec.HTTPStatus != tc.status || (got == nil) != (tc.want < 0) || (got != nil && *got != tc.want) {
				t.Errorf("%s (net/http %v): class %q status %d retry after %v, want %v", tc.name, netHTTP, rec.ErrorClass, rec.HTTPStatus, deref(got), tc.want)
			}
		}
	}
}
