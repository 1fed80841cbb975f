// Package e2e runs the servebench CLI against a real inference engine: Ollama serving a generated
// tiny model (scripts/ollama.sh start). Its tests skip unless SERVEBENCH_OLLAMA_URL is set, e.g.
//
//	scripts/ollama.sh install
//	scripts/ollama.sh start --env-file /tmp/ollama.env
//	set -a; . /tmp/ollama.env; set +a
//	go test ./e2e/ -v
//	scripts/ollama.sh stop
package e2e
