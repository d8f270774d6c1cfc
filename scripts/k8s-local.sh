#!/usr/bin/env bash
# A one-node Kubernetes on this machine, for numaspark's tests and for trying numaspark on
# Kubernetes without a cluster (tests/k8s/local.py; docs/kubernetes-local.md):
#   bash scripts/k8s-local.sh up [--kubelet-config FILE]   build what is missing, start, wait Ready;
#                                                          prints the API's URL and the kubeconfig
#   bash scripts/k8s-local.sh status
#   bash scripts/k8s-local.sh down                         stop everything, remove what it made
#   bash scripts/k8s-local.sh build                        the parts and the images alone
# Needs root and Go. The first `up` builds etcd, Kubernetes and containerd from source through
# the Go module proxy and two images from Debian's packages into ~/.cache/numaspark/k8s-local
# (NUMASPARK_K8S_CACHE); later ones start from the cache. State: /var/lib/numaspark-k8s
# (NUMASPARK_K8S_DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/python ]; then
  bash scripts/setup.sh >&2
fi
exec .venv/bin/python tests/k8s/local.py "$@"
