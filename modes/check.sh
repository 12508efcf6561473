# help: the test suite; last line: N passed, N failed, N skipped
# make check: the series' kselftests, a short stress, fault injection and
# fuzzing on the kernel that KERNEL and CONFIG name; on the patched base
# kernel also the boot-time cases and rfp-compat with the syscall refused,
# and with KERNELS=all (the default) the CONFIG_REMAP_FILE_PAGES=n kernel
# and the differential run against stock; then the host's checks.
needs user32
kselftests() { # [kselftest args]: the 64- and 32-bit binaries (those that
	# ARCH's kernel runs), from the ext4 disk
	local b
	for b in $(user_bits); do
		# The disk variant runs in the current directory.
		test_cmd "remap_file_pages_$b" "cd /mnt/disk && /tests/remap_file_pages_$b $*"
	done
}

# rfp-checks (tools/): what left the kselftest, against mmap() itself, and
# the reporting; with a trace instance of its own for the tracepoint case
# and shmem THP at "advise" for the THP case, both put back after.
checks() {
	test_cmd rfp_checks "cd /mnt/disk
i=/sys/kernel/tracing/instances/rfp-checks
t=/sys/kernel/mm/transparent_hugepage/shmem_enabled
old=\$(sed -n 's/.*\\[\\(.*\\)\\].*/\\1/p' \$t 2>/dev/null)
mkdir \$i || exit 1
[ -z \"\$old\" ] || echo advise >\$t
REMAP_FILE_PAGES_TRACE=\$i rfp-checks
rc=\$?
rmdir \$i
[ -z \"\$old\" ] || echo \$old >\$t
exit \$rc"
}

guest main "$KERNEL" "$CONFIG"
# rfp_checks first: its named_at_most_once case can only fail while the
# log's rate limit has room, which the kselftests' processes use up.
checks
kselftests
# The kselftest's runner script with -d: the sysctl at each value, put back.
test_cmd remap_file_pages_sh "cd /mnt/disk && exec /tests/remap_file_pages.sh -d"
test_cmd killed "rfp-ktap killed /tests/remap_file_pages_$(user_bits | head -n 1) 20000 100000 300000 700000 1500000 3000000"
test_cmd stress "rfp-ktap stress ${STRESS_SECONDS:-10} $STRESS_PROCS $STRESS_THREADS"
test_cmd faults "rfp-ktap faults /dev/shm"
test_cmd fuzz "rfp-ktap fuzz 5000 1"

if [ "$KERNEL-$CONFIG" = patched-base ]; then
	# The syscall refused from the command line, and (KERNELS=all) a
	# kernel without it and the stock kernel of the differential run.
	# The kselftest tests what the value it finds promises: every case
	# runs (those of the emulation skip where it is off).
	guest cmdline-off patched base --append sysctl.vm.remap_file_pages=0
	checks
	kselftests
	if [ "$KERNELS" = all ]; then
		guest norfp patched norfp
		kselftests
		. "$TOP/modes/diff.sh"
	fi
	. "$TOP/modes/compat.sh"
fi

# The host's checks, the same for every ARCH: make check runs them with
# the host's own (NATIVE=1 in config/arch/).  The series' style does not
# depend on the kernel's config either: CONFIG=base runs it.  The harness's own
# promises (scripts/selftest-harness.sh) run with every config, which
# adds what its kernel can show (CI runs make check, then CONFIG=debug).
checkpatch_step() { bash "$TOP/scripts/patches.sh" checkpatch; }
harness_step() { bash "$TOP/scripts/selftest-harness.sh"; }
if [ "$NATIVE" = 1 ]; then
	if [ "$CONFIG" = base ]; then
		needs checkpatch
		host_step checkpatch checkpatch_step
	fi
	host_step harness harness_step
fi
