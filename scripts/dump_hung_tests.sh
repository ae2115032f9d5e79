#!/usr/bin/env bash
# On a GPU host, beside a test run: every 15 s, for each cush test or benchmark process that has
# run longer than SECONDS (default 120) and was not dumped before, writes the host stacks of all
# its threads (cuda-gdb, attached and detached again) to OUT_DIR/stacks-<name>-<pid>.txt. Ends
# when the process that started it ends. A test that hangs then shows where it waits.
#
#   scripts/dump_hung_tests.sh [SECONDS] [OUT_DIR] &
set -u
limit=${1:-120}
dir=${2:-${OUT:-gpu-out}}
mkdir -p "$dir"
parent=$PPID
declare -A dumped
while kill -0 "$parent" 2>/dev/null; do
  while read -r pid secs name; do
    [[ "$name" == test_* || "$name" == bench_* ]] || continue
    ((secs > limit)) || continue
    [ -n "${dumped[$pid]:-}" ] && continue
    dumped[$pid]=1
    out="$dir/stacks-$name-$pid.txt"
    echo "== $name (pid $pid) after ${secs} s: $(tr '\0' ' ' </proc/"$pid"/cmdline 2>/dev/null)" >"$out"
    timeout 60 cuda-gdb -batch -p "$pid" -ex "info threads" -ex "thread apply all bt 25" >>"$out" 2>&1
  done < <(ps -eo pid=,etimes=,comm=)
  sleep 15
done
