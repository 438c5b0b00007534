#!/usr/bin/env bash
# Keeps the protocol model in step with the code. Every step of tests/model/*.pml carries a
# marker naming the code it stands for:
#     /* step: ID  code: PATH [SYMBOL] [-> PATH [SYMBOL]]... */
# (a lua/ file has no symbol; SYMBOL is Class::function or ns::function). For each piece of
# code named, tests/model/steps.txt records a fingerprint: the SHA-256 (first 16 hex
# digits) of the Lua file (its includes expanded) or of the C++ function's definition (its
# first line to the `}` that closes it at column 0), comment and blank lines left out. This
# checks that every piece exists and still has its fingerprint, so a gate script, a book
# statement or an engine step that changes shape cannot go unnoticed by the model.
#
#   bash scripts/model-steps.sh            check (ctest model_steps): exit 0 when all match
#   bash scripts/model-steps.sh --update   after looking at the model: record the fingerprints
#   bash scripts/model-steps.sh --expand F print lua/ file F with its includes expanded, as
#                                          Redis runs it (tst_gate compares it with ScriptRegistry)
#
# Exit 1 on a mismatch, a missing file, include or symbol, or a steps.txt out of date; 2 bad
# usage.
set -euo pipefail
cd "$(dirname "$0")/.."
list=tests/model/steps.txt

# expand FILE: a lua/ script as Redis runs it, the way core/gate/ScriptRegistry.cpp makes it:
# every line `--- @include NAME` replaced by the lines of lua/include/NAME (one level: an
# include holds functions only). Exit 1, naming it, when an include is missing.
expand() {
  awk -v dir="$(dirname "$1")/include/" '
    /^--- @include / {
      name = substr($0, 14); gsub(/^[ \t]+|[ \t\r]+$/, "", name)
      f = dir name
      while ((got = getline l < f) > 0) print l
      close(f)
      if (got < 0) { print "model-steps: " FILENAME ": no include " f > "/dev/stderr"; exit 1 }
      next
    }
    { print }' "$1"
}

update=0
case "${1:-}" in
  "") ;;
  --update) update=1 ;;
  --expand) [ $# -eq 2 ] && [ -f "$2" ] || { echo "model-steps: --expand needs a lua/ file" >&2; exit 2; }
            expand "$2"; exit ;;
  *) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac

# body PATH SYMBOL: the definition of SYMBOL in PATH, lines trimmed; nothing if not found.
body() {
  local path=$1 symbol=$2 name=${2##*::}
  awk -v sym="$symbol" -v name="$name" '
    function trim(s) { sub(/^[ \t]+/, "", s); sub(/[ \t\r]+$/, "", s); return s }
    !inside && /^[A-Za-z]/ && $0 !~ /;[ \t]*$/ {
      line = $0
      # Class::function( ... at column 0, or for ns::function a plain definition
      if (index(line, sym "(") || (sym ~ /^[a-z]+::/ && line ~ ("[ *&]" name "\\("))) inside = 1
    }
    inside { print trim($0); if ($0 ~ /^}/) exit }' "$path"
}

# code_only lua|cpp: stdin without comment lines and blank lines, each line trimmed (Lua:
# `--` lines and `--[[ ... ]]` blocks; C++: `//` lines), so a reworded comment changes no
# fingerprint.
code_only() {
  awk -v lang="$1" '
    { sub(/^[ \t]+/, ""); sub(/[ \t\r]+$/, "") }
    lang == "lua" && block { if (index($0, "]]")) block = 0; next }
    lang == "lua" && /^--\[\[/ { if (!index($0, "]]")) block = 1; next }
    lang == "lua" && /^--/ { next }
    lang == "cpp" && /^\/\// { next }
    $0 != "" { print }'
}

# fingerprint PATH [SYMBOL]
fingerprint() {
  local path=$1 symbol=${2:-} text
  [ -f "$path" ] || { echo "missing-file"; return; }
  if [ -z "$symbol" ]; then
    text=$(expand "$path") || { echo "missing-include"; return; }
    printf '%s\n' "$text" | code_only lua | sha256sum | cut -c1-16
    return
  fi
  text=$(body "$path" "$symbol" | code_only cpp)
  [ -n "$text" ] || { echo "missing-symbol"; return; }
  printf '%s\n' "$text" | sha256sum | cut -c1-16
}

# The markers: "ID FILE:LINE PATH SYMBOL" per piece of code (SYMBOL "-" for none).
markers() {
  grep -n 'step: [a-z0-9.-]*  code: ' tests/model/*.pml | while IFS= read -r hit; do
    local where
    where=$(echo "$hit" | cut -d: -f1,2)
    local id code
    id=$(echo "$hit" | sed -E 's/.*step: ([a-z0-9.-]+)  code: .*/\1/')
    code=$(echo "$hit" | sed -E 's/.*  code: (.*) \*\/.*/\1/')
    case "$code" in none*) continue ;; esac
    echo "$code" | sed 's/ -> /\n/g' | while read -r path symbol; do
      echo "$id $where $path ${symbol:--}"
    done
  done
}

current=$(markers | while read -r id where path symbol; do
  s=$symbol; [ "$s" = - ] && s=""
  echo "$id $path $symbol $(fingerprint "$path" "$s") $where"
done)

if [ $update -eq 1 ]; then
  if echo "$current" | grep -q ' missing-'; then
    echo "$current" | awk '$4 ~ /^missing-/ { print "model-steps: step " $1 " (" $5 "): " $2 " " $3 ": " $4 }' >&2
    echo "model-steps: fix those markers first; nothing written" >&2
    exit 1
  fi
  { echo "# step  code  symbol  fingerprint: written by bash scripts/model-steps.sh --update"
    echo "$current" | awk '{ print $1, $2, $3, $4 }'; } >"$list"
  echo "model-steps: $(echo "$current" | wc -l) pieces of code recorded in $list"
  exit 0
fi

status=0
while read -r id path symbol fp where; do
  case "$fp" in
    missing-file|missing-include|missing-symbol)
      echo "FAIL  step $id ($where): $path $symbol: ${fp#missing-} not found: the model names code that is not there; fix the marker"
      status=1; continue ;;
  esac
  recorded=$(awk -v i="$id" -v p="$path" -v s="$symbol" '$1 == i && $2 == p && $3 == s { print $4 }' "$list")
  if [ -z "$recorded" ]; then
    echo "FAIL  step $id ($where): $path $symbol is not in $list: check the step against it, then bash scripts/model-steps.sh --update"
    status=1
  elif [ "$recorded" != "$fp" ]; then
    echo "FAIL  step $id ($where): $path $symbol changed (fingerprint $recorded, now $fp): look at the model step $id and what it says the code does; when the model still says it (or you changed the model), bash scripts/model-steps.sh --update"
    status=1
  fi
done <<<"$current"
# Lines of steps.txt no marker names any more.
grep -v '^#' "$list" | while read -r id path symbol _; do
  echo "$current" | awk -v i="$id" -v p="$path" -v s="$symbol" '$1 == i && $2 == p && $3 == s { f = 1 } END { exit !f }' ||
    echo "FAIL  $list names $id $path $symbol, which no model step names: bash scripts/model-steps.sh --update"
done | { grep . && exit 1 || exit 0; } || status=1
[ $status -eq 0 ] && echo "model-steps: $(echo "$current" | wc -l) pieces of code match the model's steps"
exit $status
