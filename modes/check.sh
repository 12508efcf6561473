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
		test_cmd "remap_file_pages_$b" "cd /mnt/disk && exec /tests/remap_file_pages_$b $*"
	done
}

guest main "$KERNEL" "$CONFIG"
kselftests
test_cmd stress "rfp-ktap stress ${STRESS_SECONDS:-10} $STRESS_PROCS $STRESS_THREADS"
test_cmd faults "rfp-ktap faults /dev/shm"
test_cmd fuzz "rfp-ktap fuzz 5000 1"

if [ "$KERNEL-$CONFIG" = patched-base ]; then
	# The syscall refused from the command line, and (KERNELS=all) a
	# kernel without it and the stock kernel of the differential run.
	guest cmdline-off patched base --append sysctl.vm.remap_file_pages=0
	kselftests -f knob -t sysctl_boot_value -t syscall_matches_kernel_config
	if [ "$KERNELS" = all ]; then
		guest norfp patched norfp
		kselftests -t syscall_matches_kernel_config
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
