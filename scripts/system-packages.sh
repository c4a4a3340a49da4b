#!/usr/bin/env bash
# Installs the Debian packages listed in scripts/system-packages.tsv whose file is missing, then checks that every
# listed file is there. Exits 1 naming each package that could not be installed or does not provide its file.
#
#   scripts/system-packages.sh           install what is missing (apt-get; sudo when not root)
#   scripts/system-packages.sh --check   only report what is missing (exit 1 if anything is)
set -uo pipefail
table="$(dirname "$0")/system-packages.tsv"

# The table's rows whose file is missing, as "package<TAB>file" (the one reader of the table here).
absent() {
    grep -v '^#' "$table" | while IFS=$'\t' read -r pkg file _; do
        [ -n "$pkg" ] && [ ! -e "$file" ] && printf '%s\t%s\n' "$pkg" "$file"
    done
}
missing() {
    absent | cut -f1 | sort -u | tr '\n' ' '
}

need="$(missing)"
if [ -z "$need" ]; then exit 0; fi
if [ "${1:-}" = "--check" ]; then echo "system-packages: missing: $need" >&2; exit 1; fi

sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
echo "system-packages: installing $need" >&2
log="$(mktemp)"
# shellcheck disable=SC2086 # one word per package
if ! { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $need; } >"$log" 2>&1; then
    tail -20 "$log" >&2
    echo "system-packages: apt-get install $need failed" >&2
    rm -f "$log"; exit 1
fi
rm -f "$log"
still="$(absent)"
if [ -n "$still" ]; then
    printf '%s\n' "$still" | while IFS=$'\t' read -r pkg file; do
        echo "system-packages: $pkg is installed but $file is missing" >&2
    done
    exit 1
fi
exit 0
