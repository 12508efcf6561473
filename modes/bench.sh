# make bench: rfp-bench on the stock and on the patched kernel of CONFIG,
# each booted under -icount shift=0,sleep=off (the guest clock counts guest
# instructions: runs agree within about 1%, where TCG's wall time swings by
# a third), then one table of both (bench.json and a plot in BENCH_OUT);
# and rfp-bench under rfp-compat on the patched kernel with the syscall
# refused, against the kernel's own remap.
case "$REPEATS" in
'' | *[!0-9]*) die "REPEATS must be a number from 1 to 32 (got '$REPEATS')" ;;
esac
[ "$REPEATS" -ge 1 ] && [ "$REPEATS" -le 32 ] ||
	die "REPEATS must be a number from 1 to 32 (got '$REPEATS')"
# 60 Ki VMAs for the scaling scenario, plus the windows', fit under the
# default vm.max_map_count (65530).
for k in stock patched; do
	guest "bench-$k" "$k" "$CONFIG" --icount
	test_cmd rfp-bench "rfp-ktap bench $REPEATS"
done
# rfp-compat's emulation, on the patched kernel with the syscall refused.
# Not the mlocked scenarios: in a process that locked memory the shim
# takes its slow path, a read of /proc/self/smaps a call, which over the
# 4096 VMAs of a window did not end in 5 minutes (README, "What it costs").
guest bench-compat patched "$CONFIG" --icount \
	--append sysctl.vm.remap_file_pages=0 --cpio "$US/compat.cpio"
test_cmd rfp-bench "rfp-ktap bench $REPEATS /compat/rfp-compat -q /compat/rfp-bench -x mlock-"
host_step report bench_report
