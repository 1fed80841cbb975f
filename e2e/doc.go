// Package e2e runs the servebench binary end to end. The distributed tests (dist_test.go) run a
// coordinator and worker processes, each worker in its own network namespace where the machine
// allows (root), against the simulated engine; they always run. The real-engine tests run the
// CLI against Ollama serving a generated tiny model (scripts/ollama.sh start) and skip unless
// SERVEBENCH_OLLAMA_URL is set, e.g.
//
//	scripts/ollama.sh install
//	scripts/ollama.sh start --env-file /tmp/ollama.env
//	set -a; . /tmp/ollama.env; set +a
//	go test ./e2e/ -v
//	scripts/ollama.sh stop
package e2e
