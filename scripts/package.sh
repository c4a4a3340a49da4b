#!/usr/bin/env bash
# Builds the installable plugin: dist/pulumi-resource-cloud-v<version>-linux-amd64.tar.gz
#
#   pulumi-resource-cloud   launcher (#!/bin/sh, execs node on lib/main.js)
#   lib/main.js             the provider and all its dependencies, bundled by esbuild (node20, cjs)
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

node_modules/.bin/esbuild provider/main.ts \
    --bundle --platform=node --target=node20 --format=cjs \
    --legal-comments=linked --log-level=warning \
    --outfile="$stage/lib/main.js"

chmod 755 "$stage"
cp schema.json "$stage/schema.json"
node -e '
const p = require("./package.json");
const out = { name: "pulumi-resource-" + process.argv[1], version: p.version, description: p.description,
  license: p.license, private: true, main: "lib/main.js", engines: { node: ">=20" } };
process.stdout.write(JSON.stringify(out, null, 2) + "\n");' "$name" > "$stage/package.json"

cat > "$stage/pulumi-resource-$name" <<'EOF'
#!/bin/sh
# pulumi-resource-cloud: the provider plugin. Needs node (20+) on PATH.
dir=$(dirname "$0")
exec node "$dir/lib/main.js" "$@"
EOF
chmod 755 "$stage/pulumi-resource-$name"

test ! -e "$stage/PulumiPlugin.yaml"
mkdir -p dist
# Reproducible: fixed owner, mode, order and mtime (the commit's time when there is one).
mtime="$(git log -1 --format=%cI 2>/dev/null || echo 2020-01-01T00:00:00Z)"
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="$mtime" \
    -C "$stage" -cf - . | gzip -n -9 > "$out.tmp"
mv -f "$out.tmp" "$out"
echo "$out"
