#!/usr/bin/env bash
# Builds the installable plugin: dist/pulumi-resource-cloud-v<version>-linux-amd64.tar.gz
#
#   pulumi-resource-cloud   launcher (#!/bin/sh): hands NODE_EXTRA_CA_CERTS over (see below), execs node on lib/boot.js
#   lib/boot.js             loads lib/main.js with V8's code cache (provider/boot.ts)
#   lib/main.js             the provider and its dependencies, bundled by esbuild (node20, cjs), except:
#   lib/node_modules/google-auth-library/index.js
#                           google-auth-library and its dependencies, bundled apart: loaded on the first
#                           credentialed request, so a start neither reads nor compiles them
#   lib/main.js.<node>-<arch>.cache
#                           V8 code cache for lib/main.js, made by this Node (other Nodes make their own on first start)
#   schema.json             found by the server at lib/.. (provider/server.ts findSchema())
#   package.json            name and version, for people looking at the folder
#
# Installing it needs only `node` (20+) on PATH: no npm install. There is deliberately no PulumiPlugin.yaml
# (that would make the engine run the folder through the Node language host).
#
#   pulumi plugin install resource cloud <version> --file dist/pulumi-resource-cloud-v<version>-linux-amd64.tar.gz
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
name=cloud
version="$(node -p 'require("./package.json").version')"
os=linux
arch=amd64
out="dist/pulumi-resource-${name}-v${version}-${os}-${arch}.tar.gz"

stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT

bundle() { # entry outfile [esbuild flags]
    local entry="$1" outfile="$2"
    shift 2
    node_modules/.bin/esbuild "$entry" --bundle --platform=node --target=node20 --format=cjs \
        --legal-comments=linked --log-level=warning --outfile="$outfile" "$@"
}
# boot.js runs main.js through vm, which has no ES module loader: import() becomes require().
bundle provider/main.ts "$stage/lib/main.js" --external:google-auth-library --supported:dynamic-import=false
# boot.js reads main.js as latin1, which is exact for ASCII and faster than UTF-8: esbuild escapes non-ASCII
# characters except in regular expression literals, so check.
if LC_ALL=C grep -n '[^ -~[:space:]]' "$stage/lib/main.js" >&2; then
    echo "package.sh: lib/main.js has non-ASCII characters (above); write them as \\u escapes" >&2
    exit 1
fi
bundle provider/boot.ts "$stage/lib/boot.js" --define:BUNDLE_ID="\"$(sha256sum "$stage/lib/main.js" | cut -c1-16)\""
bundle google-auth-library "$stage/lib/node_modules/google-auth-library/index.js"

chmod 755 "$stage"
cp schema.json "$stage/schema.json"
node -e '
const p = require("./package.json");
const out = { name: "pulumi-resource-" + process.argv[1], version: p.version, description: p.description,
  license: p.license, private: true, main: "lib/boot.js", engines: { node: ">=20" } };
process.stdout.write(JSON.stringify(out, null, 2) + "\n");' "$name" > "$stage/package.json"

cat > "$stage/pulumi-resource-$name" <<'LAUNCHER'
#!/bin/sh
# pulumi-resource-cloud: the provider plugin. Needs node (20+) on PATH.
dir=$(dirname "$0")
# Node would read NODE_EXTRA_CA_CERTS, and build its whole certificate store, before the plugin runs (~35 ms
# of every start); the plugin adds those certificates itself before its first TLS connection.
if [ -n "${NODE_EXTRA_CA_CERTS:-}" ]; then
    PULUMI_CLOUD_EXTRA_CA_CERTS=$NODE_EXTRA_CA_CERTS
    export PULUMI_CLOUD_EXTRA_CA_CERTS
    unset NODE_EXTRA_CA_CERTS
fi
# glibc's malloc, tuned for a long-lived process whose JavaScript runs on one thread (a user's values win):
# - each thread that allocates gets an arena of its own; Node's worker threads would hold ~4 MB of RSS in them
#   for nothing here: two arenas are plenty;
# - glibc raises its mmap threshold after freeing a big block, so V8's big temporary blocks (compiler zones)
#   then come from the heap and stay in RSS; a fixed threshold gives them back (~3 MB, CPU unchanged).
MALLOC_ARENA_MAX=${MALLOC_ARENA_MAX:-2}
MALLOC_MMAP_THRESHOLD_=${MALLOC_MMAP_THRESHOLD_:-131072}
export MALLOC_ARENA_MAX MALLOC_MMAP_THRESHOLD_
exec node "$dir/lib/boot.js" "$@"
LAUNCHER
chmod 755 "$stage/pulumi-resource-$name"

# The code cache: start the plugin once, as the launcher does, and keep what V8 compiled up to the port line.
env -u NODE_EXTRA_CA_CERTS -u NODE_OPTIONS PULUMI_CLOUD_WRITE_CODE_CACHE=1 node "$stage/lib/boot.js" > /dev/null
ls "$stage"/lib/main.js.*.cache > /dev/null

test ! -e "$stage/PulumiPlugin.yaml"
mkdir -p dist
# Reproducible (fixed owner, mode, order and mtime: the commit's time when there is one), except the code
# cache, whose bytes V8 does not make deterministic.
mtime="$(git log -1 --format=%cI 2>/dev/null || echo 2020-01-01T00:00:00Z)"
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="$mtime" \
    -C "$stage" -cf - . | gzip -n -9 > "$out.$$.tmp"
# Renamed into place whole: test processes running side by side may build it at the same time.
mv -f "$out.$$.tmp" "$out"
echo "$out"
