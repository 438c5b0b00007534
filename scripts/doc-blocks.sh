#!/usr/bin/env bash
# Runs the documentation's runnable shell blocks and checks its links.
#
# A fenced block whose info string is exactly `sh runnable` (three backticks, then
# `sh runnable`; indented in a list item too) in README.md or docs/*.md is runnable: it runs as written on a scratch
# machine with the built binaries on PATH. Every other fence (```sh, ``` ...) is for
# reading only: it needs root, a real PostgreSQL, a formation, or it only shows output.
#
# For each file, its runnable blocks run in order in one bash (`set -eE -o pipefail`, so
# shell variables and the data dir carry from one block to the next), in a fresh scratch
# directory that is also $HOME (so the default data dir, ~/.local/share/flashstock, is a
# scratch one), in a network namespace of its own when the machine allows it (so a port
# such as 8080 is free), under a time limit. A failing command fails the run, naming the
# file and the line of its block. Then every relative link in README.md and docs/*.md must
# resolve: the file, and the #anchor as a heading of that file (GitHub's slugs).
#
# usage: scripts/doc-blocks.sh [--bin DIR] [--links-only] [FILE.md ...]
#   --bin DIR     where flashstock-cli and flashstock-server are (default: build/app)
#   --links-only  check the links only
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
bin="$root/build/app"
links_only=0
files=()
while [ $# -gt 0 ]; do
    case "$1" in
        --bin) bin=$(cd "$2" && pwd); shift 2 ;;
        --links-only) links_only=1; shift ;;
        -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
        *) files+=("$1"); shift ;;
    esac
done
cd "$root"
if [ ${#files[@]} -eq 0 ]; then
    files=(README.md docs/*.md)
fi
per_file_seconds=${DOC_BLOCKS_TIMEOUT:-50}
failed=0

# The runnable blocks of $1 as one bash script; each block starts by setting __line.
extract() {
    awk -v file="$1" '
        BEGIN { printf "set -eE -o pipefail\n"
                printf "trap '\''rc=$?; echo \"doc-blocks: %s:$__line: the runnable block starting there failed (exit $rc)\" >&2; exit 1'\'' ERR\n", file }
        inblock && /^[[:space:]]*```[[:space:]]*$/ { inblock = 0; next }
        inblock { line = $0; if (substr(line, 1, indent) ~ /^[[:space:]]*$/) line = substr(line, indent + 1); print line; next }
        /^[[:space:]]*```sh runnable[[:space:]]*$/ { inblock = 1; match($0, /^[[:space:]]*/); indent = RLENGTH
                                                   printf "__line=%d\n", NR; next }
        END { if (inblock) { printf "echo \"doc-blocks: %s:$__line: unterminated block\" >&2; exit 1\n", file } }
    ' "$1"
}

run_file() {
    local f=$1 script n scratch rc
    n=$(grep -c '^[[:space:]]*```sh runnable[[:space:]]*$' "$f" || true)
    [ "$n" -gt 0 ] || return 0
    scratch=$(mktemp -d /tmp/doc-blocks.XXXXXX)
    script="$scratch/blocks.sh"
    extract "$f" > "$script"
    mkdir -p "$scratch/home"
    local -a ns=()
    if [ "$(id -u)" = 0 ] && unshare -n true 2>/dev/null; then
        ns=(unshare -n)
    fi
    # The blocks run in a process group of their own; whatever is left of it is stopped after.
    (
        cd "$scratch/home" || exit 1
        export HOME="$scratch/home" PATH="$bin:$PATH"
        unset FLASHSTOCK_DATA_DIR XDG_DATA_HOME FLASHSTOCK_TOKEN
        if [ ${#ns[@]} -gt 0 ]; then
            exec setsid timeout "$per_file_seconds" "${ns[@]}" bash -c 'ip link set lo up && exec bash "$0"' "$script"
        fi
        exec setsid timeout "$per_file_seconds" bash "$script"
    ) > "$scratch/out" 2>&1 &
    local pid=$!
    wait "$pid"; rc=$?
    HOME="$scratch/home" "$bin/flashstock-cli" embedded stop > /dev/null 2>&1 || true
    kill -- "-$pid" 2>/dev/null || true
    if [ "$rc" -ne 0 ]; then
        failed=1
        echo "doc-blocks: $f: FAILED ($n runnable blocks; exit $rc)" >&2
        [ "$rc" = 124 ] && echo "doc-blocks: $f: over the time limit of ${per_file_seconds}s" >&2
        tail -n 30 "$scratch/out" >&2
    else
        echo "doc-blocks: $f: $n runnable blocks passed"
        rm -rf "$scratch"
    fi
}

# GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens.
slugs() {
    awk '
        /^[[:space:]]*```/ { fence = !fence; next }
        fence { next }
        /^#+ / { h = $0; sub(/^#+ +/, "", h); h = tolower(h)
                 gsub(/[^a-z0-9 _-]/, "", h); gsub(/ /, "-", h)
                 if (h in seen) { print h "-" seen[h]; seen[h]++ } else { print h; seen[h] = 1 } }
    ' "$1"
}

check_links() {
    local f dir target path anchor
    for f in README.md docs/*.md; do
        dir=$(dirname "$f")
        # Links outside code: [text](target), the target without a title.
        while IFS=: read -r line target; do
            case "$target" in http://*|https://*|mailto:*) continue ;; esac
            path=${target%%#*}
            anchor=
            [ "$path" != "$target" ] && anchor=${target#*#}
            if [ -z "$path" ]; then path=$f; else path=$(realpath -m --relative-to="$root" "$dir/$path"); fi
            if [ ! -e "$path" ]; then
                echo "doc-blocks: $f:$line: link to $target: no file $path" >&2; failed=1; continue
            fi
            if [ -n "$anchor" ]; then
                if [[ "$path" != *.md ]] || ! slugs "$path" | grep -qxF -- "$anchor"; then
                    echo "doc-blocks: $f:$line: link to $target: no heading #$anchor in $path" >&2; failed=1
                fi
            fi
        done < <(awk '
            /^[[:space:]]*```/ { fence = !fence; next }
            fence { next }
            { s = $0; gsub(/`[^`]*`/, "", s)
              while (match(s, /\]\([^) ]+\)/)) { print NR ":" substr(s, RSTART + 2, RLENGTH - 3); s = substr(s, RSTART + RLENGTH) } }
        ' "$f")
    done
}

if [ "$links_only" = 0 ]; then
    for t in flashstock-cli flashstock-server; do
        [ -x "$bin/$t" ] || { echo "doc-blocks: no $bin/$t (build it, or --bin DIR)" >&2; exit 2; }
    done
    for f in "${files[@]}"; do run_file "$f"; done
fi
check_links
if [ "$failed" != 0 ]; then
    echo "doc-blocks: FAILED" >&2
    exit 1
fi
echo "doc-blocks: every runnable block ran and every link resolves"
