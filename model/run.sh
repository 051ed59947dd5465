#!/usr/bin/env bash
# Runs every spin check listed in model/runs.txt: each real model must verify
# (no counterexample), each mutant and each documented residual must FAIL
# (spin finds a counterexample), and each failing run's trail is summarised
# from the model's "EV" printf lines. Exits non-zero when any run does not
# do what runs.txt expects. Two runs at a time (JOBS).
#
#   model/run.sh            every run
#   model/run.sh NAME...    only these runs
#
# Needs spin and gcc (scripts/setup.sh installs them).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
jobs="${JOBS:-2}"
out="${MODEL_OUT:-$(mktemp -d)}"
mkdir -p "$out"
export MODEL_OUT="$out"

one() {
	local name="$1" file="$2" expect="$3" kind="$4" defs="$5"
	local dir="$out/$name"
	rm -rf "$dir" && mkdir -p "$dir"
	cp "$here"/*.pml "$dir/"
	cd "$dir"
	# shellcheck disable=SC2086
	spin -a $defs "$file" >spin.log 2>&1 || { echo "FAIL $name: spin -a: $(cat spin.log)"; return 1; }
	local ccflags="-O2 -DCOLLAPSE" panflags="-m1000000"
	case "$kind" in
	safety) ccflags="$ccflags -DSAFETY"; panflags="$panflags -E" ;;
	# breadth-first, always: the shortest trail where a counterexample is
	# expected, and a shallow search where none is (depth-first runs of the
	# migrate model reach depths of tens of millions); every step of the
	# model is a d_step, so only whole steps are stored
	bfs) ccflags="-O2 -DSAFETY -DBFS -DCOLLAPSE -DMEMLIM=${MODEL_MEMLIM:-8000}"; panflags="-E" ;;
	dfs) ccflags="$ccflags -DSAFETY"; panflags="-m10000000 -E" ;; # depth-first, no shortening: the trail's last events
	live) ccflags="$ccflags -DNFAIR=3"; panflags="$panflags -a -f" ;;
	esac
	if [ "$expect" != ok ] && [ "$kind" = safety ]; then
		panflags="$panflags -i" # the shortest trail, for the summary
	fi
	# shellcheck disable=SC2086
	gcc $ccflags -o pan pan.c 2>gcc.log || { echo "FAIL $name: gcc: $(head -5 gcc.log)"; return 1; }
	local t0 t1
	t0=$(date +%s.%N)
	# shellcheck disable=SC2086
	./pan $panflags >pan.log 2>&1 || true
	t1=$(date +%s.%N)
	local errs states depth secs
	errs=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' pan.log | tail -1)
	states=$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' pan.log | tail -1)
	depth=$(sed -n 's/.*depth reached \([0-9]*\).*/\1/p' pan.log | tail -1)
	secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
	if [ -z "$errs" ]; then
		echo "FAIL $name: pan did not finish: $(tail -5 pan.log)"
		return 1
	fi
	if [ "$expect" = ok ] && grep -q "Search not completed" pan.log; then
		echo "FAIL $name: search not completed within MODEL_MEMLIM=${MODEL_MEMLIM:-8000} MB ($states states); raise MODEL_MEMLIM or shrink the bounds"
		return 1
	fi
	if grep -q "error: max search depth too small" pan.log; then
		echo "FAIL $name: search depth too small (raise -m)"
		return 1
	fi
	local figures="states=$states depth=$depth time=${secs}s"
	if [ "$expect" = ok ]; then
		if [ "$errs" = 0 ]; then
			echo "ok   $name: verified, no counterexample ($figures)"
			return 0
		fi
		echo "FAIL $name: the real model has a counterexample ($figures):"
	else
		if [ "$errs" = 0 ]; then
			echo "FAIL $name: $expect NOT caught: spin found no counterexample ($figures); the model is too weak"
			return 1
		fi
		echo "ok   $name: $expect caught ($figures); trail:"
	fi
	grep -m1 -E "assertion violated|acceptance cycle|non-progress|invalid end" pan.log | sed 's/^/       /' || true
	# shellcheck disable=SC2086
	spin -t $defs "$file" 2>/dev/null | sed -n 's/^ *EV /       /p' | tail -25
	[ "$expect" != ok ]
}

if [ "${1:-}" = --one ]; then
	shift
	one "$@"
	exit
fi

command -v spin >/dev/null || { echo "model: spin not found; run scripts/setup.sh (apt-get install spin)" >&2; exit 1; }
command -v gcc >/dev/null || { echo "model: gcc not found; run scripts/setup.sh" >&2; exit 1; }

want=("$@")
list="$out/runs"
grep -v '^\s*#' "${RUNS:-$here/runs.txt}" | grep -v '^\s*$' | while IFS='|' read -r name file expect kind defs _; do
	name="$(echo "$name" | xargs)"
	if [ "${#want[@]}" -gt 0 ] && ! printf '%s\n' "${want[@]}" | grep -qx "$name"; then
		continue
	fi
	printf '%s\0%s\0%s\0%s\0%s\0' "$name" "$(echo "$file" | xargs)" "$(echo "$expect" | xargs)" "$(echo "$kind" | xargs)" "$(echo "$defs" | xargs)"
done >"$list"

start=$(date +%s)
status=0
xargs -0 -n5 -P "$jobs" "$0" --one <"$list" 2>&1 | tee "$out/results" || status=1
n=$(grep -c '^ok ' "$out/results" || true)
f=$(grep -c '^FAIL ' "$out/results" || true)
echo "model: $n as expected, $f not, in $(($(date +%s) - start))s (logs: $out)"
[ "$status" = 0 ] && [ "$f" = 0 ]
