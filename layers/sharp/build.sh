#!/usr/bin/env bash
# Builds the crawler's sharp layer for Lambda (Node.js 24, arm64, glibc) into layers/sharp/nodejs.
# Not run by tests or by `cdk synth`; run it before `cdk deploy` (see README.md).
#
#   layers/sharp/build.sh              # the sharp version of the root package.json
#   SHARP_VERSION=0.34.4 layers/sharp/build.sh
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
version="${SHARP_VERSION:-$(node -p "require(process.argv[1]).dependencies.sharp" "$root/package.json")}"
out="$here/nodejs"

rm -rf "$out"
mkdir -p "$out"
# A package.json of its own, so npm installs here and not into the repository's node_modules.
printf '{\n  "name": "sharp-layer",\n  "private": true\n}\n' > "$out/package.json"
(
  cd "$out"
  # --ignore-scripts: the prebuilt binaries are all we need (sharp's install check would look at
  # the build machine's platform, not the target's).
  npm install --os=linux --cpu=arm64 --libc=glibc --omit=dev --ignore-scripts --no-audit --no-fund --no-save "sharp@$version"
)
rm -f "$out/package.json" "$out/package-lock.json"

test -f "$out/node_modules/sharp/package.json" || { echo "sharp was not installed" >&2; exit 1; }
test -f "$out/node_modules/@img/sharp-linux-arm64/package.json" || { echo "the linux-arm64 binary of sharp was not installed" >&2; exit 1; }
echo "sharp $version for linux-arm64 (glibc) is in $out ($(du -sh "$out" | cut -f1))"
