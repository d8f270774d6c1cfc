#!/bin/sh
# Runs as root in a mount namespace of its own (unshare --mount): hides apt's numactl and
# hwloc (their programs and libhwloc) under empty, non-executable files, checks they are gone,
# then runs the user's part as USER without root. Arguments: USER WORK (the user's directory).
set -eu
user=$1
work=$2
empty=$work/empty
: > "$empty"
chmod 0644 "$empty"
hidden=""
for file in /usr/bin/numactl /usr/bin/lstopo* /usr/bin/hwloc-* /usr/lib/*/libhwloc.so* \
            /usr/lib/libhwloc.so* /usr/local/bin/numactl /usr/local/bin/lstopo*; do
  [ -e "$file" ] || continue
  mount --bind "$empty" "$file"
  hidden="$hidden $file"
done
echo "hidden:$hidden" > "$work/hidden.txt"
# nothing of them is left for the user: not on the PATH, not loadable
export PATH=/usr/local/bin:/usr/bin:/bin
for tool in numactl lstopo-no-graphics lstopo hwloc-bind hwloc-calc; do
  if command -v "$tool" >/dev/null 2>&1; then
    echo "install test: $tool is still on the PATH after hiding it" >&2
    exit 3
  fi
done
# the user's environment: a fresh one, with only the package client's own settings kept
exec setpriv --reuid="$user" --regid="$user" --init-groups -- env -i \
  PATH="$PATH" HOME="$work/home" LANG=C.UTF-8 USER="$user" \
  PIP_CACHE_DIR="${PIP_CACHE_DIR:-$work/home/.cache/pip}" \
  ${PIP_CERT:+PIP_CERT="$PIP_CERT"} ${PIP_DEFAULT_TIMEOUT:+PIP_DEFAULT_TIMEOUT="$PIP_DEFAULT_TIMEOUT"} \
  ${PIP_INDEX_URL:+PIP_INDEX_URL="$PIP_INDEX_URL"} ${PIP_FIND_LINKS:+PIP_FIND_LINKS="$PIP_FIND_LINKS"} \
  sh "$work/user.sh" "$work"
