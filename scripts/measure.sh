#!/usr/bin/env bash
# Measures what a newcomer waits for, on a clean clone, and prints each figure beside its goal:
#
#   npm ci && npm start          cold: no node_modules, no build/ (the npm cache is the machine's)   goal ≤ 60 s
#   npm start                    again, nothing changed                                               goal ≤ 5 s
#   npm test                     without the Pulumi tools (Go taken off PATH, so the e2e tests skip)  goal ≤ 90 s
#   npx cloud-emulator           the first one in this clone, to its URL line                         goal ≤ 5 s
#   npm run emulator             to its URL line                                                      goal ≤ 5 s
#
# The clone is of the committed HEAD, in a temp directory with nothing beside it (no sibling folders); it is removed
# at the end, with the npx cache entry its `npx` made. Exits 1 if a goal is missed or a command fails.
#
#   bash scripts/measure.sh
set -uo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
tmp="$(mktemp -d)"
clone="$tmp/pulumi-resource-cloud"
log="$tmp/log"
cleanup() {
    # The npx cache entry for this clone (npx links the clone into ~/.npm/_npx/<hash>).
    grep -l -F "$clone" "$(npm config get cache 2>/dev/null)"/_npx/*/package.json 2>/dev/null | xargs -r -n1 dirname | xargs -r rm -rf
    rm -rf "$tmp"
}
trap cleanup EXIT

git clone --quiet --no-hardlinks "$root" "$clone"
git -C "$clone" checkout --quiet --detach "$(git -C "$root" rev-parse HEAD)"
cd "$clone"

# PATH without Go: `npm run tools` cannot have run, and tools.sh --check says so.
nogo=""
IFS=: read -ra dirs <<<"$PATH"
for d in "${dirs[@]}"; do [ -x "$d/go" ] || nogo="${nogo:+$nogo:}$d"; done

now_ms() { date +%s%3N; }
failed=0
rows=()
# figure, goal in seconds, elapsed ms
record() {
    local secs ok
    secs=$(awk "BEGIN { printf \"%.1f\", $3 / 1000 }")
    ok=$(awk "BEGIN { print ($3 / 1000 <= $2) ? \"yes\" : \"NO\" }")
    [ "$ok" = yes ] || failed=1
    rows+=("$(printf '%-40s %8s s   ≤ %3s s   %s' "$1" "$secs" "$2" "$ok")")
    echo "measure.sh: $1: $secs s" >&2
}

# Runs a command to completion; its output goes to the log. Records its time, or fails the run.
timed() { # figure goal cmd...
    local figure="$1" goal="$2" t0
    shift 2
    t0=$(now_ms)
    if ! "$@" >>"$log" 2>&1; then
        echo "measure.sh: $figure failed; the end of its output:" >&2
        tail -n 40 "$log" >&2
        failed=1
        rows+=("$(printf '%-40s %8s' "$figure" "failed")")
        return 1
    fi
    record "$figure" "$goal" $(( $(now_ms) - t0 ))
}

# Time from start to the first stdout line holding the URL; then the whole process group is stopped.
to_url() { # figure goal cmd...
    local figure="$1" goal="$2" t0 line found=0
    shift 2
    t0=$(now_ms)
    coproc RUN { exec setsid "$@" 2>>"$log"; }
    local pid=$RUN_PID
    while IFS= read -r -t 120 line <&"${RUN[0]}"; do
        echo "$line" >>"$log"
        if [[ "$line" == http://* ]]; then found=1; break; fi
    done
    local ms=$(( $(now_ms) - t0 ))
    kill -TERM -- "-$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    if [ "$found" = 1 ]; then record "$figure" "$goal" "$ms"; else failed=1; rows+=("$(printf '%-40s %8s' "$figure" "no URL")"); fi
}

timed "npm ci && npm start (cold)" 60 bash -c "npm ci --no-audit --no-fund && npm start"
timed "npm start (again)" 5 npm start
timed "npm test (no tools)" 90 env PATH="$nogo" npm test
to_url "npx cloud-emulator (first)" 5 npx --yes cloud-emulator --port 0
to_url "npm run emulator" 5 npm run emulator -- --port 0

echo
echo "On $(nproc) cores, $(node --version), npm $(npm --version), commit $(git rev-parse --short HEAD):"
printf '%-40s %10s   %7s   %s\n' "figure" "measured" "goal" "met"
printf '%s\n' "${rows[@]}"
grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1 | sed 's/^/npm test: /'
exit "$failed"
