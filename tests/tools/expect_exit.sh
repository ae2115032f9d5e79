#!/bin/sh
# Runs a command and checks how it ends: its exit status and a piece of its output.
#   usage: expect_exit.sh <status> <text> <command> [args...]
# Passes when the command exits with <status> and its output (stdout and stderr) contains <text>.
# For the checks that bad input is refused with a clear message and a non-zero status.
want=$1
text=$2
shift 2
out=$("$@" 2>&1)
got=$?
printf '%s\n' "$out"
if [ "$got" -ne "$want" ]; then
  echo "expect_exit.sh: exit status $got, expected $want: $*"
  exit 1
fi
case $out in
  *"$text"*) exit 0 ;;
esac
echo "expect_exit.sh: the output does not contain '$text': $*"
exit 1
