#!/usr/bin/env bash
# The real-Kubernetes test tier's control plane: kube-apiserver, kube-controller-manager and
# kube-scheduler (upstream, unmodified) and etcd, built from the Go module proxy in nested
# modules (e2e/k8s/controlplane, e2e/k8s/etcd; never the project's own go.mod) and cached by
# version under $SERVEBENCH_K8S_CACHE (default ~/.cache/servebench/k8s/<version>).
#
#   scripts/k8s.sh build     build what the cache lacks, printing how long each binary took
#   scripts/k8s.sh dir       print the cache folder of this version
set -euo pipefail
cd "$(dirname "$0")/.."

K8S_VERSION=v1.36.1 # k8s.io/kubernetes; its staging modules are v0.36.1 (e2e/k8s/controlplane/go.mod)
ETCD_VERSION=v3.6.8 # e2e/k8s/etcd/go.mod
cache="${SERVEBENCH_K8S_CACHE:-$HOME/.cache/servebench/k8s}/$K8S_VERSION-etcd-$ETCD_VERSION"

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
  if [ ! -x "$cache/etcd" ]; then
    local s; s=$(date +%s)
    (cd e2e/k8s/etcd && go build -trimpath -o "$cache/etcd.tmp" go.etcd.io/etcd/server/v3) && mv "$cache/etcd.tmp" "$cache/etcd"
    echo "== built etcd in $(( $(date +%s) - s ))s"
  fi
}

case "${1:-}" in
  build) build ;;
  dir) echo "$cache" ;;
  *) echo "usage: scripts/k8s.sh build|dir" >&2; exit 2 ;;
esac
