#!/bin/bash
# make clean: TREE's runs and user space, of every ARCH, removed while no
# harness command uses them.  It takes every lock there (each user space's
# first, which every command takes before it boots); while one is held it
# names the holder, removes nothing and fails.  The lock files stay, so
# that a command that waits on one goes on waiting on the same file.
. "$(dirname "$0")/lib.sh"
busy=0
while IFS= read -r -d '' f; do
	if ! try_lock "$f" "cleaning $TC"; then
		IFS=$'\t' read -r pid who held <"$f" 2>/dev/null || true
		echo "make clean: ${pid:-?} (${who:-a harness command}) is ${held:-using ${f%.lock}}" >&2
		busy=1
	fi
done < <(
	find "$TC/userspace" -maxdepth 1 -name '*.lock' -print0 2>/dev/null
	find "$TC/runs" -mindepth 2 -maxdepth 2 -name '*.lock' -print0 2>/dev/null
)
[ "$busy" = 0 ] || die "make clean: nothing removed; again when the commands above are done"
for top in "$TC/runs" "$TC/userspace"; do
	[ -d "$top" ] || continue
	find "$top" -mindepth 1 ! -type d ! -name '*.lock' -delete
	find "$top" -mindepth 1 -depth -type d -empty -delete
done
for f in "${!LOCK_FD[@]}"; do
	unlock "$f"
done
