#!/bin/bash
# Boot the kernel chosen by KERNEL/CONFIG in QEMU with a job, and judge the
# run.  Usage: boot.sh JOBSCRIPT [PROG]   (or: boot.sh --shell)
#
# The job runs as a shell script under the guest's /init, its output on
# the second serial port (printed here as it comes); the kernel log goes to
# the first one, kept in $RUN/console.log and scanned for reports.  Exit
# status: the job's, or 1 when the guest panicked, oopsed, reported a bug,
# hung or timed out (then the log's tail is printed).
. "$(dirname "$0")/lib.sh"
check_kernel_var

US=${RFP_CACHE}/userspace
RUN=${RFP_RUN:-${RFP_CACHE}/runs/${KERNEL}-${CONFIG}}
MEM=${MEM:-2G}
SMP=${SMP:-2}
TIMEOUT=${TIMEOUT:-900}
[ -f "$BZIMAGE" ] || die "no kernel at $BZIMAGE: build it first (make kernel)"
[ -f "$US/base.cpio" ] || die "no initramfs at $US/base.cpio (scripts/userspace.sh)"
mkdir -p "$RUN"

# A job cpio holding /job (and /prog), appended to the base initramfs: the
# kernel unpacks concatenated archives one after the other.
make_initrd() { # job [prog]
	local list=$RUN/job.list
	echo "file /job $1 0644 0 0" >"$list"
	# The kernel's config where tests look for it.
	echo "dir /boot 0755 0 0" >>"$list"
	echo "file /boot/config-$(cat "$OBJ/include/config/kernel.release") $OBJ/.config 0644 0 0" >>"$list"
	[ -n "${2:-}" ] && echo "file /prog $2 0755 0 0" >>"$list"
	"$US/bin/gen_init_cpio" "$list" >"$RUN/job.cpio"
	# EXTRA_CPIO: more archives for this run (make fuzz: trinity).
	# shellcheck disable=SC2086
	cat "$US/base.cpio" "$RUN/job.cpio" ${EXTRA_CPIO:-} >"$RUN/initrd.cpio"
}

# A fresh ext4 image each run, so that every run starts from the same disk.
make_disk() {
	rm -f "$RUN/disk.img"
	truncate -s 256M "$RUN/disk.img"
	mkfs.ext4 -q -F -L rfp "$RUN/disk.img"
}

qemu_cmd() { # accel-args...
	QEMU=(qemu-system-x86_64 "$@" -smp "$SMP" -m "$MEM" -nodefaults
		-display none -no-reboot -kernel "$BZIMAGE" -initrd "$RUN/initrd.cpio"
		-drive "file=$RUN/disk.img,if=virtio,format=raw")
	if [ "${ICOUNT:-0}" = 1 ]; then
		QEMU+=(-icount shift=0,sleep=off)
	fi
}

APPEND="console=ttyS0 loglevel=7 panic=-1 oops=panic ${BOOTARGS:-}"

# KVM when it really works: /dev/kvm is not enough here (guests abort or
# hang), so boot this kernel once under KVM and look for the job's end.
# The answer is kept per kernel image; ACCEL=kvm|tcg overrides it.
choose_accel() {
	local cache=$RFP_CACHE/accel
	if [ -n "${ACCEL:-}" ]; then
		:
	elif [ "${ICOUNT:-0}" = 1 ]; then
		ACCEL=tcg	# -icount is a TCG feature
	elif [ -f "$cache" ]; then
		ACCEL=$(cat "$cache")
	elif [ ! -w /dev/kvm ]; then
		ACCEL=tcg
		echo tcg >"$cache"
	else
		step "probing KVM (a guest that aborts or hangs means TCG)"
		echo 'echo probe-ok' >"$RUN/probe.job"
		make_initrd "$RUN/probe.job"
		make_disk
		qemu_cmd -accel kvm -cpu host
		ACCEL=tcg
		if timeout -k 5 30 "${QEMU[@]}" -append "$APPEND" \
			-serial "file:$RUN/probe-console.log" -serial "file:$RUN/probe-out.log" \
			>"$RUN/probe-qemu.log" 2>&1 && grep -q 'RFP-EXIT: 0' "$RUN/probe-out.log"; then
			ACCEL=kvm
		fi
		note "using $ACCEL ($(head -c 200 "$RUN/probe-qemu.log" | tr '\n' ' '))"
		echo "$ACCEL" >"$cache"
		step_done
	fi
	case "$ACCEL" in
	kvm) ACCEL_ARGS=(-accel kvm -cpu host) ;;
	tcg) ACCEL_ARGS=(-accel tcg -cpu max) ;;
	*) die "unknown ACCEL='$ACCEL': use kvm or tcg" ;;
	esac
}

# Lines of a kernel log that mean the kernel is not well.
# Not a bare 'lockdep': a PROVE_LOCKING kernel says 'RCU lockdep checking is
# enabled' at boot; lockdep's reports begin with WARNING: or BUG: anyway.
REPORT_RE='Kernel panic|BUG:|WARNING:|Oops|general protection fault|KASAN|KFENCE|UBSAN|possible circular locking|possible recursive locking|inconsistent lock state|DEBUG_LOCKS_WARN_ON|INFO: task .* blocked|INFO: rcu|soft lockup|hard LOCKUP|Call Trace:|list_(add|del) corruption|kernel BUG'

if [ "${1:-}" = --shell ]; then
	echo ': unused' >"$RUN/shell.job"
	make_initrd "$RUN/shell.job"
	make_disk
	choose_accel
	qemu_cmd "${ACCEL_ARGS[@]}"
	echo "==> booting $KERNEL-$CONFIG ($ACCEL) with a shell on this terminal"
	exec "${QEMU[@]}" -append "console=ttyS0 quiet panic=-1 rfp.shell ${BOOTARGS:-}" \
		-serial mon:stdio
fi

job=${1:?usage: boot.sh JOBSCRIPT [PROG]}
prog=${2:-}
make_initrd "$job" "$prog"
make_disk
choose_accel
qemu_cmd "${ACCEL_ARGS[@]}"

echo "==> booting $KERNEL-$CONFIG kernel in QEMU ($ACCEL${ICOUNT:+, icount}; timeout ${TIMEOUT}s; logs in $RUN)"
: >"$RUN/out.log"
: >"$RUN/console.log"
t0=$(date +%s)
timeout -k 10 "$TIMEOUT" "${QEMU[@]}" -append "$APPEND" \
	-serial "file:$RUN/console.log" -serial "file:$RUN/out.log" \
	>"$RUN/qemu.log" 2>&1 &
qpid=$!
# Show the job's output as it comes, without the marker and the \r.
tail -n +1 -s 0.2 -f --pid="$qpid" "$RUN/out.log" | tr -d '\r' | grep --line-buffered -v '^RFP-EXIT: ' || true
qrc=0
wait "$qpid" || qrc=$?
dt=$(($(date +%s) - t0))

fail() {
	echo "---- last lines of the kernel log ($RUN/console.log) ----" >&2
	tail -n 40 "$RUN/console.log" | tr -d '\r' >&2
	[ -s "$RUN/qemu.log" ] && { echo "---- qemu ----" >&2; tail -n 10 "$RUN/qemu.log" >&2; }
	echo "FAIL: $*" >&2
	exit 1
}

rc=$(tr -d '\r' <"$RUN/out.log" | sed -n 's/^RFP-EXIT: //p' | tail -n 1)
reports=$(tr -d '\r' <"$RUN/console.log" | grep -E "$REPORT_RE" | head -n 5 || true)
if [ -n "$reports" ]; then
	echo "---- kernel reports ----" >&2
	echo "$reports" >&2
	fail "the kernel reported a problem (see $RUN/console.log)"
fi
[ "$qrc" = 124 ] || [ "$qrc" = 137 ] && fail "the guest did not finish in ${TIMEOUT}s (TIMEOUT=)"
[ -n "$rc" ] || fail "the guest ended (qemu exit $qrc) before the job finished"
echo "==> guest finished in ${dt}s, job exit status $rc"
exit "$rc"
