package sim_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/sim"
)

// The simulator says what it is on the wire: the model list, /version and /metrics carry
// servebench.SimulatedHeader, so a client reaching it by URL knows it is not real hardware.
func TestSimulatorIdentifiesItselfOnTheWire(t *testing.T) {
	_, base := startServer(t, sim.Options{})
	for _, path := range []string{"/v1/models", "/version", "/metrics"} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if h := resp.Header.Get(servebench.SimulatedHeader); !strings.HasPrefix(h, "servebench-sim") {
			t.Errorf("GET %s: %s = %q, want servebench-sim…", path, servebench.SimulatedHeader, h)
		}
	}
}
