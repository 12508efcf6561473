# make check: the series' kselftests, a short stress, fault injection and
# fuzzing on the kernel that KERNEL and CONFIG name; on the patched base
# kernel also the boot-time cases, the differential run against stock and
# rfp-compat with the syscall refused; then the host's checks.
kselftests() { # [kselftest args]: both binaries, from the ext4 disk
	local b
	for b in remap_file_pages_64 remap_file_pages_32; do
		# The disk variant runs in the current directory.
		test_cmd "$b" "cd /mnt/disk && exec /tests/$b $*"
	done
}

guest main "$KERNEL" "$CONFIG"
kselftests
test_cmd stress "rfp-ktap stress ${STRESS_SECONDS:-10} $STRESS_PROCS $STRESS_THREADS"
test_cmd faults "rfp-ktap faults /dev/shm"
test_cmd fuzz "rfp-ktap fuzz 5000 1"

if [ "$KERNEL-$CONFIG" = patched-base ]; then
	# The syscall refused from the command line, and a kernel without it.
	guest cmdline-off patched base --append sysctl.vm.remap_file_pages=0
	kselftests -f knob -t sysctl_boot_value -t syscall_matches_kernel_config
	guest norfp patched norfp
	kselftests -t syscall_matches_kernel_config
	. "$TOP/modes/diff.sh"
	. "$TOP/modes/compat.sh"
fi

host_step host host_checks
