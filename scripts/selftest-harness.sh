#!/bin/bash
# Check the harness itself, in TAP: that it passes nothing it should fail.
#
#  - './rfp run PROG ARGS', the README's command, exits with PROG's status,
#    and './rfp run' shows the demo and the kernel's line about it;
#  - the KVM probe leaves the run alone: with a QEMU stand-in whose KVM
#    boot aborts, hangs or works, the job that runs is the job asked for,
#    under the accelerator the probe chose;
#  - a run fails when its job printed nothing, when a test binary printed
#    fewer results than its plan, when a test killed by make check's kill
#    test left a setting changed, when fault injection cannot be set up
#    (CONFIG=debug: that case alone), when the kernel panicked, and when
#    the guest hung past its timeout;
#  - the verdict: scripts/ktap.py on nested KTAP documents
#    (scripts/ktap_test.py), and the whole driver with a QEMU stand-in,
#    on a run that passes and one that fails in four ways;
#  - the job's last line is shown when the guest ends right after it;
#  - the installer survives a mirror being synced, says the fix when an
#    install fails, and installs no 32-bit package for make run;
#  - make profile's report takes the tracer's cost out, and refuses a
#    trace whose buffer filled;
#  - an unknown TREE is refused with the list of trees, and a download of
#    7.3's source that fails says what failed and what to do;
#  - two commands at once on one cache: a './rfp run' during a 'make
#    check' that rebuilds the user space, and two builds of one kernel,
#    each get what they asked for, whole; a boot does not wait for the
#    build of another kernel; a 'make clean' during a boot removes
#    nothing.
#
# Runs with the kernel of KERNEL/CONFIG; its files are in runs/harness.
# Prints its plan (the cases below: BASE_CASES with CONFIG=base, the one
# of fault injection with CONFIG=debug) and exits non-zero when a case
# failed.
. "$(dirname "$0")/lib.sh"
BASE_CASES=25
check_kernel_var

dir=$RUNS/harness
rm -rf "$dir"
mkdir -p "$dir"

# Its plan first, its exit status non-zero when a case failed.
if [ "$CONFIG" = base ]; then
	echo "1..$BASE_CASES"
elif [ "$CONFIG" = debug ]; then
	echo "1..1"
else
	echo "1..0 # SKIP nothing of the harness depends on CONFIG=$CONFIG"
	exit 0
fi
failed=0
ok() { echo "ok - harness: $*"; }
not_ok() { # what log
	echo "not ok - harness: $1"
	failed=1
	[ -z "${2:-}" ] || tail -n 5 "$2" | sed 's/^/#   /'
}

# A boot of the kernel under test.  boot_case NAME TIMEOUT [boot.sh options]
# JOB [PROG]
boot_case() {
	local name=$1 timeout=$2
	shift 2
	BOOT_RC=0
	bash "$TOP/scripts/boot.sh" --obj "$OBJ" --run "$dir/run-$name" \
		--timeout "$timeout" "$@" >"$dir/$name.log" 2>&1 ||
		BOOT_RC=$?
}

# A guest run that goes well, whose output the verdict must fail, saying
# WHY.  verdict_fails WHAT WHY JOB [PROG]
verdict_fails() {
	local what=$1 why=$2 name
	name=$(basename "$3" .job)
	shift 2
	boot_case "$name" 300 "$@"
	rc=0
	python3 "$TOP/scripts/ktap.py" "$dir/run-$name/out.log" >"$dir/$name.verdict" 2>&1 || rc=$?
	if [ "$BOOT_RC" = 0 ] && [ "$rc" != 0 ] && grep -q "$why" "$dir/$name.verdict"; then
		ok "$what fails: $why"
	else
		not_ok "$what: boot status $BOOT_RC, verdict status $rc" "$dir/$name.verdict"
	fi
}

# Fault injection that is there but cannot be set up (debugfs unmounted):
# a failure, not a skip.  Only a kernel with fault injection (CONFIG=debug)
# can show it, and it is all that kernel adds: the rest is the same
# whatever the kernel's config, and runs with CONFIG=base.
if [ "$CONFIG" = debug ]; then
	printf '%s\n' 'umount /sys/kernel/debug' 'rfp-ktap faults /dev/shm' 'exit 0' \
		>"$dir/faults-no-debugfs.job"
	verdict_fails "fault injection that cannot be set up" \
		"rfp-faults on /dev/shm (exit status 1)" "$dir/faults-no-debugfs.job"
fi
[ "$CONFIG" = base ] || exit "$failed"

# Small static programs: one exits with its argument, one breaks its plan.
cat >"$dir/exit-with.c" <<'C'
#include <stdlib.h>
int main(int argc, char **argv)
{
	return argc > 1 ? atoi(argv[1]) : 0;
}
C
cat >"$dir/short-plan.c" <<'C'
#include <stdio.h>
int main(void)
{
	printf("TAP version 13\n1..3\nok 1 first\n");
	return 0;	/* as if the binary died quietly after its first test */
}
C
# A test that lowers vm.max_map_count and puts it back 3 s later: killed
# before that, it leaves the machine changed.
cat >"$dir/lower-setting.c" <<'C'
#include <stdio.h>
#include <unistd.h>
int main(void)
{
	FILE *f = fopen("/proc/sys/vm/max_map_count", "r+");
	long v;

	if (!f || fscanf(f, "%ld", &v) != 1)
		return 1;
	rewind(f);
	fprintf(f, "%ld\n", v - 1);
	fflush(f);
	sleep(3);
	rewind(f);
	fprintf(f, "%ld\n", v);
	return fclose(f) != 0;
}
C
for p in exit-with short-plan lower-setting; do
	gcc -static -O2 -o "$dir/$p" "$dir/$p.c" || die "cannot build $dir/$p"
done

# 1. The exit status of the README's command.
for want in 0 7; do
	rc=0
	"$TOP/rfp" run "$dir/exit-with" "$want" >"$dir/rfp-run-$want.log" 2>&1 || rc=$?
	if [ "$rc" = "$want" ]; then
		ok "./rfp run exit-with $want exits $want"
	else
		not_ok "./rfp run exit-with $want exited $rc" "$dir/rfp-run-$want.log"
	fi
done

# The demo, as make run shows it: the kernel's line about the call, and
# the job's end.
rc=0
"$TOP/rfp" run >"$dir/demo.log" 2>&1 || rc=$?
if [ "$rc" = 0 ] && grep -q '^    .*rfp-demo ([0-9]*) uses deprecated remap_file_pages()' "$dir/demo.log" &&
	grep -q '^==> guest finished in .*, job exit status 0$' "$dir/demo.log"; then
	ok "the demo shows what the kernel said about it"
else
	not_ok "the demo: exit status $rc, or no line of the kernel's" "$dir/demo.log"
fi

# A QEMU stand-in at FILE: the arguments the stand-ins look at (the ports'
# files in serials[], initrd, accel), then the body read from stdin.
fake_qemu() { # FILE
	{
		cat <<'PROLOGUE'
#!/bin/bash
serials=() initrd= accel=
while [ $# -gt 0 ]; do
	case "$1" in
	-serial) serials+=("${2#file:}"); shift 2 ;;
	-initrd) initrd=$2; shift 2 ;;
	-accel) accel=$2; shift 2 ;;
	*) shift ;;
	esac
done
PROLOGUE
		cat
	} >"$1"
	chmod +x "$1"
}

# 2. The KVM probe, with a QEMU stand-in.  Its KVM boot aborts, hangs or
# works; any boot that gets this far writes the accelerator and the token
# found in its initramfs to the job's port, and status 0 to the status port.
for outcome in abort hang works; do
	fake=$dir/qemu-$outcome
	fake_qemu "$fake" <<FAKE
if [ "\$accel" = kvm ]; then
	case $outcome in
	abort) echo "fake qemu: KVM aborts" >&2; exit 1 ;;
	hang) exec sleep 120 ;;
	esac
fi
token=\$(grep -ao 'harness-token-[a-z]*' "\$initrd" | head -n 1)
echo "accel=\$accel \$token" >"\${serials[1]}"
echo 0 >"\${serials[2]}"
FAKE
	: >"$dir/kvm-$outcome"	# a writable stand-in for /dev/kvm
	echo "echo harness-token-$outcome" >"$dir/token-$outcome.job"
	want=tcg
	[ $outcome != works ] || want=kvm
	rc=0
	bash "$TOP/scripts/boot.sh" --obj "$OBJ" --run "$dir/probe-$outcome" \
		--qemu "$fake" --kvm-dev "$dir/kvm-$outcome" \
		--accel-cache "$dir/accel-$outcome" --accel auto --timeout 60 \
		"$dir/token-$outcome.job" >"$dir/probe-$outcome.log" 2>&1 || rc=$?
	if [ "$rc" = 0 ] &&
		grep -qx "accel=$want harness-token-$outcome" "$dir/probe-$outcome/out.log" &&
		[ "$(cat "$dir/accel-$outcome")" = "$want" ]; then
		ok "KVM probe that $outcome: the job asked for ran, under $want"
	else
		not_ok "KVM probe that $outcome: status $rc, job output '$(cat "$dir/probe-$outcome/out.log" 2>/dev/null)', cache '$(cat "$dir/accel-$outcome" 2>/dev/null)'" "$dir/probe-$outcome.log"
	fi
done

# 3. Runs that must fail (boot_case and verdict_fails above).
echo ': prints nothing' >"$dir/empty.job"
verdict_fails "a job that prints nothing" "no test ran" "$dir/empty.job"
# A test binary that exits 0 after the first of its 3 planned tests.
echo '/prog' >"$dir/short-plan.job"
verdict_fails "a test binary that stops short of its plan" \
	"planned 3 tests and reported 1" "$dir/short-plan.job" "$dir/short-plan"

# make check's kill test, on a test that changes a setting: killed, it
# must be seen.
printf '%s\n' 'rfp-ktap killed /prog 300000' 'exit 0' >"$dir/killed.job"
verdict_fails "a test killed before it puts a setting back" \
	"settings changed" "$dir/killed.job" "$dir/lower-setting"

# A kernel that panics: no init in the initramfs where rdinit= looks.
echo 'exit 0' >"$dir/panic.job"
boot_case panic 300 --append rdinit=/no-such-init "$dir/panic.job"
if [ "$BOOT_RC" != 0 ] && grep -q 'the kernel reported a problem' "$dir/panic.log" &&
	grep -q 'Kernel panic' "$dir/run-panic/console.log"; then
	ok "a kernel that panics fails the run"
else
	not_ok "a kernel that panics: boot status $BOOT_RC" "$dir/panic.log"
fi

# A guest that hangs past its timeout.
echo 'sleep 100000' >"$dir/hang.job"
boot_case hang 20 "$dir/hang.job"
if [ "$BOOT_RC" != 0 ] && grep -q 'did not finish in 20s' "$dir/hang.log"; then
	ok "a guest that hangs past its timeout fails the run"
else
	not_ok "a guest that hangs: boot status $BOOT_RC" "$dir/hang.log"
fi

# 4. The verdict: ktap.py on KTAP documents nested as make check nests
# them (scripts/ktap_test.py, no QEMU), then the whole driver, run.sh,
# with a QEMU stand-in that plays the guest's runner.sh: the tests it
# finds in its initramfs, each as its command says (": fake NAME ok",
# "fail" or "missing": no result line).
if python3 "$TOP/scripts/ktap_test.py" >"$dir/ktap_test.log" 2>&1; then
	ok "the verdict's own tests: $(grep -E '^Ran [0-9]+ tests' "$dir/ktap_test.log")"
else
	not_ok "the verdict's own tests (scripts/ktap_test.py)" "$dir/ktap_test.log"
fi
fake_qemu "$dir/qemu-runner" <<'FAKE'
mapfile -t tests < <(grep -ao ': fake [a-z0-9-]* [a-z]*' "$initrd")
{
	echo "TAP version 13"
	echo "1..${#tests[@]}"
	n=0
	for t in "${tests[@]}"; do
		read -r _ _ name verdict <<<"$t"
		n=$((n + 1))
		echo "# selftests: fake: $name"
		case $verdict in
		ok) echo "ok $n selftests: fake: $name" ;;
		fail) echo "not ok $n selftests: fake: $name # exit=1" ;;
		esac
	done
} >"${serials[1]}"
echo 0 >"${serials[2]}"
FAKE
driver_case() { # NAME: run modes file $dir/NAME.sh under the stand-in
	local rc=0
	ACCEL=tcg bash "$TOP/scripts/run.sh" --qemu "$dir/qemu-runner" "$dir/$1.sh" \
		>"$dir/$1.log" 2>&1 || rc=$?
	DRIVER_RC=$rc
	DRIVER_LAST=$(tail -n 1 "$dir/$1.log")
}
cat >"$dir/driver-good.sh" <<'MODE'
guest one "$KERNEL" "$CONFIG"
test_cmd a ": fake a ok"
test_cmd b ": fake b ok"
tally() { echo "1..1"; echo "ok - tallied"; }
host_step tally tally
MODE
driver_case driver-good
if [ "$DRIVER_RC" = 0 ] && [ "$DRIVER_LAST" = "3 passed, 0 failed, 0 skipped" ]; then
	ok "the driver passes a run that passes: $DRIVER_LAST"
else
	not_ok "the driver on a run that passes: status $DRIVER_RC, '$DRIVER_LAST'" "$dir/driver-good.log"
fi
# A failing test, a test binary gone before its result, a host step short
# of its plan and one with no plan: each must be named.
cat >"$dir/driver-bad.sh" <<'MODE'
guest one "$KERNEL" "$CONFIG"
test_cmd a ": fake a ok"
test_cmd b ": fake b fail"
test_cmd c ": fake c missing"
short() { echo "1..2"; echo "ok - the first of two"; }
host_step short short
planless() { echo "ok - a result without a plan"; }
host_step planless planless
MODE
driver_case driver-bad
missed=
for why in "one: selftests: fake: b: not ok" "one: planned 3 tests and reported 2" \
	"short: planned 2 tests and reported 1" "planless: not ok # the step printed no plan"; do
	grep -qF "$why" "$dir/driver-bad.log" || missed+=" '$why'"
done
if [ "$DRIVER_RC" != 0 ] && [ -z "$missed" ]; then
	ok "the driver fails a failing test, a short plan, a short host step and one without a plan"
else
	not_ok "the driver on a failing run: status $DRIVER_RC, not said:$missed" "$dir/driver-bad.log"
fi

# 5. The job's last line reaches the terminal, also when the guest ends
# right after writing it: a stand-in that writes 300 lines, then the last
# one and its exit status together, and exits.
fake_qemu "$dir/qemu-last-line" <<'FAKE'
for i in $(seq 1 300); do echo "line $i"; done >>"${serials[1]}"
sleep 1
echo "the last line" >>"${serials[1]}"
echo 0 >"${serials[2]}"
FAKE
echo : >"$dir/last-line.job"
last_ok=0
for i in 1 2 3 4 5; do
	bash "$TOP/scripts/boot.sh" --obj "$OBJ" --run "$dir/last-line" --qemu "$dir/qemu-last-line" \
		--accel tcg --timeout 60 "$dir/last-line.job" >"$dir/last-line.log" 2>&1 || break
	[ "$(grep -B1 '^==> guest finished' "$dir/last-line.log" | head -n 1)" = "the last line" ] || break
	last_ok=$i
done
if [ "$last_ok" = 5 ]; then
	ok "the job's last line is shown, right before the guest's end (5 runs of 5)"
else
	not_ok "the job's last line was lost in run $((last_ok + 1)) of 5" "$dir/last-line.log"
fi

# 6. The installer (scripts/deps.sh), with stand-ins for apt-get,
# apt-cache, dpkg and dpkg-query first in PATH, TREE=6.12 (nothing to
# download) and a cache of its own: an apt-get update that fails on a
# mirror being synced, twice, and an install that works, then one that
# fails; and what make run installs (no 32-bit package) against what the
# 32-bit programs need.
fake=$dir/fakebin
mkdir -p "$fake"
cat >"$fake/apt-get" <<'FAKE'
#!/bin/bash
echo "apt-get $*" >>"$FAKE_LOG"
case " $* " in
*" update "*)
	[ "$FAKE_UPDATE" = ok ] && exit 0
	echo "E: Failed to fetch http://deb.debian.org/debian-security/dists/bookworm-security/main/binary-i386/Packages.xz  File has unexpected size (51516 != 51380). Mirror sync in progress? [IP: 151.101.2.132 80]" >&2
	exit 100 ;;
*" install "*)
	[ "$FAKE_INSTALL" = ok ] && exit 0
	echo "E: Version '6.1.119-1' for 'linux-libc-dev:i386' was not found" >&2
	exit 100 ;;
esac
FAKE
cat >"$fake/dpkg-query" <<'FAKE'
#!/bin/bash
p=${!#}
if [ "$FAKE_MISSING" = all ] || [[ " $FAKE_MISSING " == *" $p "* ]]; then
	printf 'not-installed'
else
	printf 'installed'
fi
FAKE
cat >"$fake/dpkg" <<'FAKE'
#!/bin/bash
case "$1" in
--print-architecture) echo amd64 ;;
--print-foreign-architectures) ;;
*) echo "dpkg $*" >>"$FAKE_LOG" ;;
esac
FAKE
printf '#!/bin/sh\nexit 0\n' >"$fake/apt-cache"
chmod +x "$fake"/*
deps_case() { # NAME MISSING UPDATE INSTALL [NEED...]
	local name=$1
	DEPS_LOG=$dir/deps-$name.apt
	: >"$DEPS_LOG"
	DEPS_RC=0
	PATH=$fake:$PATH FAKE_LOG=$DEPS_LOG FAKE_MISSING=$2 FAKE_UPDATE=$3 FAKE_INSTALL=$4 \
		TREE=6.12 RFP_CACHE=$dir/deps-cache bash "$TOP/scripts/deps.sh" "${@:5}" \
		>"$dir/deps-$name.log" 2>&1 || DEPS_RC=$?
}
deps_case hiccup trinity fail ok trinity
if [ "$DEPS_RC" = 0 ] && [ "$(grep -c ' update$' "$DEPS_LOG")" = 2 ] &&
	grep -q 'install .* trinity$' "$DEPS_LOG" &&
	grep -q 'installing with the package lists apt has' "$dir/deps-hiccup.log"; then
	ok "an apt-get update that fails twice (mirror sync) still installs with the lists apt has"
else
	not_ok "a failing apt-get update: status $DEPS_RC" "$dir/deps-hiccup.log"
fi
deps_case broken trinity fail fail trinity
if [ "$DEPS_RC" != 0 ] && grep -q 'apt-get install failed' "$dir/deps-broken.log" &&
	grep -q "the mirror may be syncing: 'make deps' again later" "$dir/deps-broken.log"; then
	ok "a failed install stops with apt's words and the fix"
else
	not_ok "a failed install: status $DEPS_RC" "$dir/deps-broken.log"
fi
deps_case run all ok ok
run_args=$(grep ' install ' "$DEPS_LOG" || true)
deps_case user32 all ok ok user32
if [[ "$run_args" == *" qemu-system-x86"* ]] && [[ "$run_args" != *:i386* ]] &&
	[[ "$run_args" != *multilib* ]] && grep -q 'install .*linux-libc-dev:i386' "$DEPS_LOG" &&
	grep -q 'dpkg --add-architecture i386' "$DEPS_LOG"; then
	ok "make run installs no 32-bit package; the modes that build 32-bit programs do"
else
	not_ok "what make run installs: '$run_args'" "$dir/deps-user32.apt"
fi

# make profile's arithmetic, on a trace of two calls made by hand: a
# 3000-instruction call whose one hooked callee shows 800, the scenario
# 1000 untraced and 3800 traced, so the tracer costs k = 1400 a hooked
# call, 800 of it inside a call's own time stamps: the call is 800.
# And a trace that holds fewer calls than the scenario made is refused.
profile_case() { # DIR CALLS_MADE
	local k
	for k in stock patched; do
		mkdir -p "$1/$k"
		for i in 1 2; do
			printf ' 0)               |  __x64_sys_remap_file_pages() {\n'
			printf ' 0)   0.800 us    |    foo();\n'
			printf ' 0)   3.000 us    |  } /* __x64_sys_remap_file_pages */\n'
		done >"$1/$k/profile.txt"
		echo "rfp-bench: name=whole per_call=1000 calls=$2" >"$1/$k/profile-plain.txt"
		echo "rfp-bench: name=whole per_call=3800 calls=$2" >"$1/$k/profile-traced.txt"
	done
	python3 "$TOP/scripts/profile-report.py" whole 2 "$1/stock" "$1/patched" "$1" \
		>"$1/report.txt" 2>&1
}
if profile_case "$dir/profile" 2 &&
	grep -q '^sys_remap_file_pages  *800  *800$' "$dir/profile/report.txt"; then
	ok "make profile takes the tracer's cost out"
else
	not_ok "make profile's arithmetic" "$dir/profile/report.txt"
fi
if ! profile_case "$dir/profile-full" 3 &&
	grep -q 'the trace buffer holds 2 of the 3 calls' "$dir/profile-full/report.txt"; then
	ok "make profile refuses a trace whose buffer filled"
else
	not_ok "make profile took a trace whose buffer filled" "$dir/profile-full/report.txt"
fi

# TREE: an unknown tree is refused with the list of trees; a source that
# cannot be downloaded says which package, from where, and what to do.
if out=$(make -s -C "$TOP" tree TREE=7.4 2>&1); then
	not_ok "make tree TREE=7.4 succeeded"
elif grep -q "unknown TREE='7.4': use 7.3, 6.12" <<<"$out"; then
	ok "an unknown TREE is refused with the list of trees"
else
	not_ok "TREE=7.4 refused without the list of trees: $(tail -n 1 <<<"$out")"
fi
# A mirror that has nothing: a file: URI of an empty directory.
mkdir -p "$dir/no-mirror" "$dir/cache"
if out=$(TREE=7.3 RFP_CACHE=$dir/cache bash "$TOP/scripts/source.sh" \
	--mirror "file:$dir/no-mirror" 2>&1); then
	not_ok "source.sh succeeded without a mirror"
elif grep -q "linux-source-7.3 comes from trixie-backports at file:$dir/no-mirror" <<<"$out" &&
	grep -q "TREE=6.12 does not need this download" <<<"$out"; then
	ok "a failed download of 7.3's source names the package, the suite and the mirror"
else
	not_ok "a failed download of 7.3's source: $(tail -n 3 <<<"$out" | tr '\n' ' ')"
fi

# 7. Harness commands at once, on one cache (scripts/lib.sh, lock): a
# './rfp run' during a 'make check' that rebuilds the user space, and two
# builds of one kernel.  Each in a cache of its own that links to this
# one's trees, and with stand-ins that write a file half, wait, then
# whole: a command that reads what another is writing sees the half.
# Its tree, the sources and busybox of a cache of its own: links to this
# cache's.
lock_cache() { # DIR
	local t=$1/$TREE
	mkdir -p "$t/build/$ARCH" "$t/userspace"
	ln -sfn "$KTREE" "$t/linux"
	[ ! -e "$STOCK" ] || ln -sfn "$STOCK" "$t/stock"
	for d in src debs; do
		[ ! -e "$RFP_CACHE/$d" ] || ln -sfn "$RFP_CACHE/$d" "$1/$d"
	done
}
slow=$dir/slowbin
mkdir -p "$slow"
real_gcc=$(command -v gcc)
real_make=$(command -v make)
# gcc, but the program at FAKE_SLOW is written half first, whole 8 s later.
cat >"$slow/gcc" <<FAKE
#!/bin/bash
prev=
for a in "\$@"; do
	if [ "\$prev" = -o ] && [ "\$a" = "\${FAKE_SLOW:-}" ]; then
		echo "half-written by a stand-in of gcc" >"\$a"
		sleep 8
	fi
	prev=\$a
done
exec $real_gcc "\$@"
FAKE
# make, but a kernel build in FAKE_OBJ writes its image half ("start
# PID"), then 6 s later whole ("end PID"), unless it is whole already;
# configuring it does nothing.
cat >"$slow/make" <<FAKE
#!/bin/bash
case " \$* " in
*" O=\${FAKE_OBJ:-/nonexistent} "*) ;;
*) exec $real_make "\$@" ;;
esac
img=\$FAKE_OBJ/$KIMAGE
case " \$* " in *" ${KIMAGE##*/} "*) ;; *) exit 0 ;; esac
if [ "\$(head -c 5 "\$img" 2>/dev/null)" = start ] && [ "\$(sed -n 's/^end //p' "\$img")" = "\$(sed -n 's/^start //p' "\$img")" ]; then
	echo "make: '${KIMAGE##*/}' is up to date."
	exit 0
fi
mkdir -p "\${img%/*}"
echo "start \$\$" >"\$img"
sleep 6
echo "end \$\$" >>"\$img"
echo "Kernel: $KIMAGE is ready  (#1)"
FAKE
chmod +x "$slow"/*
# A QEMU stand-in that says which kselftests its initramfs holds, and
# fails when a file in it is half-written.
fake_qemu "$dir/qemu-archive" <<'FAKE'
tests=$(grep -ao 'tests/remap_file_pages_[0-9]*' "$initrd" | sort -u | tr '\n' ' ')
rc=0
grep -aq 'half-written by a stand-in' "$initrd" && rc=1
{
	echo "TAP version 13"
	echo "1..1"
	echo "# archive: $tests"
	if [ $rc = 0 ]; then echo "ok 1 archive"; else echo "not ok 1 archive # a half-written file"; fi
} >"${serials[1]}"
echo $rc >"${serials[2]}"
FAKE

# 7a. A './rfp run' during a 'make check' (a mode of the same needs) that
# rebuilds the user space: rfp-demo, gone from the copy of the user space,
# which both put in base.cpio.  The './rfp run' starts when make check's
# rfp-demo is half-written; it must wait, boot base.cpio with whole files
# and without the 32-bit kselftests, and make check with them.
ca=$dir/cache-a
lock_cache "$ca"
ln -sfn "$OBJ" "$ca/$TREE/build/$ARCH/$KERNEL-$CONFIG"
usa=$ca/$TREE/userspace/$ARCH
mkdir -p "$usa"
cp -a "$US/bin" "$US/mm" "$US"/usr-* "$US"/base*.list "$US"/base*.cpio "$usa/"
rm -f "$usa/bin/rfp-demo"
cat >"$dir/lock-check.sh" <<'MODE'
needs user32
guest one "$KERNEL" "$CONFIG"
test_cmd a ": archive"
MODE
lock_run() { # NAME run.sh-args...: in cache-a, with the stand-ins
	local name=$1
	shift
	# Not make check's USER32 and SHIM: each run's own.
	env -u USER32 -u SHIM PATH="$slow:$PATH" FAKE_SLOW="$usa/bin/rfp-demo" RFP_CACHE="$ca" \
		ACCEL=tcg RFP_WHO="$name (stand-in)" bash "$TOP/scripts/run.sh" --qemu "$dir/qemu-archive" "$@" \
		>"$dir/lock-$name.log" 2>&1
}
check_rc=0 run_rc=0
lock_run check "$dir/lock-check.sh" &
check_pid=$!
for _ in $(seq 1 600); do
	grep -qs 'half-written' "$usa/bin/rfp-demo" && break
	sleep 0.1
done
lock_run run run "$dir/exit-with" 0 || run_rc=$?
wait "$check_pid" || check_rc=$?
# What each asked for: the first word size's kselftest, and make check
# every one that ARCH's kernel runs.
want_run="tests/remap_file_pages_$(USER32=0 user_bits | head -n 1) "
want_check=$(USER32=1 user_bits | sed 's|^|tests/remap_file_pages_|' | sort | tr '\n' ' ')
if [ "$run_rc" = 0 ] && [ "$check_rc" = 0 ] &&
	grep -qxF "# archive: $want_run" "$dir/lock-run.log" &&
	grep -qxF "# # archive: $want_check" "$dir/lock-check.log" &&
	grep -q 'waiting for [0-9]* (check (stand-in)) to finish building the user space' "$dir/lock-run.log"; then
	ok "a ./rfp run during a make check that rebuilds the user space waits for it; each boots what it asked for, whole"
else
	not_ok "a ./rfp run during a make check's user-space build: run status $run_rc, check status $check_rc; $(grep -h '# archive' "$dir/lock-run.log" "$dir/lock-check.log" | tr '\n' ' ')" "$dir/lock-run.log"
fi

# 7b. Two builds of one kernel at once, the second started when the
# first's image is half-written: it must wait, and find the image built;
# each, when it returns, must see the whole image.  Meanwhile a boot of
# another kernel must not wait for them.
cb=$dir/cache-b
lock_cache "$cb"
fobj=$cb/$TREE/build/$ARCH/$KERNEL-$CONFIG
mkdir -p "$fobj/include/config"
cp -p "$OBJ/.config" "$OBJ/.rfp-config-key" "$fobj/"
cp -p "$OBJ/include/config/kernel.release" "$fobj/include/config/"
mkdir -p "$cb/$TREE/userspace/$ARCH/bin"
cp -p "$US/base.cpio" "$cb/$TREE/userspace/$ARCH/"
cp -p "$US/bin/gen_init_cpio" "$cb/$TREE/userspace/$ARCH/bin/"
lock_build() { # NAME
	env -u USER32 -u SHIM PATH="$slow:$PATH" FAKE_OBJ="$fobj" RFP_CACHE="$cb" \
		RFP_WHO="build $1 (stand-in)" bash "$TOP/scripts/build.sh" "$KERNEL" "$CONFIG" >"$dir/lock-build-$1.log" 2>&1
	local rc=$?
	cp "$fobj/$KIMAGE" "$dir/lock-build-$1.image"
	return $rc
}
b1_rc=0 b2_rc=0
lock_build one &
b1_pid=$!
for _ in $(seq 1 300); do
	[ "$(head -c 5 "$fobj/$KIMAGE" 2>/dev/null)" = start ] && break
	sleep 0.1
done
lock_build two &
b2_pid=$!
echo 'exit 0' >"$dir/lock-other.job"
other_rc=0
env -u USER32 RFP_CACHE="$cb" bash "$TOP/scripts/boot.sh" --obj "$OBJ" --run "$dir/lock-other" \
	--qemu "$dir/qemu-archive" --accel tcg --timeout 60 "$dir/lock-other.job" \
	>"$dir/lock-other.log" 2>&1 || other_rc=$?
grep -q '^end' "$fobj/$KIMAGE" && other_rc="$other_rc, after the build"
wait "$b1_pid" || b1_rc=$?
wait "$b2_pid" || b2_rc=$?
whole() { # IMAGE: one build's, start to end
	[ "$(wc -l <"$1")" = 2 ] && [ "$(sed -n 's/^start //p' "$1")" = "$(sed -n 's/^end //p' "$1")" ]
}
if [ "$b1_rc" = 0 ] && [ "$b2_rc" = 0 ] && [ "$other_rc" = 0 ] &&
	whole "$dir/lock-build-one.image" && cmp -s "$dir/lock-build-one.image" "$dir/lock-build-two.image" &&
	grep -q 'waiting for [0-9]* (build one (stand-in)) to finish building kernel' "$dir/lock-build-two.log"; then
	ok "two builds of one kernel: the second waits for the first, each sees the whole image; a boot of another does not wait"
else
	not_ok "two builds of one kernel: status $b1_rc and $b2_rc, images '$(tr '\n' ' ' <"$dir/lock-build-one.image")' and '$(tr '\n' ' ' <"$dir/lock-build-two.image")', other boot $other_rc" "$dir/lock-build-two.log"
fi

# 7c. make clean while a boot holds its run's directory: it names the
# boot, removes nothing and fails; once the boot is over, it removes the
# runs and the user space and keeps the lock files.
cc=$dir/cache-c
lock_cache "$cc"
cruns=$cc/$TREE/runs/$ARCH
mkdir -p "$cruns/busy" "$cruns/idle" "$cc/$TREE/userspace/$ARCH"
: >"$cruns/idle.lock"
echo log >"$cruns/busy/console.log"
echo log >"$cruns/idle/console.log"
echo archive >"$cc/$TREE/userspace/$ARCH/base.cpio"
(
	exec {fd}>>"$cruns/busy.lock"
	flock -x "$fd"
	printf '%s\t%s\t%s\n' "$BASHPID" "a boot (stand-in)" "running $cruns/busy" >"$cruns/busy.lock"
	exec sleep 60 </dev/null >/dev/null 2>&1
) &
holder=$!
for _ in $(seq 1 100); do
	[ -s "$cruns/busy.lock" ] && break
	sleep 0.1
done
clean() { env RFP_CACHE="$cc" RFP_WHO="make clean (stand-in)" bash "$TOP/scripts/clean.sh" >"$dir/clean-$1.log" 2>&1; }
busy_rc=0 free_rc=0
clean busy || busy_rc=$?
kept=$({ find "$cc/$TREE/runs" "$cc/$TREE/userspace" ! -type d 2>/dev/null || true; } | sort | sed "s|$cc/$TREE/||" | tr '\n' ' ')
kill "$holder"
wait "$holder" 2>/dev/null || true
clean free || free_rc=$?
left=$({ find "$cc/$TREE/runs" "$cc/$TREE/userspace" ! -type d 2>/dev/null || true; } | sort | sed "s|$cc/$TREE/||" | tr '\n' ' ')
want_left="runs/$ARCH/busy.lock runs/$ARCH/idle.lock "
if [ "$busy_rc" != 0 ] && grep -q "^make clean: $holder (a boot (stand-in)) is running $cruns/busy" "$dir/clean-busy.log" &&
	[[ "$kept" == *"runs/$ARCH/busy/console.log"*"runs/$ARCH/idle/console.log"*"userspace/$ARCH/base.cpio"* ]] &&
	[ "$free_rc" = 0 ] && [ "$left" = "$want_left" ]; then
	ok "make clean during a boot names it and removes nothing; after it, the runs and the user space go, their locks stay"
else
	not_ok "make clean during a boot: status $busy_rc, then $free_rc; files after the first: $kept; after the second: $left" "$dir/clean-busy.log"
fi
exit "$failed"
