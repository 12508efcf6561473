#!/bin/bash
# make bench: build the stock and the patched kernel of the same CONFIG,
# boot each under -icount shift=0,sleep=off (the guest clock counts guest
# instructions), run bench/rfp-bench.c in it, and print one table with
# both and their ratio.  Also writes the table as JSON and plots the
# scaling scenario; both go to $BENCH_OUT.
. "$(dirname "$0")/lib.sh"
kernel_vars patched "$CONFIG"	# both kernels of CONFIG: check it

case "$REPEATS" in
'' | *[!0-9]*) die "REPEATS must be a number from 1 to 32 (got '$REPEATS')" ;;
esac
[ "$REPEATS" -ge 1 ] && [ "$REPEATS" -le 32 ] ||
	die "REPEATS must be a number from 1 to 32 (got '$REPEATS')"
mkdir -p "$BENCH_OUT"

bash "$TOP/scripts/deps.sh"
for k in stock patched; do
	bash "$TOP/scripts/build.sh" "$k" "$CONFIG"
done
bash "$TOP/scripts/userspace.sh"
user_boot_opts

# 60 Ki VMAs for the scaling scenario, plus the windows', fit under the
# default vm.max_map_count (65530).
for k in stock patched; do
	run=$RFP_CACHE/runs/bench-$k-$CONFIG
	mkdir -p "$run"
	cat >"$run/bench.job" <<JOB
echo "# \$(uname -r), guest instructions per call (median of $REPEATS runs)"
rfp-bench -r $REPEATS -d /mnt/disk
JOB
	bash "$TOP/scripts/boot.sh" --obj "$(kernel_obj "$k" "$CONFIG")" \
		--run "$run" "${BOOT_OPTS[@]}" --icount "$run/bench.job" |
		tee "$BENCH_OUT/$k.txt"
	[ "${PIPESTATUS[0]}" = 0 ] || die "the benchmark failed on the $k kernel"
done

python3 "$TOP/scripts/bench-report.py" "$BENCH_OUT/stock.txt" \
	"$BENCH_OUT/patched.txt" "$BENCH_OUT"
