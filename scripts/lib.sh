# Shared helpers for the harness scripts.  Sourced, not run.
# shellcheck shell=bash

set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# The settings are the Makefile's, and so is their list (RFP_SETTINGS):
# the scripts run through make or ./rfp, which pass them all (make help
# lists them).
[ -n "${RFP_SETTINGS:-}" ] || {
	echo "error: the settings are not set: run this through make or ./rfp" >&2
	exit 1
}
for v in $RFP_SETTINGS; do
	[ -n "${!v+set}" ] || {
		echo "error: $v is not set: run this through make or ./rfp" >&2
		exit 1
	}
done
unset v

# The architecture: config/arch/$ARCH.sh says how to build for it and boot
# it.  Each has its own build, user-space and run directories.
[ -f "$TOP/config/arch/$ARCH.sh" ] ||
	{
		echo "error: unknown ARCH='$ARCH': use $(cd "$TOP/config/arch" && ls ./*.sh | sed 's|^\./||; s/\.sh$//' | paste -sd' ' | sed 's/ /, /g')" >&2
		exit 1
	}
# shellcheck source=../config/arch/x86_64.sh
. "$TOP/config/arch/$ARCH.sh"
# Everything an architecture's file must set (x86_64.sh says what each is).
for v in KARCH CROSS_COMPILE KIMAGE QEMU_SYSTEM QEMU_MACHINE QEMU_CPU KVM_HOST \
	QEMU_DISK CONSOLE GUEST_OUT GUEST_STATUS USER_CC64 USER_CC32 SELFTEST_ARCH \
	SELFTEST_ARCH32 BUSYBOX_ARCH USER_SYSROOT_64 USER_LIBS_64 USER_SYSROOT_32 \
	USER_LIBS_32 PACKAGES PACKAGES_32 COMPAT_PEERS NATIVE FUNCTION_GRAPH; do
	declare -p "$v" >/dev/null 2>&1 || {
		echo "error: config/arch/$ARCH.sh does not set $v" >&2
		exit 1
	}
done
declare -F qemu_ports >/dev/null || {
	echo "error: config/arch/$ARCH.sh does not define qemu_ports()" >&2
	exit 1
}
unset v

# The kernel tree: config/tree/$TREE.sh names its Debian source package.
# Each tree has its own series (patches/$TREE/, SERIES_NAMES below) and
# its own directory in the cache (TC), with its kernel trees, builds, user
# space and runs.
[ -f "$TOP/config/tree/$TREE.sh" ] ||
	{
		echo "error: unknown TREE='$TREE': use $(cd "$TOP/config/tree" && ls ./*.sh | sed 's|^\./||; s/\.sh$//' | sort -rV | paste -sd' ' | sed 's/ /, /g')" >&2
		exit 1
	}
# shellcheck source=../config/tree/7.3.sh
. "$TOP/config/tree/$TREE.sh"
PATCHES=$TOP/patches/$TREE	# the series, a directory each (SERIES_NAMES)
TC=$RFP_CACHE/$TREE
if [ -n "$SOURCE_SUITE" ]; then
	TARBALL=$RFP_CACHE/src/$SOURCE_PKG/usr/src/$SOURCE_PKG.tar.xz	# scripts/source.sh
else
	TARBALL=/usr/src/$SOURCE_PKG.tar.xz	# installed by scripts/deps.sh
fi
US=$TC/userspace/$ARCH		# what runs in the guest, and the initramfs
RUNS=$TC/runs/$ARCH		# the runs' files and logs
KTREE=$TC/linux			# the developer's git tree: pristine + series
STOCK=$TC/stock			# git worktree of the pristine commit
BASE_TAG=rfp-base
BRANCH=rfp

# The series of a tree, in the order they apply, as linux-mm would take
# them: the fixes of the stock kernel (for mm-hotfixes and stable), then
# the decommission on top of them.  Each is patches/$TREE/NAME/: its cover
# letter, its patches and its series file (their order).  In the kernel
# tree each ends on a branch of its own, whose description is its cover
# letter's text: rfp-NAME, but the last, which is BRANCH (checked out);
# each starts where the one before it ends, the first at BASE_TAG.
SERIES_NAMES="fixes decommission"

series_branch() { # NAME: the branch that ends series NAME
	if [ "$1" = "${SERIES_NAMES##* }" ]; then
		echo "$BRANCH"
	else
		echo "$BRANCH-$1"
	fi
}

series_base() { # NAME: where series NAME starts
	local s base=$BASE_TAG
	for s in $SERIES_NAMES; do
		[ "$s" != "$1" ] || { echo "$base"; return 0; }
		base=$(series_branch "$s")
	done
	die "unknown series '$1' (the series are: $SERIES_NAMES)"
}

series_patches() { # NAME: the patches of series NAME, in order (its series file)
	[ -f "$PATCHES/$1/series" ] || return 0
	grep -v -e '^#' -e '^[[:space:]]*$' "$PATCHES/$1/series" || true
}

all_patches() { # every patch of the tree, as NAME/FILE under $PATCHES, in order
	local s p
	for s in $SERIES_NAMES; do
		for p in $(series_patches "$s"); do
			echo "$s/$p"
		done
	done
}

die() {
	echo "error: $*" >&2
	exit 1
}

note() {
	echo "    $*"
}

# step "what": print what is starting; step_done: how long it took.
step() {
	STEP_WHAT=$1
	STEP_T0=$(date +%s)
	echo "==> ${STEP_WHAT}"
}

step_done() {
	local dt=$(($(date +%s) - STEP_T0))
	printf '    done in %dm%02ds\n' $((dt / 60)) $((dt % 60))
}

# Run a long command with its output in a log; print a heartbeat every
# 30 s so that a person knows it is alive, and the log's tail on failure.
run_logged() {
	local log=$1
	shift
	local t0 tick pid rc
	t0=$(date +%s)
	"$@" >"$log" 2>&1 &
	pid=$!
	(
		# Its sleep, which outlives the kill below by up to 30s, would
		# hold the caller's locks (lock, below) and its output (a
		# $(...) would wait for it): it lets go of both.
		for fd in ${LOCK_FD[@]+"${LOCK_FD[@]}"}; do
			exec {fd}>&-
		done
		while sleep 30 </dev/null >/dev/null 2>&1; do
			tick=$(($(date +%s) - t0))
			printf '    ... %dm%02ds: %s\n' $((tick / 60)) $((tick % 60)) \
				"$(tail -n 1 "$log" | cut -c1-100)"
		done
	) &
	tick=$!
	rc=0
	wait "$pid" || rc=$?
	kill "$tick" 2>/dev/null || true
	wait "$tick" 2>/dev/null || true
	return "$rc"
}

# SRC, OBJ and KERNEL_IMAGE of kernel KERNEL (patched|stock) built with CONFIG
# (base|debug|norfp|profile); dies on anything else.
kernel_vars() { # KERNEL CONFIG
	case "$1" in
	patched | stock) ;;
	*) die "unknown KERNEL='$1': use KERNEL=patched (default) or KERNEL=stock" ;;
	esac
	case "$2" in
	base | debug | profile) ;;
	norfp) [ "$1" = patched ] ||
		die "CONFIG=norfp needs the series (it turns CONFIG_REMAP_FILE_PAGES off)" ;;
	*) die "unknown CONFIG='$2': use CONFIG=base (default), debug, norfp or profile" ;;
	esac
	KERNEL=$1
	CONFIG=$2
	if [ "$KERNEL" = stock ]; then
		SRC=$STOCK
	else
		SRC=$KTREE
	fi
	OBJ=$(kernel_obj "$KERNEL" "$CONFIG")
	KERNEL_IMAGE=$OBJ/$KIMAGE
}

# The kernel the user's KERNEL and CONFIG name.
check_kernel_var() {
	kernel_vars "$KERNEL" "$CONFIG"
}

# The build directory of a kernel: kernel_obj KERNEL CONFIG.
kernel_obj() {
	echo "$TC/build/$ARCH/$1-$2"
}

# make in DIR's tools/testing/selftests/mm, the way its Makefile builds
# for run_vmtests.sh (linking vm_util.c), for the 64-bit programs of ARCH
# (or with --32 its 32-bit ones), with the patched tree's uapi headers
# (scripts/userspace.sh installs them) and statically: the guest has no
# libraries.  Usage: mm_selftest_make [--32] DIR OUTDIR make-args...
mm_selftest_make() {
	local bits=64
	[ "$1" != --32 ] || { bits=32; shift; }
	local tree=$1 out=$2 sarch cc
	shift 2
	if [ "$bits" = 32 ]; then
		sarch=$SELFTEST_ARCH32 cc=$USER_CC32
	else
		sarch=$SELFTEST_ARCH cc=$USER_CC64
	fi
	make -s -C "$tree/tools/testing/selftests/mm" OUTPUT="$out" \
		ARCH="$sarch" CC="$cc" \
		KHDR_INCLUDES="-isystem $US/usr-$sarch/include" \
		EXTRA_CFLAGS=-static "$@"
}

# The word sizes of the programs this ARCH's kernel runs, 64 first; where
# there are two, the 32-bit ones only when the mode needs them (USER32=1:
# scripts/run.sh, needs user32).
user_bits() {
	[ -z "$USER_CC64" ] || echo 64
	[ -z "$USER_CC32" ] || { [ -n "$USER_CC64" ] && [ "${USER32:-0}" != 1 ]; } || echo 32
}

# The identity commits in the kernel tree are made with: the checkout's.
tree_git() {
	local name email
	name=$(git -C "$TOP" config user.name || echo "rfp harness")
	email=$(git -C "$TOP" config user.email || echo "rfp-harness@localhost")
	git -C "$KTREE" -c user.name="$name" -c user.email="$email" "$@"
}

# Locks on what two harness commands share in the cache (flock(1) from
# util-linux): the kernel trees ($TC/tree.lock), each kernel build
# directory (its name and .lock), the user space ($US.lock), a mode's
# runs and each run directory.  Builders hold a lock alone (-x), readers
# together (-s); a lock is let go when its holder ends, or by unlock.  The
# lock file names its last holder ("PID\tCOMMAND\tWHAT"), so that a waiter
# can say whom it waits for.  RFP_WHO is the command a person typed
# (the Makefile and ./rfp set it).
RFP_WHO=${RFP_WHO:-${0##*/}}
declare -A LOCK_FD=()
lock() { # FILE WHAT [-x|-s]: wait for FILE's lock, saying for whom, and hold it
	local file=$1 what=$2 how=${3:--x} fd pid who held
	mkdir -p "$(dirname "$file")"
	exec {fd}>>"$file"
	if ! flock -n "$how" "$fd"; then
		IFS=$'\t' read -r pid who held <"$file" 2>/dev/null || true
		if [ -n "${pid:-}" ] && kill -0 "$pid" 2>/dev/null; then
			note "waiting for $pid ($who) to finish $held"
		else
			note "waiting for another harness command to let go of $file"
		fi
		flock "$how" "$fd"
	fi
	printf '%s\t%s\t%s\n' "$$" "$RFP_WHO" "$what" >"$file"
	LOCK_FD[$file]=$fd
}

try_lock() { # FILE WHAT: hold FILE's lock (-x) if it is free; else status 1
	local file=$1 fd
	mkdir -p "$(dirname "$file")"
	exec {fd}>>"$file"
	flock -n -x "$fd" || { exec {fd}>&-; return 1; }
	printf '%s\t%s\t%s\n' "$$" "$RFP_WHO" "$2" >"$file"
	LOCK_FD[$file]=$fd
}

unlock() { # FILE: let go of FILE's lock
	local file=$1 fd=${LOCK_FD[$1]:?unlock: $1 is not locked} pid
	IFS=$'\t' read -r pid _ <"$file" 2>/dev/null || true
	[ "${pid:-}" != "$$" ] || : >"$file"
	exec {fd}>&-
	unset "LOCK_FD[$file]"
}

# The lock of a kernel build directory, in it: kernel builds hold it
# alone, boots while they copy the kernel out.
obj_lock() { # OBJ
	echo "$1/.rfp-lock"
}
TREE_LOCK=$TC/tree.lock
US_LOCK=$US.lock
