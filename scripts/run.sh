#!/bin/bash
# The driver.  Usage:
#   run.sh MODE                  run modes/MODE.sh (make MODE)
#   run.sh run [PROG [ARGS...]]  boot once, run PROG (default: the demo);
#                                exit status: PROG's
#   run.sh shell                 boot once, with a shell on this terminal
#
# A mode is one file, modes/MODE.sh: "# help:" lines for make help, then
# a declaration in these words (defined below):
#   needs NEED...            Debian packages beyond every target's
#                            (scripts/deps.sh lists them), installed now
#   guest NAME KERNEL CONFIG [boot.sh options...]
#                            a boot, with the tests declared after it
#   test_cmd NAME COMMAND    a test of that guest: a guest shell command
#   host_step NAME FUNCTION  a step on the host after the boots: FUNCTION,
#                            defined in the mode's file, prints TAP, its
#                            plan ("1..N") first
# and the variables of lib.sh (US, RUN, KTREE...) and config/arch/.  The
# driver builds what is out of date, boots each guest with its tests in
# kselftest's runner.sh, runs the host steps, and prints it all as one
# KTAP document (also in runs/MODE/ktap), nested the way runner.sh nests:
# what a test prints goes behind "# ".  scripts/ktap.py judges it and
# prints the closing line.
. "$(dirname "$0")/lib.sh"
# --qemu PATH: a stand-in for QEMU (scripts/selftest-harness.sh).
QEMU_OPT=()
if [ "${1:-}" = --qemu ]; then
	QEMU_OPT=(--qemu "${2:?run.sh: --qemu wants a path}")
	shift 2
fi
mode=${1:?usage: run.sh [--qemu PATH] MODE|shell|run [PROG [ARGS...]] (MODE: a name in modes/, or a file)}
shift
PROG=
PROG_ARGS=()
if [ "$mode" = run ] && [ $# -gt 0 ]; then
	PROG=$1
	shift
	PROG_ARGS=("$@")
elif [ $# -gt 0 ]; then
	die "run.sh $mode takes no arguments (got '$*')"
fi
case "$mode" in
run | shell) ;;
*/*)
	# A mode of a file elsewhere (scripts/selftest-harness.sh).
	[ -f "$mode" ] || die "no mode file '$mode'"
	MODE_FILE=$(cd "$(dirname "$mode")" && pwd)/$(basename "$mode")
	mode=$(basename "$mode" .sh)
	;;
*)
	MODE_FILE=$TOP/modes/$mode.sh
	[ -f "$MODE_FILE" ] || die "no mode '$mode' (modes/: $(cd "$TOP/modes" && ls | sed 's/\.sh$//' | tr '\n' ' '))"
	;;
esac
# Numbers that the tools would read with atoi(): checked here, so that a
# typo cannot make a run that does nothing and passes.
for v in STEPS STRESS_PROCS STRESS_THREADS FUZZ_CALLS FUZZ_SECONDS TIMEOUT; do
	case "${!v}" in
	'' | *[!0-9]* | 0) die "$v must be a positive number (got '${!v}')" ;;
	esac
done
case "$STRESS_SECONDS" in
*[!0-9]* | 0) die "STRESS_SECONDS must be a positive number (got '$STRESS_SECONDS')" ;;
esac
case "$KERNELS" in
all | one) ;;
*) die "KERNELS is all or one (got '$KERNELS')" ;;
esac
[ -n "${SEEDS// /}" ] && [ -z "${SEEDS//[0-9 ]/}" ] ||
	die "SEEDS is a list of numbers (got '$SEEDS')"
check_kernel_var

# Check PROG before spending minutes on a build.
if [ -n "$PROG" ]; then
	case "$PROG" in
	/*) ;;
	*) die "PROG must be an absolute path (got '$PROG')" ;;
	esac
	[ -f "$PROG" ] || die "PROG=$PROG does not exist"
	[ -x "$PROG" ] || die "PROG=$PROG is not executable"
	readelf -h "$PROG" >/dev/null 2>&1 || die "PROG=$PROG is not an ELF program"
	if grep -q 'INTERP' <(readelf -l "$PROG" 2>/dev/null); then
		die "PROG=$PROG is dynamically linked; the guest has no libraries: build it with -static"
	fi
fi

# What every target needs; a mode adds its own (needs, below).
bash "$TOP/scripts/deps.sh"
BOOT_OPTS=(${QEMU_OPT[@]+"${QEMU_OPT[@]}"})

# The guest's user space (scripts/userspace.sh), built for what the mode
# needs: again only when a later 'needs' asked for more.
USER_SPACE_BUILT=
user_space() {
	[ "$USER_SPACE_BUILT" != "${USER32:-0}${SHIM:-0}" ] || return 0
	bash "$TOP/scripts/userspace.sh"
	USER_SPACE_BUILT=${USER32:-0}${SHIM:-0}
}

# make run and make shell: one boot of this kernel.
if [ "$mode" = run ] || [ "$mode" = shell ]; then
	user_space
	bash "$TOP/scripts/build.sh" "$KERNEL" "$CONFIG"
	# The run's directory: runs/ARCH/KERNEL-CONFIG, or while another
	# boot holds it, the first of KERNEL-CONFIG.2, .3... that none holds
	# (the lock goes with boot.sh, exec'd below, to the boot's end).
	RUN=$RUNS/${KERNEL}-${CONFIG}
	n=1
	until try_lock "$RUN.lock" "running $RUN"; do
		n=$((n + 1))
		RUN=$RUNS/${KERNEL}-${CONFIG}.$n
	done
	[ "$n" = 1 ] || note "another boot uses $RUNS/${KERNEL}-${CONFIG}: this one runs in $RUN"
	mkdir -p "$RUN"
	boot=(bash "$TOP/scripts/boot.sh" --obj "$OBJ" --run "$RUN" "${BOOT_OPTS[@]}")
	[ "$mode" = run ] || exec "${boot[@]}" --shell
	job=$RUN/run.job
	if [ -n "$PROG" ]; then
		# Each argument single-quoted for the guest's shell.
		{
			printf '/prog'
			for a in ${PROG_ARGS[@]+"${PROG_ARGS[@]}"}; do
				printf " '%s'" "${a//\'/\'\\\'\'}"
			done
			echo
		} >"$job"
		exec "${boot[@]}" "$job" "$PROG"
	fi
	cat >"$job" <<'JOB'
echo "# $(uname -r): the remap_file_pages() demo"
rfp-demo /dev/shm
rc=$?
echo
echo "# what the kernel said about it:"
if ! dmesg | grep -i 'remap_file_pages' | sed 's/^/    /' | grep .; then
	echo "    nothing: the kernel logged no line about remap_file_pages()"
	[ "$rc" != 0 ] || rc=1
fi
exit $rc
JOB
	exec "${boot[@]}" "$job"
fi

# One run of a mode at a time: its directory is its own.
RUN=$RUNS/$mode
lock "$RUN.lock" "running make $mode"
rm -rf "$RUN"
mkdir -p "$RUN"

# The declaration's words.
GUESTS=()		# guest names, in order
declare -A G_KERNEL G_CONFIG G_OPTS G_TESTS
HOSTS=()		# "name function"

guest() { # NAME KERNEL CONFIG [boot.sh options...]: a boot, with the tests below
	local name=$1
	GUESTS+=("$name")
	G_KERNEL[$name]=$2
	G_CONFIG[$name]=$3
	shift 3
	G_OPTS[$name]=
	[ $# = 0 ] || G_OPTS[$name]=$(printf '%q ' "$@")
	G_TESTS[$name]=
}

test_cmd() { # NAME COMMAND: a test of the last guest, a guest shell command
	local g=${GUESTS[-1]:?test_cmd before any guest}
	mkdir -p "$RUN/$g/tests"
	printf '#!/bin/sh\n%s\n' "$2" >"$RUN/$g/tests/$1"
	chmod +x "$RUN/$g/tests/$1"
	G_TESTS[$g]+="./$1 "
}

host_step() { # NAME FUNCTION: a host step, printing TAP result lines
	HOSTS+=("$1 $2")
}

needs() { # NEED...: Debian packages and programs the mode needs besides
	# every target's (scripts/deps.sh lists them), installed now
	bash "$TOP/scripts/deps.sh" "$@"
	case " $* " in *" user32 "*) export USER32=1 ;; esac
	case " $* " in *" shim "*) export SHIM=1 ;; esac
}

# Copy PATH (a file or a directory) out of GUEST's ext4 image into DEST.
guest_file() { # GUEST PATH DEST
	rm -rf "$3" "$3.dump"
	mkdir -p "$3.dump"
	debugfs -R "rdump $2 $3.dump" "$RUN/$1/disk.img" >/dev/null 2>&1 || true
	mv "$3.dump/${2##*/}" "$3" 2>/dev/null
	local rc=$?
	rm -rf "$3.dump"
	return $rc
}

. "$MODE_FILE"
user_space

# Every kernel the guests need.
declare -A built=()
for g in "${GUESTS[@]}"; do
	k=${G_KERNEL[$g]}-${G_CONFIG[$g]}
	[ -z "${built[$k]:-}" ] || continue
	bash "$TOP/scripts/build.sh" "${G_KERNEL[$g]}" "${G_CONFIG[$g]}"
	built[$k]=1
done

# Boot guest G with its tests under kselftest's runner.sh; print its KTAP
# behind "# ", then its own result line N.
run_guest() { # N G
	local n=$1 g=$2 dir=$RUN/$2 rc=0 opts why
	for t in "$dir"/tests/*; do
		echo "/rfp/$g/${t##*/} $t"
	done | bash "$TOP/scripts/cpio.sh" "$dir/tests.cpio"
	# 7.3's runner.sh leaves the header, the plan and the totals to its
	# caller, as its run_kselftest.sh does them (with ktap_helpers.sh);
	# 6.12's run_many prints the first two itself.
	cat >"$dir/job" <<JOB
echo "# \$(uname -r) \$(cat /proc/cmdline)"
BASE_DIR=/rfp
. /rfp/kselftest/runner.sh
cd /rfp/$g
if command -v ktap_set_plan >/dev/null; then
	ktap_print_header
	ktap_set_plan $(echo ${G_TESTS[$g]} | wc -w)
	run_many ${G_TESTS[$g]}
	ktap_print_totals
else
	run_many ${G_TESTS[$g]}
fi
JOB
	eval "opts=(${G_OPTS[$g]})"
	echo "# $g: ${G_KERNEL[$g]}-${G_CONFIG[$g]} ${opts[*]}"
	bash "$TOP/scripts/boot.sh" --run "$dir" \
		--obj "$(kernel_obj "${G_KERNEL[$g]}" "${G_CONFIG[$g]}")" \
		"${BOOT_OPTS[@]}" --cpio "$dir/tests.cpio" ${opts[@]+"${opts[@]}"} \
		"$dir/job" 2>"$dir/boot.err" | sed -u 's/^/# /' || rc=${PIPESTATUS[0]}
	sed 's/^/# /' "$dir/boot.err"
	# No pipe into grep -q here: under pipefail, grep leaving early
	# would fail the writer with SIGPIPE on a long log.
	if [ "$rc" = 0 ] && ! grep -q '^1\.\.[0-9]' "$dir/out.log"; then
		echo "not ok $n $g # the guest's runner.sh printed no plan"
	elif [ "$rc" = 0 ]; then
		echo "ok $n $g"
	else
		why=$(sed -n 's/^\(FAIL\|error\): //p' "$dir/boot.err" | tail -n 1)
		echo "not ok $n $g # ${why:-boot.sh exit status $rc}"
	fi
}

# Run host step FUNCTION: what it prints, its plan ("1..N") and its
# result lines, behind "# ".  A step must print its plan: scripts/ktap.py
# then fails one that printed fewer results.
run_host() { # N NAME FUNCTION
	local rc=0
	echo "==> host step $2" >&2
	"$3" >"$RUN/$2.tap" 2>&1 || rc=$?
	echo "# $2"
	echo "# TAP version 13"
	sed 's/^/# /' "$RUN/$2.tap"
	if ! grep -qE '^1\.\.[0-9]+' "$RUN/$2.tap"; then
		echo "not ok $1 $2 # the step printed no plan"
	elif [ "$rc" = 0 ]; then
		echo "ok $1 $2"
	else
		echo "not ok $1 $2 # exit status $rc"
	fi
}

{
	echo "TAP version 13"
	echo "1..$((${#GUESTS[@]} + ${#HOSTS[@]}))"
	n=0
	for g in "${GUESTS[@]}"; do
		n=$((n + 1))
		run_guest "$n" "$g"
	done
	for h in ${HOSTS[@]+"${HOSTS[@]}"}; do
		n=$((n + 1))
		run_host "$n" $h
	done
} | tee "$RUN/ktap"
exec python3 "$TOP/scripts/ktap.py" "$RUN/ktap"
