#!/usr/bin/env bash
# Builds installable SDK packages from the generated SDKs in sdk/ into dist/sdk/ (docs/reference.md, "Installing the SDKs"):
#
#   pulumi-cloud-endpoints-<v>.tgz       npm package: compiled JavaScript + declarations (bin/), main bin/index.js
#   pulumi_cloud-<v>-py3-none-any.whl    Python wheel (pip wheel, setuptools from PyPI)
#   goproxy/                             the Go module example.com/pulumi-cloud/sdk/go/v8@v<v> laid out as a Go
#                                        module proxy (GOPROXY=file://…): .info, .mod and .zip, go.sum inside
#   cloud-<v>.jar, cloud-<v>.pom         Java jar built with Maven (scripts/sdk-java/pom.xml), com.pulumi:cloud
#
# C# stays generated sources (sdk/dotnet): there is no .NET toolchain here.
#
#   scripts/sdk.sh [LANGUAGE...]          default: nodejs python go java
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
version="$(node -p 'require("./package.json").version')"
out="$root/dist/sdk"
mkdir -p "$out"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
languages="${*:-nodejs python go java}"

for lang in $languages; do
    case "$lang" in
        nodejs)
            # Compiled under build/ so that `@pulumi/pulumi` resolves to this repository's (the pinned release).
            dir="$root/build/sdk-pack/nodejs"
            rm -rf "$dir" && mkdir -p "$dir" && cp -R sdk/nodejs/. "$dir/"
            (cd "$dir" && PATH="$root/node_modules/.bin:$PATH" npm run --silent build)
            name="$(node -p "require('$dir/package.json').name")"
            rm -f "$out/$name-$version.tgz"
            (cd "$dir" && npm pack --silent --pack-destination "$out" >/dev/null)
            echo "dist/sdk/$name-$version.tgz" ;;
        python)
            rm -f "$out"/pulumi_cloud-*.whl
            cp -R sdk/python "$stage/python"
            PIP_DISABLE_PIP_VERSION_CHECK=1 python3 -m pip wheel --quiet --no-deps --wheel-dir "$out" "$stage/python"
            ls "$out"/pulumi_cloud-"$version"-*.whl | sed "s#^$root/##" ;;
        go)
            # A Go module proxy directory: GOPROXY=file://$PWD/dist/sdk/goproxy resolves the module from it.
            module="$(sed -n 's/^module //p' sdk/go/go.mod)"
            base="$out/goproxy/$module/@v"
            rm -rf "$out/goproxy" && mkdir -p "$base"
            printf 'v%s\n' "$version" > "$base/list"
            mtime="$(git log -1 --format=%cI 2>/dev/null || echo 2020-01-01T00:00:00Z)"
            printf '{"Version":"v%s","Time":"%s"}\n' "$version" "$mtime" > "$base/v$version.info"
            cp sdk/go/go.mod "$base/v$version.mod"
            python3 - "$root/sdk/go" "$module@v$version" "$base/v$version.zip" <<'PY'
import os, sys, zipfile
src, prefix, dest = sys.argv[1:]
with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as z:
    for d, _, files in sorted(os.walk(src)):
        for f in sorted(files):
            p = os.path.join(d, f)
            info = zipfile.ZipInfo(prefix + "/" + os.path.relpath(p, src), (1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            with open(p, "rb") as fh:
                z.writestr(info, fh.read())
PY
            echo "dist/sdk/goproxy/$module/@v/v$version.zip" ;;
        java)
            mkdir -p "$stage/java/src/main/resources/com/pulumi/cloud"
            cp scripts/sdk-java/pom.xml "$stage/java/pom.xml"
            cp -R sdk/java/src/main/java "$stage/java/src/main/java"
            printf '%s' "$version" > "$stage/java/src/main/resources/com/pulumi/cloud/version.txt"
            # As the Gradle build the generator writes makes it: the engine reads `server` to download the plugin.
            server="$(node -p 'require("./schema.json").pluginDownloadURL')"
            printf '{\n    "resource": true,\n    "name": "cloud",\n    "version": "%s",\n    "server": "%s"\n}\n' "$version" "$server" \
                > "$stage/java/src/main/resources/com/pulumi/cloud/plugin.json"
            (cd "$stage/java" && mvn -B -q -Dstyle.color=never -Drevision="$version" package >&2)
            cp "$stage/java/target/cloud-$version.jar" "$out/cloud-$version.jar"
            sed "s#<version>\${revision}</version>#<version>$version</version>#" scripts/sdk-java/pom.xml > "$out/cloud-$version.pom"
            echo "dist/sdk/cloud-$version.jar" ;;
        *) echo "sdk.sh: unknown language $lang" >&2; exit 1 ;;
    esac
done
