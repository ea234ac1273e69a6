#!/usr/bin/env bash
# Packs droidmcp.mcpb for Claude Desktop with @anthropic-ai/mcpb: the manifest beside it, the
# release binary of this machine (or BINARY=path, e.g. a cross-built one), validated first.
# Usage: packaging/mcpb/pack.sh [OUTPUT.mcpb]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=${1:-$repo/target/droidmcp.mcpb}

if [ -z "${BINARY:-}" ]; then
  cargo build --release --manifest-path "$repo/Cargo.toml"
  BINARY=$repo/target/release/droidmcp
  [ -f "$BINARY.exe" ] && BINARY=$BINARY.exe
fi
[ -f "$BINARY" ] || { echo "no binary at $BINARY" >&2; exit 1; }

# The official CLI: an installed `mcpb`, else npx fetches it.
if command -v mcpb >/dev/null 2>&1; then mcpb=(mcpb); else mcpb=(npx --yes @anthropic-ai/mcpb@2); fi

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir "$stage/server"
cp "$BINARY" "$stage/server/"
cp "$here/manifest.json" "$repo/README.md" "$stage/"
# A bundle holds one platform's binary: say which, so Claude Desktop refuses the others.
platform=$(node -p 'process.platform')
node -e '
  const fs = require("fs"), file = process.argv[1];
  const m = JSON.parse(fs.readFileSync(file, "utf8"));
  m.compatibility.platforms = [process.argv[2]];
  fs.writeFileSync(file, JSON.stringify(m, null, 2) + "\n");
' "$stage/manifest.json" "${PLATFORM:-$platform}"
"${mcpb[@]}" validate "$stage/manifest.json"
"${mcpb[@]}" pack "$stage" "$out"
echo "packed $out"
