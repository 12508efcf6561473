#!/bin/bash
# shim-layers.sh SHIM-DIR: rfp-compat's files form a line (shim/shim.h):
# each shim-*.c uses, of the functions and variables the others define,
# only those of the files listed before it in shim.h.  Compiles each file
# alone and reads its symbols with nm.  TAP: a plan, one result.
set -euo pipefail
dir=${1:?usage: shim-layers.sh SHIM-DIR}
echo "1..1"
mapfile -t order < <(sed -n 's/^ \*   \(shim-[a-z0-9]*\.c\) .*/\1/p' "$dir/shim.h")
listed=$(printf '%s\n' "${order[@]}" | sort)
present=$(cd "$dir" && ls shim-*.c | sort)
if [ "$listed" != "$present" ]; then
	echo "# shim.h lists: ${order[*]}"
	echo "# shim/ has: $(echo $present)"
	echo "not ok 1 - shim.h lists every shim-*.c, once"
	exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
declare -A at=()
for i in "${!order[@]}"; do
	f=${order[i]}
	gcc -O2 -fPIC -pthread -c -o "$tmp/$f.o" "$dir/$f"
	for s in $(nm --defined-only -g "$tmp/$f.o" | awk '{ print $3 }'); do
		at[$s]=$i
	done
done
bad=0
for i in "${!order[@]}"; do
	f=${order[i]}
	for s in $(nm -u "$tmp/$f.o" | awk '{ print $2 }'); do
		j=${at[$s]:-}
		if [ -n "$j" ] && [ "$j" -ge "$i" ]; then
			echo "# $f uses $s, of ${order[j]}, which is not before it"
			bad=1
		fi
	done
done
echo "# from the bottom up: ${order[*]}"
if [ $bad = 0 ]; then
	echo "ok 1 - each file of the shim uses only the files before it in shim.h"
else
	echo "not ok 1 - each file of the shim uses only the files before it in shim.h"
fi
