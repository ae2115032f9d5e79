#!/bin/sh
# The quick start's report leaves the repository's files alone: scripts/report.sh without
# --update-docs writes into <build>/report, and nothing under docs/results is written (not even
# rewritten with the same bytes, which would still show on a GPU host, where the measurements
# differ from run to run). With --no-measure: on a GPU host the report would otherwise run every
# benchmark first (on 4 x H200 the test was still measuring when the suite's 10 minutes ran out);
# the measurements go to the same place as the re-rendered report.
#   usage: report_leaves_the_tree.sh <source dir> <build dir>
src=$1
build=$2
cd "$src" || exit 1
# The report measures the cases' code complexity with pmccabe (scripts/setup.sh installs it);
# hosts without it (the GPU hosts have no apt) skip, as the report's own tests do.
if ! command -v pmccabe >/dev/null 2>&1; then
  echo "skipped=1: needs pmccabe (scripts/setup.sh installs it)"
  exit 0
fi
stamp="$build/report_leaves_the_tree.stamp"
mkdir -p "$build" && : >"$stamp" || exit 1
sleep 1  # file times have a resolution of a second on some file systems
CUSH_BUILD_DIR="$build" bash scripts/report.sh --no-measure || { echo "report.sh failed"; exit 1; }
written=$(find docs/results -newer "$stamp" -type f)
rm -f "$stamp"
if [ -n "$written" ]; then
  echo "scripts/report.sh wrote into docs/results:"
  echo "$written"
  exit 1
fi
[ -f "$build/report/summary.json" ] || { echo "no $build/report/summary.json"; exit 1; }
echo "nothing under docs/results was written; the report is in $build/report"
