#!/bin/bash
# Check the harness itself: 'make run PROG=' must return the program's
# exit status.  Prints TAP lines.
. "$(dirname "$0")/lib.sh"
check_kernel_var

dir=$RFP_CACHE/userspace/harness
mkdir -p "$dir"
cat >"$dir/exit-with.c" <<'C'
#include <stdlib.h>
int main(int argc, char **argv)
{
	return argc > 1 ? atoi(argv[1]) : 0;
}
C
gcc -static -O2 -o "$dir/exit-with" "$dir/exit-with.c"

for want in 0 7; do
	rc=0
	printf '/prog %s\n' "$want" >"$dir/job"
	RFP_RUN=$dir/run bash "$TOP/scripts/boot.sh" "$dir/job" "$dir/exit-with" \
		>"$dir/boot.log" 2>&1 || rc=$?
	if [ "$rc" = "$want" ]; then
		echo "ok - harness: make run PROG=exit-with ARGS=$want exits $want"
	else
		echo "not ok - harness: make run PROG=exit-with ARGS=$want exited $rc"
		tail -n 5 "$dir/boot.log" | sed 's/^/    /'
	fi
done
