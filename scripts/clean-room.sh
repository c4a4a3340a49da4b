#!/usr/bin/env bash
# Proves that CI passes on a machine that has none of the project's system packages: removes every package of
# scripts/system-packages.tsv (and what was installed only for them), clones this checkout's HEAD into a temp
# folder (no node_modules, no build, nothing beside it), runs `bash .ci/run` there as CI does, and prints its last
# line with the time taken. Needs root (or sudo) and Debian's package registry; it changes the machine's packages.
#
#   scripts/clean-room.sh            remove, clone, run .ci/run
#   scripts/clean-room.sh --keep     the same without removing the packages first
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"

if [ "${1:-}" != "--keep" ]; then
    pkgs="$(grep -v '^#' "$root/scripts/system-packages.tsv" | cut -f1 | sort -u | tr '\n' ' ')"
    echo "clean-room: removing $pkgs" >&2
    # shellcheck disable=SC2086 # one word per package
    DEBIAN_FRONTEND=noninteractive $sudo apt-get purge -y -qq $pkgs >/dev/null 2>&1
    DEBIAN_FRONTEND=noninteractive $sudo apt-get autoremove --purge -y -qq >/dev/null 2>&1
    if bash "$root/scripts/system-packages.sh" --check 2>/dev/null; then
        echo "clean-room: the packages are still there after apt-get purge" >&2; exit 1
    fi
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
git clone -q "$root" "$work/main"
start=$(date +%s)
(cd "$work/main" && CI=true bash .ci/run </dev/null) >"$work/ci.log" 2>&1
status=$?
took=$(( $(date +%s) - start ))
[ "$status" = 0 ] || tail -40 "$work/ci.log" >&2
tail -1 "$work/ci.log"
echo "clean-room: .ci/run exited $status in ${took} s"
exit "$status"
