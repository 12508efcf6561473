# help: where a scenario's instructions go, by function, and a
# help: chart (SCENARIO=whole, DEPTH=6; CONFIG=profile kernels)
# make profile SCENARIO=NAME: where the guest instructions of one rfp-bench
# scenario go, function by function, on the stock and on the patched
# kernel (CONFIG=profile: base.config with ftrace's function_graph), each
# booted under -icount; then a table of both and a bar chart per function
# (scripts/profile-report.py) in BENCH_OUT.
needs plot
case "$SCENARIO" in
'' | *[!a-z0-9-]*)
	die "make profile needs SCENARIO=NAME, an rfp-bench scenario (README, \"make bench\"; got '$SCENARIO')" ;;
esac
[ "$FUNCTION_GRAPH" = 1 ] ||
	die "make profile: no function_graph tracer for ARCH=$ARCH (config/arch/$ARCH.sh says why)"
case "$DEPTH" in
[1-9]) ;;
*) die "DEPTH must be a number from 1 to 9 (got '$DEPTH')" ;;
esac
for k in stock patched; do
	guest "profile-$k" "$k" profile --icount
	test_cmd rfp-profile "rfp-ktap profile $SCENARIO $DEPTH"
done
host_step report profile_report

# The two kernels' profiles, side by side (scripts/profile-report.py).
profile_report() {
	local k out=$BENCH_OUT/profile-$SCENARIO
	echo "1..1"
	mkdir -p "$out"
	for k in stock patched; do
		mkdir -p "$out/$k"
		for f in profile.txt profile-plain.txt profile-traced.txt; do
			guest_file "profile-$k" "/$f" "$out/$k/$f" && continue
			echo "not ok - no $f from the $k kernel"
			return 1
		done
	done
	python3 "$TOP/scripts/profile-report.py" "$SCENARIO" "$DEPTH" \
		"$out/stock" "$out/patched" "$out" | sed 's/^/# /'
	[ "${PIPESTATUS[0]}" = 0 ] || { echo "not ok - profile-report.py failed"; return 1; }
	echo "ok - the profile above, also in $out"
}
