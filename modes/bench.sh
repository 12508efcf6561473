# help: stock against patched, in guest instructions per call
# make bench: rfp-bench on the stock and on the patched kernel of CONFIG,
# each booted under -icount shift=0,sleep=off (the guest clock counts guest
# instructions: runs agree within about 1%, where TCG's wall time swings by
# a third), then one table of both (bench.json and a plot in BENCH_OUT);
# and rfp-bench under rfp-compat on the patched kernel with the syscall
# refused, against the kernel's own remap; and what rfp-compat adds to an
# exec of a program that never remaps.
needs shim plot
case "$REPEATS" in
'' | *[!0-9]*) die "REPEATS must be a number from 1 to 32 (got '$REPEATS')" ;;
esac
[ "$REPEATS" -ge 1 ] && [ "$REPEATS" -le 32 ] ||
	die "REPEATS must be a number from 1 to 32 (got '$REPEATS')"
# stress-ng's remap stressor (config/arch/: COMPAT_PEERS) on the kernel's
# emulation and under rfp-compat; its "nanosecs per page remap" is in
# guest instructions under -icount.
STRESS_NG_BENCH="cd /mnt/disk && /compat/stress-ng --remap 1 --remap-ops 5 --metrics-brief >stress-ng.txt 2>&1; rc=\$?; cat stress-ng.txt; exit \$rc"
peer_stress_ng() { [[ " ${COMPAT_PEERS[*]-} " == *" stress-ng "* ]]; }
# 60 Ki VMAs for the scaling scenario, plus the windows', fit under the
# default vm.max_map_count (65530).
for k in stock patched; do
	guest "bench-$k" "$k" "$CONFIG" --icount \
		$([ $k = patched ] && peer_stress_ng && echo --cpio "$US/compat.cpio")
	test_cmd rfp-bench "rfp-ktap bench $REPEATS"
	if [ $k = patched ] && peer_stress_ng; then
		test_cmd stress-ng "$STRESS_NG_BENCH"
	fi
done
# rfp-compat's emulation, on the patched kernel with the syscall refused.
guest bench-compat patched "$CONFIG" --icount \
	--append sysctl.vm.remap_file_pages=0 --cpio "$US/compat.cpio"
test_cmd rfp-bench "rfp-ktap bench $REPEATS /usr/bin/rfp-compat -q /compat/rfp-bench"
if peer_stress_ng; then
	test_cmd stress-ng "${STRESS_NG_BENCH/\/compat\/stress-ng/\/usr\/bin\/rfp-compat -q \/compat\/stress-ng}"
fi
# fork(), exec() of a dynamically linked program that exits at once, and
# wait(), as a shell's loop of /bin/true: plain, with an empty library
# preloaded (what any preloaded library costs), and under rfp-compat,
# whose library every child of the program loads.
test_cmd exec "cd /mnt/disk && for how in plain empty shim; do
	case \$how in
	plain) set -- ;;
	empty) set -- env LD_PRELOAD=/compat/librfp-empty.so ;;
	shim) set -- /usr/bin/rfp-compat -q ;;
	esac
	out=\$(\"\$@\" /compat/rfp-bench -r $REPEATS -s exec) || exit 1
	echo \"\$how \$out\"
done >exec.txt 2>&1; rc=\$?; cat exec.txt; exit \$rc"
host_step report bench_report

# make bench: both kernels' rfp-bench output side by side.
bench_report() {
	local k
	echo "1..$(peer_stress_ng && echo 3 || echo 2)"
	mkdir -p "$BENCH_OUT"
	for k in stock patched; do
		if ! guest_file "bench-$k" /bench.txt "$BENCH_OUT/$k.txt"; then
			echo "not ok - no rfp-bench output from the $k kernel"
			return 1
		fi
	done
	if ! guest_file bench-compat /bench.txt "$BENCH_OUT/shim.txt"; then
		echo "not ok - no rfp-bench output from rfp-compat"
		return 1
	fi
	python3 "$TOP/scripts/bench-report.py" "$BENCH_OUT/stock.txt" \
		"$BENCH_OUT/patched.txt" "$BENCH_OUT" "$BENCH_OUT/shim.txt" | sed 's/^/# /'
	[ "${PIPESTATUS[0]}" = 0 ] || { echo "not ok - bench-report.py failed"; return 1; }
	echo "ok - the table above, also in $BENCH_OUT/bench.json"
	exec_report || return 1
	peer_stress_ng || return 0
	stress_ng_report
}

# What rfp-compat adds to an exec, and what any preloaded library does.
exec_report() {
	local plain empty shim
	if ! guest_file bench-compat /exec.txt "$BENCH_OUT/exec.txt"; then
		echo "not ok - no exec output from bench-compat"
		return 1
	fi
	read -r plain empty shim < <(for how in plain empty shim; do
		sed -n "s/^$how rfp-bench: name=exec per_call=\([0-9]*\) .*/\1/p" "$BENCH_OUT/exec.txt"
	done | paste -s -d ' ')
	if [ -z "$shim" ]; then
		echo "not ok - exec: a line is missing ($BENCH_OUT/exec.txt)"
		return 1
	fi
	pct() { echo "scale=1; ($1 - ${2:-$plain}) * 100 / ${2:-$plain}" | bc; }
	echo "# exec (fork, exec of a program that exits at once, wait), guest instructions: plain $plain, an empty library preloaded $empty (+$(pct "$empty")%), rfp-compat $shim (+$(pct "$shim")%)"
	# What any preloaded library costs is the floor: the shim's own part
	# is what it adds over it.
	echo "# rfp-compat's own part of an exec: +$(pct "$shim" "$empty")% over the empty library's"
	echo "ok - exec's cost under rfp-compat"
}

# stress-ng --remap on the kernel's emulation and under rfp-compat.
stress_ng_report() {
	local k ns kernel shim
	for k in patched compat; do
		if ! guest_file "bench-$k" /stress-ng.txt "$BENCH_OUT/stress-ng-$k.txt"; then
			echo "not ok - no stress-ng output from bench-$k"
			return 1
		fi
		ns=$(sed -n 's/.* remap  *\([0-9.]*\) nanosecs per page remap.*/\1/p' \
			"$BENCH_OUT/stress-ng-$k.txt")
		if [ -z "$ns" ]; then
			echo "not ok - bench-$k: stress-ng printed no time per remap ($BENCH_OUT/stress-ng-$k.txt)"
			return 1
		fi
		if [ $k = patched ]; then kernel=$ns; else shim=$ns; fi
	done
	echo "# stress-ng --remap, guest instructions per page remap: kernel $kernel, rfp-compat $shim ($(echo "scale=2; $shim / $kernel" | bc)x)"
	echo "ok - stress-ng's cost under rfp-compat"
}
