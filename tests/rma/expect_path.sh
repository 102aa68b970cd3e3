#!/bin/sh
# expect_path.sh [+PATTERN | -PATTERN]... -- COMMAND...: run COMMAND (a wharfrun
# job with WHARF_REPORT=channels), show its output, and fail unless it exits 0,
# every +PATTERN appears in the output and no -PATTERN does (grep -E).
pats=
while [ $# -gt 0 ] && [ "$1" != "--" ]; do pats="$pats
$1"; shift; done
shift
out=$("$@" 2>&1); rc=$?
printf '%s\n' "$out"
[ $rc -eq 0 ] || { echo "expect_path: command exited $rc"; exit 1; }
printf '%s\n' "$pats" | while IFS= read -r p; do
  [ -n "$p" ] || continue
  want=${p%"${p#?}"}; re=${p#?}
  if printf '%s\n' "$out" | grep -Eq -- "$re"; then found=1; else found=0; fi
  if [ "$want" = "+" ] && [ $found -eq 0 ]; then echo "expect_path: no \"$re\" in the output"; exit 1; fi
  if [ "$want" = "-" ] && [ $found -eq 1 ]; then echo "expect_path: \"$re\" in the output"; exit 1; fi
done || exit 1
echo "expect_path: ok"
