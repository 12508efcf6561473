# help: rfp-diff traces, stock against patched: must be identical; and on
# help: each kernel a remap against mmap(MAP_FIXED) in its place, with the
# help: watchers' events: the same on patched, on stock only events differ
# help: (SEEDS='1 2 3 4 5 6', STEPS=500 a trace; make check runs it too)
# make diff: rfp-diff, the same seeds on the stock and on the patched
# kernel of CONFIG, and the traces compared on the host: a remap answers
# as the stock kernel's does (README, "What the kernel does").  Then the
# reference that is the rule itself: on each kernel, the same seeds with
# userfaultfd and fanotify events traced, once with the kernel's remaps
# and once with mmap(MAP_FIXED | MAP_SHARED) in their place.
DIFF_DIRS="/dev/shm /mnt/disk"
for k in stock patched; do
	guest "diff-$k" "$k" "$CONFIG"
	test_cmd rfp-diff "rfp-ktap diff $STEPS '$DIFF_DIRS' $SEEDS"
	test_cmd rfp-mref "rfp-ktap mref $STEPS '$DIFF_DIRS' $SEEDS"
done
host_step differential diff_compare
host_step mmap-reference mref_compare

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
	echo "1..$(($(wc -w <<<"$DIFF_DIRS") * $(wc -w <<<"$SEEDS")))"
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

# Each kernel's remaps against mmap() in their place (rfp-diff -e -m).  On
# the patched kernel every trace must be the reference's.  Stock raises no
# userfaultfd unmap event and no fanotify pre-content event for a remap,
# which mmap() raises: its traces may differ in those lines ("event ...")
# only, and must in one trace at least, or the reference could not see
# what the series fixes.
mref_compare() {
	local k s d a b what rc=0 stock_differs=0
	echo "1..$((2 * $(wc -w <<<"$DIFF_DIRS") * $(wc -w <<<"$SEEDS") + 1))"
	for k in stock patched; do
		for d in $DIFF_DIRS; do
			for s in $SEEDS; do
				a=$RUN/traces/$k/seed-$s-${d##*/}-remap.txt
				b=$RUN/traces/$k/seed-$s-${d##*/}-mmap.txt
				what="mmap() reference on $k: seed $s on $d"
				if ! grep -qs "^# rfp-diff: seed $s steps [0-9]* done\$" "$a" ||
					! grep -qs "^# rfp-diff: seed $s steps [0-9]* done\$" "$b"; then
					echo "not ok - $what: a trace is missing or cut short ($a, $b)"
					rc=1
					continue
				fi
				if cmp -s "$a" "$b"; then
					echo "ok - $what: the remaps answer as mmap() does"
					continue
				fi
				if [ "$k" = stock ] && cmp -s <(grep -v '^    event ' "$a") \
					<(grep -v '^    event ' "$b"); then
					echo "ok - $what: differs from mmap() in its events only, as stock does"
					stock_differs=$((stock_differs + 1))
					continue
				fi
				echo "not ok - $what differs from mmap()"
				rc=1
				{ diff -u --label "remap $a" --label "mmap $b" "$a" "$b" || true; } |
					head -n 40 | sed 's/^/# /'
			done
		done
	done
	if [ "$stock_differs" -gt 0 ]; then
		echo "ok - the reference sees stock's missing events in $stock_differs traces"
	else
		echo "not ok - the reference saw no difference on stock: it cannot see what the series fixes"
		rc=1
	fi
	return "$rc"
}
