package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/servebench/servebench"
)

// serverProbe asks whether the target answers again after an outage: GET /health (any answer
// but a connection failure or a 5xx means the process is up) and then GET /v1/models, which
// must succeed (the server is ready to serve). The key is sent as for every request.
func serverProbe(hc *http.Client, apiURL string, api servebench.API, apiKey string) func(context.Context) error {
	base := strings.TrimSuffix(apiURL, "/")
	root := strings.TrimSuffix(base, "/v1")
	models := base + "/models"
	if api == servebench.APIOllama {
		models = root + "/api/tags"
	}
	get := func(ctx context.Context, url string) (int, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return 0, err
		}
		if apiKey != "" {
			req.Header.Set("Authorization", "Bearer "+apiKey)
		}
		resp, err := hc.Do(req)
		if err != nil {
			return 0, err
		}
		io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	return func(ctx context.Context) error {
		if code, err := get(ctx, root+"/health"); err != nil {
			return err
		} else if code >= 500 {
			return fmt.Errorf("GET /health: HTTP %d", code)
		}
		code, err := get(ctx, models)
		if err != nil {
			return err
		}
		if code < 200 || code > 299 {
			return fmt.Errorf("GET %s: HTTP %d", models, code)
		}
		return nil
	}
}
