#!/usr/bin/env bash
# Generates the SDKs from schema.json into sdk/<language>/ (committed), with Pulumi's code generators at the
# pinned release (tools built by scripts/tools.sh; built first if needed).
#
#   scripts/gen-sdk.sh [OUT_DIR [SCHEMA]]     default: sdk/ from schema.json
#
# java, dotnet, yaml: `pulumi package gen-sdk SCHEMA --language java|dotnet|yaml --out OUT_DIR`, the CLI handing
#   the schema to pulumi-language-java / -dotnet / -yaml. YAML's "SDK" is a package declaration (name, version,
#   downloadUrl) that a YAML program keeps in its folder: the YAML host reads it to tell the engine the plugin.
# nodejs, python, go: `cloud-codegen --language X --out OUT_DIR SCHEMA` (tools/pulumi/cmd/cloud-codegen), which
#   makes the same calls pulumi-language-nodejs/-python/-go make for `pulumi package gen-sdk` (those language
#   hosts are Go modules that cannot be fetched here; the generators they call are in pkg/v3, which can).
# Then scripts/sdk-finish.ts completes each language's output (Go aliases, go.mod/go.sum, package.json main,
#   pyproject fixes): it runs from build/ (`npm run gen-sdk` compiles first).
# dotnet: pulumi-language-dotnet downloads the package logo (the schema's logoUrl, else Pulumi's default on
#   GitHub) into logo.png. With no internet here, the dotnet run gets a copy of the schema whose logoUrl points at
#   tools/dotnet/logo.png served on loopback for the duration of the run; nothing else differs.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
out="$(realpath -m "${1:-$root/sdk}")"
schema="$(realpath "${2:-$root/schema.json}")"
LANGUAGES="${LANGUAGES:-nodejs python go java dotnet yaml}"

bin="$("$root/scripts/tools.sh" | tail -n 1)"
finish="$root/build/scripts/sdk-finish.js"
[ -f "$finish" ] || { echo "gen-sdk.sh: $finish is missing: run \`npm run build\` first" >&2; exit 1; }

# Keep the CLI away from the user's ~/.pulumi and from any network service.
work="$(mktemp -d)"
logo_pid=
trap '[ -z "$logo_pid" ] || kill "$logo_pid" 2>/dev/null; rm -rf "$work"' EXIT
export PATH="$bin:$PATH"
export PULUMI_HOME="$work/home"
export PULUMI_BACKEND_URL="file://$work/state"
export PULUMI_SKIP_UPDATE_CHECK=true
export PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION=true
export PULUMI_CONFIG_PASSPHRASE=unused
mkdir -p "$out" "$work/home" "$work/state"

serve_logo() { # sets logo_url; the server is stopped when this script exits (trap above)
    python3 -u - "$root/tools/dotnet" > "$work/logo-server" 2>/dev/null <<'PY' &
import functools, http.server, sys
handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[1])
server = http.server.HTTPServer(("127.0.0.1", 0), handler)
print(server.server_port)
server.serve_forever()
PY
    logo_pid=$!
    for _ in $(seq 200); do [ -s "$work/logo-server" ] && break; sleep 0.05; done
    [ -s "$work/logo-server" ] || { echo "gen-sdk.sh: the loopback logo server did not start" >&2; exit 1; }
    logo_url="http://127.0.0.1:$(head -n 1 "$work/logo-server")/logo.png"
}

for lang in $LANGUAGES; do
    case "$lang" in
        nodejs|python|go)
            (cd "$work" && cloud-codegen --language "$lang" --out "$out" "$schema") ;;
        java|yaml)
            (cd "$work" && pulumi package gen-sdk "$schema" --language "$lang" --out "$out") ;;
        dotnet)
            serve_logo
            node -e 'const fs = require("fs"); const s = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
                s.logoUrl = process.argv[2]; fs.writeFileSync(process.argv[3], JSON.stringify(s, null, 4));' \
                "$schema" "$logo_url" "$work/schema-dotnet.json"
            (cd "$work" && pulumi package gen-sdk "$work/schema-dotnet.json" --language dotnet --out "$out") ;;
        *) echo "gen-sdk.sh: unknown language $lang" >&2; exit 1 ;;
    esac
    node "$finish" "$lang" "$out/$lang"
done
