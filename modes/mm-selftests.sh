# help: the tree's mm selftests, stock against patched
# make mm-selftests: the tree's own mm selftests that run in this guest,
# on the stock and on the patched kernel of CONFIG; fails when the patched
# kernel fails a case that the stock one passes.
#
# Those that build statically here and need neither hugetlbfs, THP, KSM,
# userfaultfd nor a module; mremap_test needs 4 GiB.  ASLR is off, so that
# both kernels run them in one address-space layout: with it, mremap_test's
# "40MB Preamble" case fails on about 5% of runs on stock and patched alike
# (6 of 120 each), when its preamble lands on a mapping that
# is_remap_region_valid() did not look at.

# Build TESTS from the patched tree, statically, into an archive of their
# own (MM_CPIO, in /mm); MM_BUILT: those that built.
mm_selftests_cpio() { # TESTS...
	local out=$US/mmtests t
	user_space
	mkdir -p "$out"
	MM_BUILT=()
	MM_UNBUILT=()
	step "building the mm selftests ($*)" >&2
	for t in "$@"; do
		if mm_selftest_make $([ -n "$USER_CC64" ] || echo --32) "$KTREE" "$out" "$out/$t" >"$out/$t.build.log" 2>&1; then
			MM_BUILT+=("$t")
		else
			MM_UNBUILT+=("$t")
			note "$t did not build (log: $out/$t.build.log); left out" >&2
		fi
	done
	step_done >&2
	[ ${#MM_BUILT[@]} -gt 0 ] || die "no mm selftest built"
	for t in "${MM_BUILT[@]}"; do
		echo "/mm/$t $out/$t"
	done | bash "$TOP/scripts/cpio.sh" "$out/mm.cpio"
	MM_CPIO=$out/mm.cpio
}

mm_selftests_cpio mremap_test mremap_dontunmap map_fixed_noreplace \
	map_populate mlock2-tests mlock-random-test on-fault-limit \
	mrelease_test madv_populate mseal_test mdwe_test
for k in stock patched; do
	guest "mm-$k" "$k" "$CONFIG" --mem 4G --cpio "$MM_CPIO"
	for t in "${MM_BUILT[@]}"; do
		test_cmd "$t" "echo 0 >/proc/sys/kernel/randomize_va_space; cd /mm && exec rfp-ktap collect $t ./$t"
	done
done
host_step compare mm_compare

# Each test's results, stock against patched.
mm_compare() {
	echo "1..$((${#MM_BUILT[@]} + ${#MM_UNBUILT[@]}))"
	guest_file mm-stock /collected "$RUN/collected-stock" &&
		guest_file mm-patched /collected "$RUN/collected-patched" ||
		{ echo "not ok - the collected results are missing"; return 1; }
	# Said in the results, not only while building.
	for t in ${MM_UNBUILT[@]+"${MM_UNBUILT[@]}"}; do
		echo "ok - $t # SKIP did not build statically here ($US/mmtests/$t.build.log)"
	done
	python3 "$TOP/scripts/mm-compare.py" "$RUN/collected-stock" "$RUN/collected-patched"
}
