# The host's part of the modes: functions that modes/*.sh name, and that
# print TAP result lines.  Sourced by scripts/run.sh (RUN, CONFIG, TOP).
# shellcheck shell=bash

# The series' style, tools/testing/vma, and the harness's own promises.
host_checks() {
	local rc=0
	bash "$TOP/scripts/patches.sh" checkpatch || rc=1
	if [ "$KERNEL" = patched ]; then
		bash "$TOP/scripts/vma-tests.sh" || rc=1
	fi
	bash "$TOP/scripts/selftest-harness.sh" || rc=1
	return "$rc"
}

# The traces of the diff-stock and diff-patched guests (modes/diff.sh),
# one file a seed and directory (seed-1-shm.txt...), copied out of the
# /traces directory of the guest's ext4 image into DIR.
unpack_traces() { # GUEST DIR
	rm -rf "$2" "$2.dump"
	mkdir -p "$2.dump"
	debugfs -R "rdump /traces $2.dump" "$RUN/$1/disk.img" >/dev/null 2>&1 || true
	mv "$2.dump/traces" "$2" 2>/dev/null || mkdir -p "$2"
	rm -rf "$2.dump"
}

# Each trace of the patched kernel must be the stock kernel's, and both
# must have run to their end.
diff_compare() {
	local s d a b what rc=0
	unpack_traces diff-stock "$RUN/traces/stock"
	unpack_traces diff-patched "$RUN/traces/patched"
	for d in $DIFF_DIRS; do
		for s in $SEEDS; do
			a=$RUN/traces/stock/seed-$s-${d##*/}.txt
			b=$RUN/traces/patched/seed-$s-${d##*/}.txt
			what="differential: seed $s on $d"
			if ! grep -qs "^# rfp-diff: seed $s steps [0-9]* done\$" "$a"; then
				echo "not ok - $what: the stock kernel's trace is missing or cut short ($a)"
			elif ! grep -qs "^# rfp-diff: seed $s steps [0-9]* done\$" "$b"; then
				echo "not ok - $what: the patched kernel's trace is missing or cut short ($b)"
			elif cmp -s "$a" "$b"; then
				echo "ok - $what matches stock"
				continue
			else
				echo "not ok - $what differs from stock"
			fi
			rc=1
			if [ -s "$a" ] && [ -s "$b" ]; then
				{ diff -u --label "stock $a" --label "patched $b" "$a" "$b" || true; } |
					head -n 40 | sed 's/^/# /'
			fi
		done
	done
	return "$rc"
}

# Trinity, Debian's, dynamically linked: its libraries go in an archive of
# their own.  Prints the archive's path.
trinity_cpio() {
	local f
	command -v trinity >/dev/null || die "trinity is not installed (make deps)"
	{
		echo "/usr/bin/trinity $(command -v trinity)"
		for f in $(ldd "$(command -v trinity)" | grep -o '/[^ ]*'); do
			echo "$f $f"
		done
	} | bash "$TOP/scripts/cpio.sh" "$RFP_CACHE/userspace/trinity.cpio"
	echo "$RFP_CACHE/userspace/trinity.cpio"
}
