#!/usr/bin/env bash
# How much of a public Maestro suite `droidmcp replay --check` reads whole (docs/flows.md,
# "Measured on public suites"). Reads what is already on disk; downloads nothing.
#
#   benches/maestro_corpus.sh [--bin DROIDMCP] WORKSPACE...
#   benches/maestro_corpus.sh [--bin DROIDMCP] --git GIT_DIR WORKSPACE_PATH...
#     (a fetched mirror's HEAD: its text files extracted to a temp folder, read there, removed)
#
# A workspace's top-level flows are the ones `maestro test WORKSPACE` picks: config.yaml's
# `flows` globs when it has them, else the .yaml/.yml files directly in the folder. Each is read
# with its runFlow'd subflows; a flow "reads whole" when --check refuses nothing in it.
# Prints one line per refused flow (FILE: first refusal) and the figure.
set -euo pipefail
bin="${DROIDMCP:-$(dirname "$0")/../target/debug/droidmcp}"
if [[ "${1:-}" == "--bin" ]]; then bin="$2"; shift 2; fi
workspaces=()
if [[ "${1:-}" == "--git" ]]; then
  git_dir="$2"; shift 2
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  # The .yaml/.yml/.js/.json files under each workspace's top folder (a runFlow may reach
  # beside the workspace), one by one (a snapshot may lack its big binaries).
  tops=()
  for w in "$@"; do tops+=("${w%%/*}"); done
  git -C "$git_dir" -c core.quotePath=false ls-tree -r HEAD -- "${tops[@]}" |
    while IFS=$'\t' read -r meta path; do
      read -r _ kind blob <<<"$meta"
      [[ "$kind" == blob && "$path" =~ \.(ya?ml|js|json)$ ]] || continue
      mkdir -p "$tmp/$(dirname "$path")"
      git -C "$git_dir" cat-file blob "$blob" >"$tmp/$path" 2>/dev/null || rm -f "$tmp/$path"
    done
  echo "# $(basename "$(dirname "$git_dir")")@$(git -C "$git_dir" rev-parse --short=10 HEAD) $*"
  for w in "$@"; do workspaces+=("$tmp/$w"); done
  base="$tmp/"
else
  workspaces=("$@")
  base=""
fi
total=0; whole=0
for ws in "${workspaces[@]}"; do
  config=""
  for c in "$ws/config.yaml" "$ws/config.yml"; do [[ -f "$c" ]] && config="$c" && break; done
  globs=()
  if [[ -n "$config" ]]; then
    # The `flows:` list, one "- glob" a line (Maestro's own form of it).
    mapfile -t globs < <(awk '/^flows:/{on=1;next} on && /^[^ \t-]/{on=0} on && /^[ \t]*-/{sub(/^[ \t]*-[ \t]*/,""); gsub(/["'"'"']/,""); print}' "$config")
  fi
  [[ ${#globs[@]} -eq 0 ]] && globs=("*")
  flows=()
  shopt -s globstar nullglob
  for g in "${globs[@]}"; do
    for f in "$ws"/$g; do
      [[ -f "$f" && "$f" =~ \.ya?ml$ && "$(basename "$f")" != config.y*ml ]] && flows+=("$f")
    done
  done
  mapfile -t flows < <(printf '%s\n' "${flows[@]}" | sort -u)
  for f in "${flows[@]}"; do
    [[ -z "$f" ]] && continue
    total=$((total + 1))
    out="$("$bin" replay --check "$f" 2>&1)" && { whole=$((whole + 1)); continue; }
    first="$(grep -m1 '^refused\|error' <<<"$out" || tail -1 <<<"$out")"
    echo "REFUSED ${f#"$base"}: ${first//$base/}"
  done
done
echo "read whole: $whole of $total top-level flows"
