#!/usr/bin/env bash
# Builds the Pulumi tools the e2e tests and SDK generation use, actionlint (which lints the release workflow) and
# fake-gcs-server (see below),
# from Go modules pinned in tools/*/go.mod (go.sum committed), into a cache directory outside the repository:
#
#   ${XDG_CACHE_HOME:-$HOME/.cache}/pulumi-resource-cloud/tools/<PULUMI_VERSION>/bin
#
# A second run is a no-op: a stamp records a hash of the inputs (go.mod/go.sum/sources, Go version, flags);
# anything else rebuilds. Prints the bin directory as its last line.
#
#   scripts/tools.sh            build if needed
#   scripts/tools.sh --print    print the bin directory only (no build)
#   scripts/tools.sh --check    print the bin directory and exit 0 if the tools are built and up to date, else
#                               say why on stderr and exit 1 (no build)
#   scripts/tools.sh --force    rebuild even if the stamp matches
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
# The one pinned Pulumi release (matches @pulumi/pulumi in package.json and tools/pulumi/go.mod). The language
# hosts are released on their own; their versions are pinned in tools/{yaml,java,dotnet}/go.mod.
PULUMI_VERSION=3.248.0
YAML_VERSION=1.38.0
JAVA_VERSION=1.17.0
DOTNET_VERSION=3.100.0

cache="${XDG_CACHE_HOME:-$HOME/.cache}/pulumi-resource-cloud/tools/v${PULUMI_VERSION}"
bin="$cache/bin"
TOOLS="pulumi cloud-codegen invoke-load grpc-floor pulumi-language-yaml pulumi-language-java pulumi-language-dotnet actionlint"

if [ "${1:-}" = "--print" ]; then echo "$bin"; exit 0; fi
force=0; [ "${1:-}" = "--force" ] && force=1
check=0; [ "${1:-}" = "--check" ] && check=1

command -v go >/dev/null || { echo "tools.sh: go is not on PATH (Go 1.25.11+ is needed)" >&2; exit 1; }

# Everything that decides what gets built goes into the stamp.
inputs_hash() {
    {
        go version
        echo "$PULUMI_VERSION $YAML_VERSION $JAVA_VERSION $DOTNET_VERSION"
        sed -n '/^ldflags()/,/^}/p;/^GOFLAGS_BUILD=/p' "$root/scripts/tools.sh"
        (cd "$root" && find tools -type f \( -name '*.go' -o -name 'go.mod' -o -name 'go.sum' \) -print0 | sort -z | xargs -0 sha256sum)
    } | sha256sum | cut -d' ' -f1
}
# fake-gcs-server (a GCS emulator: the e2e tests' gs:// backend) is a module of its own, installed at its pinned
# version beside the other tools and only when missing: it is not part of the stamp, so adding or updating it never
# rebuilds the Pulumi tools.
FAKE_GCS_VERSION=1.56.1
fake_gcs="$bin/fake-gcs-server-v$FAKE_GCS_VERSION"
if [ ! -x "$fake_gcs" ]; then
    if [ "${1:-}" = "--check" ]; then echo "tools.sh: fake-gcs-server v$FAKE_GCS_VERSION is not built (in $bin): run \`npm run tools\`" >&2; exit 1; fi
    echo "tools.sh: installing fake-gcs-server v$FAKE_GCS_VERSION" >&2
    mkdir -p "$bin" "$cache/gobin"
    (cd "$cache" && GOFLAGS= CGO_ENABLED=0 GOBIN="$cache/gobin" go install -trimpath -ldflags "-s -w" "github.com/fsouza/fake-gcs-server@v$FAKE_GCS_VERSION")
    mv -f "$cache/gobin/fake-gcs-server" "$fake_gcs"
fi

want="$(inputs_hash)"
stamp="$cache/stamp"
if [ "$force" = 0 ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    ok=1
    for b in $TOOLS; do [ -x "$bin/$b" ] || ok=0; done
    if [ "$ok" = 1 ]; then echo "tools.sh: up to date (v$PULUMI_VERSION)" >&2; echo "$bin"; exit 0; fi
fi
if [ "$check" = 1 ]; then
    if [ -f "$stamp" ]; then echo "tools.sh: the tools in $bin are out of date: run \`npm run tools\`" >&2
    else echo "tools.sh: the tools are not built (in $bin): run \`npm run tools\`" >&2; fi
    exit 1
fi

mkdir -p "$bin"
rm -f "$stamp"

# -trimpath and -s -w: smaller binaries, less link time; versions stamped the way Pulumi's releases stamp them.
GOFLAGS_BUILD="-trimpath -buildvcs=false"
ldflags() { # module
    case "$1" in
        pulumi) echo "-s -w -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=v$PULUMI_VERSION" ;;
        yaml) echo "-s -w -X github.com/pulumi/pulumi-yaml/pkg/version.Version=v$YAML_VERSION" ;;
        java) echo "-s -w -X github.com/pulumi/pulumi-java/pkg/version.Version=$JAVA_VERSION" ;;
        dotnet) echo "-s -w -X github.com/pulumi/pulumi-dotnet/pulumi-language-dotnet/v3/version.Version=$DOTNET_VERSION" ;;
        actionlint) echo "-s -w" ;; # it reads its version from the module's build info
    esac
}
# The go.sum files are committed and complete: -mod=readonly makes the build use exactly them.
export GOFLAGS="-mod=readonly"
export CGO_ENABLED=0
start=$(date +%s)

build() { # module-dir package output
    local dir="$1" pkg="$2" out="$3" t0
    t0=$(date +%s)
    echo "tools.sh: building $out from $pkg" >&2
    (cd "$root/tools/$dir" && go build $GOFLAGS_BUILD -ldflags "$(ldflags "$dir")" -o "$bin/$out.tmp" "$pkg")
    mv -f "$bin/$out.tmp" "$bin/$out"
    echo "tools.sh: built $out in $(( $(date +%s) - t0 ))s" >&2
}

build pulumi github.com/pulumi/pulumi/pkg/v3/cmd/pulumi pulumi
build pulumi ./cmd/cloud-codegen cloud-codegen
build pulumi ./cmd/invoke-load invoke-load
build pulumi ./cmd/grpc-floor grpc-floor
build yaml github.com/pulumi/pulumi-yaml/cmd/pulumi-language-yaml pulumi-language-yaml
build java github.com/pulumi/pulumi-java/pkg/cmd/pulumi-language-java pulumi-language-java
build dotnet github.com/pulumi/pulumi-dotnet/pulumi-language-dotnet/v3 pulumi-language-dotnet
build actionlint github.com/rhysd/actionlint/cmd/actionlint actionlint

"$bin/pulumi" version >&2
echo "$want" > "$stamp"
echo "tools.sh: done in $(( $(date +%s) - start ))s" >&2
echo "$bin"
