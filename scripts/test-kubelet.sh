#!/usr/bin/env bash
# The kubelet's own code on the files `plan --target k8s` writes (tests/test_kubelet_code.py;
# scripts/test.sh --long runs it too, where go is installed): builds tools/kubelet-check,
# which imports k8s.io/kubernetes from the Go module proxy (the version its go.mod names),
# into ~/.cache/numaspark (outside git; about 80 MB, some minutes the first time on two
# cores, seconds after), then runs its tests. An extra beside tests/test_kubelet_rules.py.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v go >/dev/null; then
  echo "test-kubelet.sh: no go on PATH: tools/kubelet-check cannot be built" >&2
  exit 1
fi
bin="${NUMASPARK_KUBELET_CHECK:-$HOME/.cache/numaspark/kubelet-check}"
mkdir -p "$(dirname "$bin")"
(cd tools/kubelet-check && nice -n 19 go build -o "$bin" .)
NUMASPARK_SETUP_TESTS=1 bash scripts/setup.sh
NUMASPARK_KUBELET_CHECK="$bin" NUMASPARK_NO_JVM=1 exec .venv/bin/python -m pytest -ra --durations=15 --long \
  tests/test_kubelet_code.py "$@"
