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
