#!/usr/bin/env bash
# The real-Kubernetes test tier's control plane: kube-apiserver, kube-controller-manager and
# kube-scheduler (upstream, unmodified) and etcd, built from the Go module proxy in nested
# modules (e2e/k8s/controlplane, e2e/k8s/etcd; never the project's own go.mod) and cached by
# version under $SERVEBENCH_K8S_CACHE (default ~/.cache/servebench/k8s/<version>).
#
#   scripts/k8s.sh build       build what the cache lacks, printing how long each binary took
#   scripts/k8s.sh dir         print the cache folder of this version
#   scripts/k8s.sh up DIR      start etcd, kube-apiserver, kube-controller-manager and kube-scheduler
#                              on free 127.0.0.1 ports; DIR/kubeconfig reaches the API server
#   scripts/k8s.sh down DIR    stop them
#   scripts/k8s.sh validate    up, then the manifests of `servebench k8s manifests` through the real
#                              API server's server-side validation (kubectl apply --dry-run=server), down
#   scripts/k8s.sh e2e         up, then a distributed run through the real Job controller and
#                              scheduler: the manifests applied, a test-only node agent
#                              (e2e/k8s/controlplane/nodeagent) running the pods as local processes
#                              against `servebench sim`, both Jobs to Complete, the run folder checked
set -euo pipefail
cd "$(dirname "$0")/.."

K8S_VERSION=v1.36.1 # k8s.io/kubernetes; its staging modules are v0.36.1 (e2e/k8s/controlplane/go.mod)
ETCD_VERSION=v3.6.8 # e2e/k8s/etcd/go.mod
cache="${SERVEBENCH_K8S_CACHE:-$HOME/.cache/servebench/k8s}/$K8S_VERSION-etcd-$ETCD_VERSION"
PATH="$PATH:$cache" # a kubectl built here is used only when the machine has none

build() {
  mkdir -p "$cache"
  local v=k8s.io/component-base/version minor=${K8S_VERSION#v1.}
  minor=${minor%%.*}
  local ld="-X $v.gitVersion=$K8S_VERSION -X $v.gitMajor=1 -X $v.gitMinor=$minor"
  for c in kube-apiserver kube-controller-manager kube-scheduler; do
    if [ ! -x "$cache/$c" ]; then
      local s; s=$(date +%s)
      (cd e2e/k8s/controlplane && go build -trimpath -ldflags "$ld" -o "$cache/$c.tmp" k8s.io/kubernetes/cmd/$c) && mv "$cache/$c.tmp" "$cache/$c"
      echo "== built $c in $(( $(date +%s) - s ))s"
    fi
  done
  # kubectl: the machine's own when it has one, else built from the same module (cached)
  if ! command -v kubectl >/dev/null 2>&1 && [ ! -x "$cache/kubectl" ]; then
    local s; s=$(date +%s)
    (cd e2e/k8s/controlplane && go build -trimpath -ldflags "$ld" -o "$cache/kubectl.tmp" k8s.io/kubernetes/cmd/kubectl) && mv "$cache/kubectl.tmp" "$cache/kubectl"
    echo "== built kubectl in $(( $(date +%s) - s ))s"
  fi
  if [ ! -x "$cache/etcd" ]; then
    local s; s=$(date +%s)
    (cd e2e/k8s/etcd && go build -trimpath -o "$cache/etcd.tmp" go.etcd.io/etcd/server/v3) && mv "$cache/etcd.tmp" "$cache/etcd"
    echo "== built etcd in $(( $(date +%s) - s ))s"
  fi
}

freeport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

up() {
  local dir=$1
  mkdir -p "$dir/certs" "$dir/etcd"
  build
  local ep pp ap
  ep=$(freeport); pp=$(freeport); ap=$(freeport)
  openssl genrsa -out "$dir/sa.key" 2048 2>/dev/null
  openssl rsa -in "$dir/sa.key" -pubout -out "$dir/sa.pub" 2>/dev/null
  local token; token=$(openssl rand -hex 16)
  echo "$token,admin,admin,system:masters" > "$dir/tokens.csv"
  "$cache/etcd" --data-dir "$dir/etcd" --listen-client-urls "http://127.0.0.1:$ep" --advertise-client-urls "http://127.0.0.1:$ep" \
    --listen-peer-urls "http://127.0.0.1:$pp" --initial-advertise-peer-urls "http://127.0.0.1:$pp" \
    --initial-cluster "default=http://127.0.0.1:$pp" > "$dir/etcd.log" 2>&1 &
  echo $! > "$dir/etcd.pid"
  "$cache/kube-apiserver" --etcd-servers "http://127.0.0.1:$ep" --bind-address 127.0.0.1 --advertise-address 127.0.0.1 \
    --secure-port "$ap" --cert-dir "$dir/certs" --token-auth-file "$dir/tokens.csv" --authorization-mode RBAC \
    --service-account-key-file "$dir/sa.pub" --service-account-signing-key-file "$dir/sa.key" \
    --service-account-issuer https://kubernetes.default.svc --service-cluster-ip-range 10.96.0.0/24 > "$dir/apiserver.log" 2>&1 &
  echo $! > "$dir/apiserver.pid"
  cat > "$dir/kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters: [{name: local, cluster: {server: "https://127.0.0.1:$ap", insecure-skip-tls-verify: true}}]
users: [{name: admin, user: {token: "$token"}}]
contexts: [{name: local, context: {cluster: local, user: admin}}]
current-context: local
KC
  local i
  for i in $(seq 1 120); do
    [ "$(curl -sk -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $token" "https://127.0.0.1:$ap/readyz")" = 200 ] && break
    sleep 0.5
  done
  [ "$i" -lt 120 ] || { echo "kube-apiserver did not become ready; see $dir/apiserver.log" >&2; return 1; }
  "$cache/kube-controller-manager" --kubeconfig "$dir/kubeconfig" --leader-elect=false --secure-port 0 \
    --service-account-private-key-file "$dir/sa.key" --use-service-account-credentials > "$dir/controller-manager.log" 2>&1 &
  echo $! > "$dir/controller-manager.pid"
  "$cache/kube-scheduler" --kubeconfig "$dir/kubeconfig" --leader-elect=false --secure-port 0 > "$dir/scheduler.log" 2>&1 &
  echo $! > "$dir/scheduler.pid"
  echo "== control plane up at https://127.0.0.1:$ap (kubeconfig $dir/kubeconfig)"
}

down() {
  local dir=$1 c
  for c in scheduler controller-manager apiserver etcd; do
    if [ -f "$dir/$c.pid" ]; then kill "$(cat "$dir/$c.pid")" 2>/dev/null || true; rm -f "$dir/$c.pid"; fi
  done
}

validate() {
  local dir; dir=$(mktemp -d)
  trap "down '$dir'; rm -rf '$dir'" EXIT
  up "$dir"
  go build -o "$dir/servebench" ./cmd/servebench
  printf 'target:\n  url: http://vllm.bench.svc:8000/v1\nuse_cases: []\n' > "$dir/plan.yaml"
  SERVEBENCH_TOKEN=$(openssl rand -hex 16) "$dir/servebench" k8s manifests --workers 3 --plan "$dir/plan.yaml" --image servebench:test \
    --namespace default --api-key-secret vllm-key --out "$dir/manifests.yaml" 2>/dev/null
  # server-side validation: every object through the real API server's schema and admission, nothing stored
  kubectl --kubeconfig "$dir/kubeconfig" apply --server-side --dry-run=server -f "$dir/manifests.yaml"
  echo "== the manifests pass the API server's validation"
}

e2e() {
  local dir; dir=$(mktemp -d)
  sim_pid="" agent_pid="" # globals: the EXIT trap reads them
  # shellcheck disable=SC2064
  trap "kill \$sim_pid \$agent_pid 2>/dev/null || true; down '$dir'" EXIT
  up "$dir"
  local kc="$dir/kubeconfig" s
  s=$(date +%s)
  go build -o "$dir/servebench" ./cmd/servebench
  (cd e2e/k8s/controlplane && go build -o "$dir/nodeagent" ./nodeagent)
  echo "== built servebench and the node agent in $(( $(date +%s) - s ))s"
  local sp cp; sp=$(freeport); cp=$(freeport)
  "$dir/servebench" sim --listen "127.0.0.1:$sp" > "$dir/sim.log" 2>&1 &
  sim_pid=$!
  cat > "$dir/plan.yaml" <<PLAN
target:
  url: http://127.0.0.1:$sp/v1
sweep:
  contexts: [1024]
  concurrency: [2, 6]
  output_tokens: 32
  max_requests: 60
use_cases: []
scenarios: []
PLAN
  # the node agent's nodes are named node-N; the PVC binds to this PV (a folder of the agent's)
  kubectl --kubeconfig "$kc" apply -f - > /dev/null <<PV
apiVersion: v1
kind: PersistentVolume
metadata: {name: servebench-runs}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  hostPath: {path: $dir/pv}
PV
  # its stderr says the file holds the token: shown only when it fails (CI once ended here with exit 2 and no word)
  if ! SERVEBENCH_TOKEN=$(openssl rand -hex 16) "$dir/servebench" k8s manifests --workers 3 --plan "$dir/plan.yaml" --image servebench:test \
    --namespace default --out "$dir/manifests.yaml" 2> "$dir/manifests.err"; then
    cat "$dir/manifests.err" >&2
    return 1
  fi
  sed -i "s/0.0.0.0:7070/0.0.0.0:$cp/; s/servebench-coordinator:7070/servebench-coordinator:$cp/" "$dir/manifests.yaml"
  kubectl --kubeconfig "$kc" apply --server-side --dry-run=server -f "$dir/manifests.yaml" > /dev/null
  echo "== the manifests pass the API server's validation"
  "$dir/nodeagent" --kubeconfig "$kc" --nodes 3 --binary "$dir/servebench" --root "$dir/agent" \
    --rewrite "servebench-coordinator=127.0.0.1,0.0.0.0=127.0.0.1" > "$dir/agent.log" 2>&1 &
  agent_pid=$!
  s=$(date +%s)
  kubectl --kubeconfig "$kc" apply --server-side -f "$dir/manifests.yaml" > /dev/null
  if ! kubectl --kubeconfig "$kc" wait --for=condition=complete job/servebench-workers job/servebench-coordinator --timeout=10m; then
    kubectl --kubeconfig "$kc" get pods,jobs,nodes -o wide >&2 || true
    tail -30 "$dir/agent.log" >&2
    for f in "$dir"/agent/pods/*/log; do echo "--- $f" >&2; tail -20 "$f" >&2; done
    return 1
  fi
  echo "== both Jobs Complete through the Job controller and scheduler in $(( $(date +%s) - s ))s"
  kubectl --kubeconfig "$kc" get pods -o wide
  local run="$dir/agent/claims/default_servebench-runs/servebench"
  python3 - "$run" <<'PY'
import json, sys, collections
run = sys.argv[1]
res = json.load(open(run + "/results.json"))
workers = res.get("workers") or []
recs = [json.loads(l) for l in open(run + "/requests.jsonl")]
by = collections.Counter(r.get("worker", "") for r in recs)
assert len(workers) == 3, f"{len(workers)} workers in results.json"
assert "" not in by and len(by) == 3, f"records by worker {dict(by)}"
assert len(res["cells"]) == 2 and all(c["success_rate"] == 1 for c in res["cells"]), res["cells"]
print(f"== run folder: {len(recs)} records from {dict(by)}; clocks: " +
      ", ".join(f"{w['name']} {1e3*w['clock'][-1]['offset_seconds']:+.3f}±{1e3*w['clock'][-1]['uncertainty_seconds']:.3f} ms" for w in workers))
PY
}

case "${1:-}" in
  build) build ;;
  dir) echo "$cache" ;;
  up) up "${2:?usage: scripts/k8s.sh up DIR}" ;;
  down) down "${2:?usage: scripts/k8s.sh down DIR}" ;;
  validate) validate ;;
  e2e) e2e ;;
  *) echo "usage: scripts/k8s.sh build|dir|up DIR|down DIR|validate|e2e" >&2; exit 2 ;;
esac
