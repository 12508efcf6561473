#!/bin/bash
# make run / make check / make shell: build what is out of date, boot the
# guest and run the job.  Usage: run.sh run|check|shell
. "$(dirname "$0")/lib.sh"
check_kernel_var
mode=${1:?usage: run.sh run|check|shell}

# Check PROG before spending minutes on a build.
if [ "$mode" = run ] && [ -n "${PROG:-}" ]; then
	case "$PROG" in
	/*) ;;
	*) die "PROG must be an absolute path (got '$PROG')" ;;
	esac
	[ -f "$PROG" ] || die "PROG=$PROG does not exist"
	[ -x "$PROG" ] || die "PROG=$PROG is not executable"
	readelf -h "$PROG" >/dev/null 2>&1 || die "PROG=$PROG is not an ELF program"
	if readelf -l "$PROG" 2>/dev/null | grep -q 'INTERP'; then
		die "PROG=$PROG is dynamically linked; the guest has no libraries: build it with -static"
	fi
fi

bash "$TOP/scripts/deps.sh"
bash "$TOP/scripts/build.sh"
bash "$TOP/scripts/userspace.sh"

RUN=${RFP_CACHE}/runs/${KERNEL}-${CONFIG}
mkdir -p "$RUN"
job=$RUN/$mode.job

case "$mode" in
shell)
	exec bash "$TOP/scripts/boot.sh" --shell
	;;
run)
	if [ -n "${PROG:-}" ]; then
		# ARGS is split by the guest's shell, as a user typed it.
		printf '/prog %s\n' "${ARGS:-}" >"$job"
		exec bash "$TOP/scripts/boot.sh" "$job" "$PROG"
	fi
	cat >"$job" <<'JOB'
echo "# $(uname -r): the remap_file_pages() demo"
rfp-demo /dev/shm
rc=$?
echo
echo "# what the kernel said about it:"
dmesg | grep -i 'remap_file_pages' | sed 's/^/    /'
exit $rc
JOB
	exec bash "$TOP/scripts/boot.sh" "$job"
	;;
check)
	cat >"$job" <<'JOB'
echo "# $(uname -r) $(cat /proc/cmdline)"
# The kselftest finds its disk filesystem here (guest/init mounts it).
export RFP_DISK_DIR=/mnt/disk
for t in /tests/*; do
	echo "# rfp-test-start: ${t##*/}"
	"$t"
	echo "# rfp-test-exit: ${t##*/} $?"
done
JOB
	rc=0
	bash "$TOP/scripts/boot.sh" "$job" || rc=$?

	# Host-side checks, in TAP too: the series' style, and the harness's
	# promise that 'make run PROG=' returns the program's exit status.
	step "host checks: checkpatch --strict, make run PROG= exit status"
	{
		echo "# rfp-test-start: host"
		bash "$TOP/scripts/patches.sh" checkpatch || true
		bash "$TOP/scripts/selftest-harness.sh" || true
		echo "# rfp-test-exit: host 0"
	} | tee "$RUN/host.log"
	step_done
	exec bash "$TOP/scripts/summary.sh" "$rc" "$RUN/out.log" "$RUN/host.log"
	;;
*)
	die "unknown mode '$mode'"
	;;
esac
