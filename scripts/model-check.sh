#!/usr/bin/env bash
# Model-checks the protocol model (tests/model/, Promela) with spin: every configuration
# below exhaustively (no bitstate, no hash compaction; -DCOLLAPSE only compresses the stored
# states), one line per property and configuration with PASS/FAIL and the state count.
#
#   bash scripts/model-check.sh                  the plain model, then every mutant (ctest, CI)
#   bash scripts/model-check.sh --plain          the plain model only: every property must hold
#   bash scripts/model-check.sh --mutant NAME    a known-wrong protocol: must give a trail
#   bash scripts/model-check.sh --mutants        every mutant, one after the other
#   --keep DIR                                   keep the work files (pan, trails) in DIR
#
# Mutants: compensate-without-fence, release-without-cas, restore-without-netting,
# restore-nets-held, settle-before-commit. Exit 0 when the plain model passes and every mutant asked for
# fails with a counterexample; 1 otherwise; 2 bad usage; 77 spin or gcc missing and CI
# not set (with CI set: 1). Needs spin and gcc (scripts/install-deps.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

usage() { sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

declare -A mutant_define=(
  [compensate-without-fence]=MUTANT_COMPENSATE_NO_FENCE
  [release-without-cas]=MUTANT_RELEASE_NOCAS
  [restore-without-netting]=MUTANT_RESTORE_NO_NET
  [restore-nets-held]=MUTANT_RESTORE_NETS_HELD
  [settle-before-commit]=MUTANT_SETTLE_BEFORE_COMMIT
)
mutant_order=(compensate-without-fence release-without-cas restore-without-netting restore-nets-held settle-before-commit)

plain=1
mutants=("${mutant_order[@]}")
keep=""
while [ $# -gt 0 ]; do
  case "$1" in
    --mutant)
      [ $# -ge 2 ] || usage
      [ -n "${mutant_define[$2]:-}" ] || { echo "model-check: --mutant: unknown mutant '$2' (one of: ${mutant_order[*]})" >&2; exit 2; }
      [ $plain -eq 0 ] || mutants=()
      plain=0; mutants+=("$2"); shift 2 ;;
    --mutants) plain=0; mutants=("${mutant_order[@]}"); shift ;;
    --plain) plain=1; mutants=(); shift ;;
    --keep) [ $# -ge 2 ] || usage; keep="$2"; shift 2 ;;
    -h|--help) usage ;;
    *) echo "model-check: unknown argument '$1'" >&2; usage ;;
  esac
done

# A missing tool skips (77, ctest's SKIP_RETURN_CODE) unless CI is set, where it fails:
# the rule the server fixtures follow (tests/support/TestChecks.cpp).
for tool in spin gcc; do
  if ! command -v "$tool" >/dev/null; then
    echo "model-check: $tool not found (bash scripts/install-deps.sh installs it)" >&2
    [ -n "${CI+set}" ] && exit 1
    echo "model-check: skipped (with CI set this fails)" >&2; exit 77
  fi
done

if [ -n "$keep" ]; then
  mkdir -p "$keep"; work=$(cd "$keep" && pwd)
else
  work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
fi

# The configurations. Bounds: orders (each 1 unit), units, faults in one run and the
# kinds that may happen (tests/model/config.pml).
crash_only="-DLOSS=0 -DEVICT=0 -DFLUSH=0 -DDBFAIL=0"
safety_configs=(
  "nofault|-DNORD=2 -DTOTAL=1 -DMAXFAULTS=0|2 orders, 1 unit, no faults"
  "crash2|-DNORD=2 -DTOTAL=1 -DMAXFAULTS=2 $crash_only|2 orders, 1 unit, 2 crashes of any actor"
  "mixed1|-DNORD=2 -DTOTAL=1 -DMAXFAULTS=1|2 orders, 1 unit, 1 fault of any kind"
)
liveness_config="live0|-DNORD=2 -DTOTAL=1 -DMAXFAULTS=0 -DLIVENESS|2 orders, 1 unit, no faults, weak fairness"
safety_props="I1 I4 I6 C1 G2 G3 L3"

# build DIR "SPIN DEFINES" "GCC FLAGS": spin -a and compile pan in DIR.
build() {
  local dir=$1 sdefs=$2 gdefs=$3
  mkdir -p "$dir"
  cp "$root"/tests/model/*.pml "$dir"/
  (cd "$dir" && spin -a $sdefs flashstock.pml >spin.out 2>&1) || { cat "$dir/spin.out" >&2; return 1; }
  # -w: pan.c indexes arrays with constants its guards keep out of range (HEAL(k), k > NTOK).
  (cd "$dir" && gcc -w $gdefs -o pan pan.c) || return 1
}

# field FILE: "STATES ERRORS SECONDS" from a pan report.
field() {
  local states errors secs
  states=$(awk '/states, stored/ {print $1; exit}' "$1")
  errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' "$1" | head -1)
  secs=$(sed -n 's/^pan: elapsed time \([0-9.e+]*\).*/\1/p' "$1" | head -1)
  echo "${states:-?} ${errors:-?} ${secs:-?}"
}

# violated DIR "SPIN DEFINES": the property names the trail breaks (its monitor's message,
# or the LTL claim), and the trail's steps, into DIR/trail.txt.
trail() {
  local dir=$1 sdefs=$2
  (cd "$dir" && spin -t -p -k flashstock.pml.trail $sdefs flashstock.pml >trail.txt 2>&1) || true
}

# steps DIR: the trail in DIR/trail.txt as the model's steps (the `step:` markers of
# tests/model/*.pml), one line per step an actor took; the monitors and idle passes left out.
steps() {
  local dir=$1
  { for f in "$dir"/*.pml; do
      grep -n 'step: [a-z0-9.-]*  code:' "$f" | sed -E "s/^([0-9]+):.*step: ([a-z0-9.-]+)  code:.*/M ${f##*/} \1 \2/"
    done
    sed -nE -e 's/^ *[0-9]+:\s+proc +([0-9]+) \(([A-Za-z0-9_]+):[0-9]+\) ([a-z]+\.pml):([0-9]+).*/T \2(\1) \3 \4/p' \
      -e 's/.*(PROPERTY [A-Z0-9_]+ violated).*/P \1/p' "$dir/trail.txt"; } |
  awk '
    $1 == "M" { n[$2]++; L[$2, n[$2]] = $3 + 0; S[$2, n[$2]] = $4; next }
    $1 == "P" && !done { verdict = "=> " $2 " " $3 " " $4; done = 1; next }
    done { next }
    $1 == "T" { who = $2; file = $3; line = $4 + 0
      if (who ~ /^(I1|I4|I6|C1|G1|G2|G3)_/ || who ~ /^:init:/) next
      step = ""; for (i = 1; i <= n[file]; i++) if (L[file, i] <= line) step = S[file, i]
      if (file == "faults.pml") step = "fault"
      if (step == "" || key == who " " step) next
      key = who " " step; out[++k] = who " " step }
    END { for (i = 1; i <= k; i++) if (out[i] !~ /^Reconciler/ || out[i + 1] !~ /^Reconciler/) print out[i]
          if (verdict != "") print verdict }'
}

status=0

# check_safety NAME "SPIN DEFINES" DESCRIPTION [expect_fail]
check_safety() {
  local name=$1 sdefs=$2 what=$3 expect=${4:-pass} dir="$work/$1"
  # pan unoptimised: at these bounds compiling it with -O2 (about a minute of CPU) costs
  # more than the slower search (a few million states) loses.
  build "$dir" "$sdefs" "-O0 -DSAFETY -DCOLLAPSE" || { echo "FAIL  $name: spin or gcc failed"; status=1; return; }
  (cd "$dir" && ./pan -m1000000 -w24 -E >pan.out 2>&1) || true
  read -r states errors secs < <(field "$dir/pan.out")
  if [ "$errors" = 0 ] && grep -q "search depth too small" "$dir/pan.out"; then errors="depth"; fi
  if [ "$expect" = pass ]; then
    if [ "$errors" = 0 ]; then
      for p in $safety_props; do
        printf 'PASS  %-3s %-9s %10s states  %5ss  (%s)\n' "$p" "$name" "$states" "$secs" "$what"
      done
    else
      trail "$dir" "$sdefs"
      local broken; broken=$(grep -o 'PROPERTY [A-Z0-9_]* violated' "$dir/trail.txt" | head -1 || true)
      echo "FAIL  $name: ${broken:-errors $errors} after $states states; trail: $dir/trail.txt"
      status=1
    fi
  else
    if [ "$errors" != 0 ] && [ "$errors" != "?" ]; then
      trail "$dir" "$sdefs"
      local broken steps; broken=$(grep -o 'PROPERTY [A-Z0-9_]* violated' "$dir/trail.txt" | head -1 || true)
      steps=$(grep -c 'proc .* (' "$dir/trail.txt" || true)
      steps "$dir" >"$dir/steps.txt" || true
      echo "FAIL  (as it must) mutant $name: ${broken:-an assertion} after $states states; trail of $steps transitions, as model steps: $dir/steps.txt"
      sed 's/^/        /' "$dir/steps.txt"
    else
      echo "PASS  mutant $name: NO counterexample in $states states: the model cannot tell this protocol is wrong"
      status=1
    fi
  fi
}

# check_liveness NAME "SPIN DEFINES" DESCRIPTION: I5 (<>[] gate = book, nothing stuck) as
# an acceptance-cycle search under weak fairness.
check_liveness() {
  local name=$1 sdefs=$2 what=$3 dir="$work/$1"
  build "$dir" "$sdefs" "-O0 -DCOLLAPSE -DNFAIR=4" || { echo "FAIL  $name: spin or gcc failed"; status=1; return; }
  (cd "$dir" && ./pan -m1000000 -w24 -a -f -N I5 >pan.out 2>&1) || true
  read -r states errors secs < <(field "$dir/pan.out")
  if [ "$errors" = 0 ]; then
    printf 'PASS  %-3s %-9s %10s states  %5ss  (%s)\n' I5 "$name" "$states" "$secs" "$what"
  elif [ "$errors" = "?" ]; then
    echo "FAIL  I5  $name: pan did not finish: $(grep -m1 'error' "$dir/pan.out" || tail -1 "$dir/pan.out")"
    status=1
  else
    trail "$dir" "$sdefs"
    echo "FAIL  I5  $name: acceptance cycle after $states states; trail: $dir/trail.txt"
    status=1
  fi
}

if [ $plain -eq 1 ]; then
  for c in "${safety_configs[@]}"; do
    IFS='|' read -r name defs what <<<"$c"
    check_safety "$name" "$defs" "$what"
  done
  IFS='|' read -r name defs what <<<"$liveness_config"
  check_liveness "$name" "$defs" "$what"
fi
# Each mutant in the plain model's 1-fault configuration; the restore mutants with the one
# fault that makes a restore (the stock key evicted), which finds their trails sooner.
for m in "${mutants[@]}"; do
  IFS='|' read -r _ defs _ <<<"${safety_configs[2]}"
  case "$m" in restore-*) defs="$defs -DCRASH=0 -DLOSS=0 -DFLUSH=0 -DDBFAIL=0" ;; esac
  check_safety "$m" "$defs -D${mutant_define[$m]}" "mutant" fail
done
exit $status
