#!/bin/bash
# tools/testing/vma, the kernel's userland tests of mm/vma.c, built from
# the patched tree (or the tree given) and run on the host; a plan of one
# TAP line.
# Usage: vma-tests.sh [DIR]
. "$(dirname "$0")/lib.sh"

dir=${1:-$KTREE}/tools/testing/vma
[ -d "$dir" ] || die "no $dir: run 'make tree' first"
echo "1..1"
log=$(mktemp)
trap 'rm -f "$log"; make -s -C "$dir" clean >/dev/null 2>&1 || true' EXIT
if ! make -s -C "$dir" >"$log" 2>&1; then
	echo "not ok - tools/testing/vma builds"
	sed 's/^/    /' "$log" | tail -20
	exit 1
fi
out=$(cd "$dir" && ./vma 2>&1) || true
line=$(echo "$out" | grep -E '^[0-9]+ tests run, [0-9]+ passed, [0-9]+ failed\.$' || true)
if [ -n "$line" ] && [ "$(echo "$line" | sed 's/.* \([0-9]*\) failed\./\1/')" = 0 ] &&
	[ "${line%% *}" -gt 0 ]; then
	echo "ok - tools/testing/vma: $line"
else
	echo "not ok - tools/testing/vma: ${line:-no summary line}"
	echo "$out" | sed 's/^/    /' | tail -20
	exit 1
fi
