# make bench: rfp-bench on the stock and on the patched kernel of CONFIG,
# each booted under -icount shift=0,sleep=off (the guest clock counts guest
# instructions: runs agree within about 1%, where TCG's wall time swings by
# a third), then one table of both (bench.json and a plot in BENCH_OUT);
# and rfp-bench under rfp-compat on the patched kernel with the syscall
# refused, against the kernel's own remap.
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
test_cmd rfp-bench "rfp-ktap bench $REPEATS /compat/rfp-compat -q /compat/rfp-bench"
if peer_stress_ng; then
	test_cmd stress-ng "${STRESS_NG_BENCH/\/compat\/stress-ng/\/compat\/rfp-compat -q \/compat\/stress-ng}"
fi
host_step report bench_report
