#!/bin/bash
# Boot a kernel in QEMU with a job, and judge the run.
#
# Usage: boot.sh --obj KBUILD_DIR --run DIR [options] JOB [PROG]
#        boot.sh --obj KBUILD_DIR --run DIR [options] --shell
#
#   --obj DIR        the kernel's build directory (its image and .config),
#                    for ARCH: config/arch/ARCH.sh says how to boot it
#   --run DIR        where the run's files and logs go
#   --cpio FILE      one more initramfs archive (repeatable)
#   --append ARGS    more kernel command line, after BOOTARGS
#   --timeout S      the guest is stopped after S seconds (default: TIMEOUT)
#   --accel A        kvm, tcg, or auto: KVM if a probe boot works
#                    (default: ACCEL)
#   --icount         -icount shift=0,sleep=off (TCG): the guest clock
#                    counts guest instructions (default: ICOUNT=1)
#   --mem SIZE, --smp N                     (default: MEM, SMP)
#   --qemu BIN       the QEMU to run (default: ARCH's)
#   --kvm-dev PATH   the KVM device to probe (default /dev/kvm)
#   --accel-cache F  where the probe's answer is kept (default
#                    $RFP_CACHE/accel-ARCH; delete it to probe again)
#
# The job runs as a shell script under the guest's /init.  Its output comes
# on a port of its own ($RUN/out.log, printed here as it comes), the
# kernel log on the console ($RUN/console.log), and the job's exit status
# on a third port ($RUN/status): ARCH's qemu_ports() says which.  Exit status: the job's, or 1 when
# the kernel reported a problem, the guest hung or timed out, or it ended
# before the job did (then the kernel log's tail is printed).
. "$(dirname "$0")/lib.sh"

# The settings (TIMEOUT, ACCEL, ICOUNT, MEM, SMP, BOOTARGS: the Makefile's,
# checked by lib.sh) are this boot's unless an option says otherwise.
OBJ= RUN= QEMU_BIN=$QEMU_SYSTEM KVM_DEV=/dev/kvm ACCEL_CACHE=$RFP_CACHE/accel-$ARCH
CPIOS=() SHELL_MODE=0
while [ $# -gt 0 ]; do
	case "$1" in
	--obj) OBJ=$2; shift 2 ;;
	--run) RUN=$2; shift 2 ;;
	--cpio) CPIOS+=("$2"); shift 2 ;;
	--append) BOOTARGS="$BOOTARGS $2"; shift 2 ;;
	--timeout) TIMEOUT=$2; shift 2 ;;
	--accel) ACCEL=$2; shift 2 ;;
	--icount) ICOUNT=1; shift ;;
	--mem) MEM=$2; shift 2 ;;
	--smp) SMP=$2; shift 2 ;;
	--qemu) QEMU_BIN=$2; shift 2 ;;
	--kvm-dev) KVM_DEV=$2; shift 2 ;;
	--accel-cache) ACCEL_CACHE=$2; shift 2 ;;
	--shell) SHELL_MODE=1; shift ;;
	--) shift; break ;;
	-*) die "boot.sh: unknown option '$1'" ;;
	*) break ;;
	esac
done
[ -n "$OBJ" ] && [ -n "$RUN" ] || die "usage: boot.sh --obj KBUILD_DIR --run DIR [options] JOB [PROG] (or --shell)"
case "$TIMEOUT" in '' | *[!0-9]*) die "TIMEOUT (--timeout) wants seconds (got '$TIMEOUT')" ;; esac
case "$ACCEL" in auto | kvm | tcg) ;; *) die "ACCEL (--accel): use kvm, tcg or auto (got '$ACCEL')" ;; esac
mkdir -p "$RUN"

# The kernel, its config and release, copied into the run under the build
# directory's lock (shared: boots copy together, a build of this kernel
# waits for them and they for it; scripts/build.sh), so that a rebuild
# during the boot cannot change what it boots.
lock "$(obj_lock "$OBJ")" "copying the kernel of $OBJ to boot it" -s
[ -f "$OBJ/$KIMAGE" ] || die "no kernel at $OBJ/$KIMAGE: build it first (make kernel ARCH=$ARCH)"
cp "$OBJ/$KIMAGE" "$RUN/kernel"
cp "$OBJ/.config" "$RUN/kernel.config"
KRELEASE=$(cat "$OBJ/include/config/kernel.release")
unlock "$(obj_lock "$OBJ")"
KERNEL_IMAGE=$RUN/kernel

# The archives, the same way under the user space's lock
# (scripts/userspace.sh), held until this boot's initramfs is made.
lock "$US_LOCK" "copying the archives of $US to boot them" -s
[ -f "$US/base.cpio" ] || die "no initramfs at $US/base.cpio (scripts/userspace.sh)"
# An archive of the user space (base.cpio, compat.cpio) goes with its
# 32-bit programs' (base32.cpio, compat32.cpio) when the mode built them
# (USER32=1: scripts/run.sh, needs user32; scripts/userspace.sh).
with32() { # ARCHIVE...
	local a
	for a in "$@"; do
		echo "$a"
		case "$a" in "$US"/*.cpio) ;; *) continue ;; esac
		[ "${USER32:-0}" = 1 ] && [ -f "${a%.cpio}32.cpio" ] || continue
		echo "${a%.cpio}32.cpio"
	done
}
mapfile -t base < <(with32 "$US/base.cpio")
mapfile -t extra < <(with32 ${CPIOS[@]+"${CPIOS[@]}"})
cat "${base[@]}" >"$RUN/base.cpio"
cat ${extra[@]+"${extra[@]}"} </dev/null >"$RUN/extra.cpio"

# An initramfs for one boot in DIR: the base archive, then one holding /job
# (and /prog) and the kernel's config where tests look for it, then the
# extra ones; the kernel unpacks concatenated archives one after another.
make_initrd() { # dir job [prog]
	local dir=$1
	{
		echo "/job $2"
		echo "/boot/config-$KRELEASE $RUN/kernel.config"
		[ -z "${3:-}" ] || echo "/prog $3"
	} | bash "$TOP/scripts/cpio.sh" "$dir/job.cpio"
	cat "$RUN/base.cpio" "$dir/job.cpio" "$RUN/extra.cpio" >"$dir/initrd.cpio"
}

# A fresh ext4 image each boot, so that every run starts from the same disk.
make_disk() { # dir
	rm -f "$1/disk.img"
	truncate -s 256M "$1/disk.img"
	mkfs.ext4 -q -F -L rfp "$1/disk.img"
}

# QEMU for a boot from DIR: console, job output and exit status on three
# serial ports, in files of DIR.
qemu_cmd() { # dir accel-args...
	local dir=$1
	shift
	QEMU=("$QEMU_BIN" ${QEMU_MACHINE[@]+"${QEMU_MACHINE[@]}"} "$@"
		-smp "$SMP" -m "$MEM" -nodefaults
		-display none -no-reboot -kernel "$KERNEL_IMAGE" -initrd "$dir/initrd.cpio"
		-drive "file=$dir/disk.img,if=none,id=disk,format=raw"
		-device "$QEMU_DISK,drive=disk")
	[ "$ICOUNT" != 1 ] || QEMU+=(-icount shift=0,sleep=off)
}
serial_files() { # dir
	qemu_ports "$1/console.log" "$1/out.log" "$1/status"
	SERIALS=("${PORTS[@]}")
}

# /init writes the job's output and exit status where rfp.out= and
# rfp.status= say.
PORTS_ARGS="rfp.out=$GUEST_OUT rfp.status=$GUEST_STATUS"
APPEND="console=$CONSOLE loglevel=7 panic=-1 oops=panic $PORTS_ARGS${BOOTARGS:+ $BOOTARGS}"

# KVM when it really works: a writable device is not enough here (guests
# abort or hang), so boot a job that only exits, in a directory of its
# own, and look for its exit status.  The answer is kept in ACCEL_CACHE.
choose_accel() {
	local probe=$RUN/kvm-probe
	ACCEL_USED=$ACCEL
	# One probe at a time; a boot that waited for it takes its answer.
	[ "$ACCEL" != auto ] || [ "$ICOUNT" = 1 ] || [ -f "$ACCEL_CACHE" ] ||
		lock "$ACCEL_CACHE.lock" "probing KVM"
	if [ "$ACCEL" != auto ]; then
		:
	elif [ "$ICOUNT" = 1 ]; then
		ACCEL_USED=tcg	# -icount is a TCG feature
	elif [ -f "$ACCEL_CACHE" ]; then
		ACCEL_USED=$(cat "$ACCEL_CACHE")
	elif [ "$(uname -m)" != "$KVM_HOST" ] || [ ! -w "$KVM_DEV" ]; then
		ACCEL_USED=tcg
		echo tcg >"$ACCEL_CACHE"
	else
		step "probing KVM (a guest that aborts or hangs means TCG)"
		rm -rf "$probe"
		mkdir -p "$probe"
		echo 'exit 0' >"$probe/probe.job"
		make_initrd "$probe" "$probe/probe.job"
		make_disk "$probe"
		qemu_cmd "$probe" -accel kvm -cpu host
		serial_files "$probe"
		ACCEL_USED=tcg
		# In a subshell of its own, whose report of a QEMU that aborts
		# ("Aborted ...") goes to the log with QEMU's words.
		if (timeout -k 5 30 "${QEMU[@]}" -append "$APPEND" "${SERIALS[@]}"; exit $?) \
			>"$probe/qemu.log" 2>&1 && [ "$(tr -d '\r\n' <"$probe/status")" = 0 ]; then
			ACCEL_USED=kvm
		fi
		note "using $ACCEL_USED ($(head -c 200 "$probe/qemu.log" | tr '\n' ' '))"
		echo "$ACCEL_USED" >"$ACCEL_CACHE"
		step_done
	fi
	case "$ACCEL_USED" in
	kvm) ACCEL_ARGS=(-accel kvm -cpu host) ;;
	tcg) ACCEL_ARGS=(-accel tcg -cpu "$QEMU_CPU") ;;
	*) die "$ACCEL_CACHE says '$ACCEL_USED': delete it to probe again" ;;
	esac
	[ -z "${LOCK_FD[$ACCEL_CACHE.lock]:-}" ] || unlock "$ACCEL_CACHE.lock"
}

# Lines of a kernel log that mean the kernel is not well.
# Not a bare 'lockdep': a PROVE_LOCKING kernel says 'RCU lockdep checking is
# enabled' at boot; lockdep's reports begin with WARNING: or BUG: anyway.
REPORT_RE='Kernel panic|BUG:|WARNING:|Oops|general protection fault|KASAN|KFENCE|UBSAN|possible circular locking|possible recursive locking|inconsistent lock state|DEBUG_LOCKS_WARN_ON|INFO: task .* blocked|INFO: rcu|soft lockup|hard LOCKUP|Call Trace:|list_(add|del) corruption|kernel BUG'

# The accelerator first: its probe boots from a directory of its own, and
# leaves this run's files alone.
choose_accel

if [ "$SHELL_MODE" = 1 ]; then
	echo ': unused' >"$RUN/shell.job"
	make_initrd "$RUN" "$RUN/shell.job"
	unlock "$US_LOCK"
	make_disk "$RUN"
	qemu_cmd "$RUN" "${ACCEL_ARGS[@]}"
	echo "==> booting $OBJ ($ACCEL_USED) with a shell on this terminal"
	exec "${QEMU[@]}" -append "console=$CONSOLE quiet panic=-1 rfp.shell${BOOTARGS:+ $BOOTARGS}" \
		-serial mon:stdio
fi

job=${1:?usage: boot.sh --obj DIR --run DIR [options] JOB [PROG]}
prog=${2:-}
make_initrd "$RUN" "$job" "$prog"
unlock "$US_LOCK"
make_disk "$RUN"
qemu_cmd "$RUN" "${ACCEL_ARGS[@]}"
serial_files "$RUN"

echo "==> booting ${OBJ##*/} in QEMU ($ACCEL_USED$([ "$ICOUNT" != 1 ] || echo ', icount'); timeout ${TIMEOUT}s; logs in $RUN)"
: >"$RUN/out.log"
: >"$RUN/console.log"
: >"$RUN/status"
t0=$(date +%s)
timeout -k 10 "$TIMEOUT" "${QEMU[@]}" -append "$APPEND" "${SERIALS[@]}" \
	>"$RUN/qemu.log" 2>&1 &
qpid=$!
# Show the job's output as it comes, without the \r.
tail -n +1 -s 0.2 -f --pid="$qpid" "$RUN/out.log" | tr -d '\r' || true
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

rc=$(tr -d '\r' <"$RUN/status" | tail -n 1)
reports=$(tr -d '\r' <"$RUN/console.log" | grep -E "$REPORT_RE" | head -n 5 || true)
if [ -n "$reports" ]; then
	echo "---- kernel reports ----" >&2
	echo "$reports" >&2
	fail "the kernel reported a problem (see $RUN/console.log)"
fi
{ [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; } && fail "the guest did not finish in ${TIMEOUT}s (TIMEOUT=)"
case "$rc" in
'') fail "the guest ended (qemu exit $qrc) before the job finished" ;;
*[!0-9]*) fail "the guest's exit status port says '$rc'" ;;
esac
echo "==> guest finished in ${dt}s, job exit status $rc"
exit "$rc"
