# help: rfp-compat's tests, with the syscall refused (make check too)
# make compat: rfp-compat (shim/) where the kernel refuses the syscall:
# the patched kernel booted with vm.remap_file_pages=0, and the kernel
# built without CONFIG_REMAP_FILE_PAGES.  Under the shim: its own test,
# the series' kselftest (dynamically linked; 64- and 32-bit where ARCH's
# kernel runs both) but for the cases about the knob itself, and
# rfp-stress with its model check.
needs user32 shim
COMPAT_CPIO=$US/compat.cpio
# What the kselftest checks of the knob, which the shim hides by design:
# -ENOSYS when refused, and CONFIG_REMAP_FILE_PAGES=n.  And its fanotify
# pre-content cases: the shim maps through a descriptor of the program's
# for the file, which may be another open file than the window's, and a
# pre-content group hears only of the open files opened after its mark
# (shim/README.md, "What it cannot do").
COMPAT_KSFT_SKIP="-F pre_access -T kernel_config_decides -T sysctl_value"

# KERNELS=one: the patched base kernel only.
for g in off $([ "$KERNELS" = one ] || echo norfp); do
	if [ $g = off ]; then
		guest compat-off patched base --append sysctl.vm.remap_file_pages=0 \
			--cpio "$COMPAT_CPIO"
	else
		guest compat-norfp patched norfp --cpio "$COMPAT_CPIO"
	fi
	test_cmd compat-test "/usr/bin/rfp-compat /compat/rfp-compat-test"
	test_cmd compat-glibc-only \
		"/usr/bin/rfp-compat --glibc-only /compat/rfp-compat-test -t glibc_only_without_filter"
	# Shared anonymous memory charged as the kernel charges it, under
	# each overcommit mode (the guest's own setting, put back after).
	for m in 1 2; do
		test_cmd "compat-overcommit-$m" "old=\$(cat /proc/sys/vm/overcommit_memory)
echo $m >/proc/sys/vm/overcommit_memory || exit 1
/usr/bin/rfp-compat -q /compat/rfp-compat-test -t overcommit_like_the_kernel
rc=\$?
echo \$old >/proc/sys/vm/overcommit_memory
exit \$rc"
	done
	# A case that skips because "this kernel has no remap_file_pages()"
	# ran without the shim: that is a failure here.
	for b in $(user_bits); do
		test_cmd "compat-kselftest-$b" "cd /mnt/disk
/usr/bin/rfp-compat -q /compat/remap_file_pages_$b $COMPAT_KSFT_SKIP >/tmp/out 2>&1
rc=\$?
cat /tmp/out
if grep -q 'SKIP.*remap_file_pages() is off' /tmp/out; then
	echo '# the shim did not catch the calls: cases skipped for a kernel without the syscall'
	exit 1
fi
exit \$rc"
	done
	# stress-ng's remap stressor (config/arch/: COMPAT_PEERS), as Debian
	# ships it, with its own check of every page's contents.
	if [[ " ${COMPAT_PEERS[*]-} " == *" stress-ng "* ]]; then
		test_cmd compat-stress-ng "cd /mnt/disk
/usr/bin/rfp-compat -q /compat/stress-ng --remap 1 --remap-ops 3 --verify --metrics-brief >/tmp/out 2>&1
rc=\$?
cat /tmp/out
grep -q 'remap .*nanosecs per page remap' /tmp/out || { echo '# stress-ng made no remap'; exit 1; }
exit \$rc"
	fi
	# trinity, Debian's fuzzer, on remap_file_pages() and the mappings it
	# works on, a fixed number of calls with seed 1: the shim under a
	# program that forks children, installs a handler for every signal
	# and makes its calls with syscall().  Its verdict: it made them all
	# and ended well, and the shim emulated calls in it (each process
	# says so once on stderr).  trinity's 32-bit calls (int 0x80) are not
	# the shim's: it marks them inactive at their ENOSYS.
	if [[ " ${COMPAT_PEERS[*]-} " == *" trinity "* ]]; then
		test_cmd compat-trinity "cd /tmp
t=/sys/kernel/tracing/instances/compat-trinity
# The kernel's refusals, counted by its tracepoint (none without the syscall).
mkdir \$t && { echo 'ret == -38' >\$t/events/mmap/remap_file_pages/filter &&
	echo 1 >\$t/events/mmap/remap_file_pages/enable; } 2>/dev/null
timeout 600 /usr/bin/rfp-compat /compat/trinity -s 1 --dangerous --disable-fds=sockets -q -l off \\
	-C 2 -N 2000 -c remap_file_pages -c mmap -c munmap >/tmp/out 2>&1
rc=\$?
grep -v 'remap_file_pages() emulated with' /tmp/out | tail -n 5
n=\$(grep -c 'remap_file_pages() emulated with' /tmp/out)
echo 0 2>/dev/null >\$t/events/mmap/remap_file_pages/enable
echo \"# processes in which the shim emulated calls: \$n; calls the kernel refused: \$(grep -c 'remap_file_pages: ' \$t/trace)\"
[ \"\$n\" -gt 0 ] || { echo '# the shim emulated no call of trinity'; exit 1; }
exit \$rc"
	fi
	# The admin's path (docs/decommission.md), as the package installs
	# it: its command blocks, in order, in one shell; a block of the page
	# that no step runs fails the test.  On the kernel booted with the
	# syscall refused from its command line, which step 3 checks first;
	# then, as on a machine before its decommission, the syscall allowed
	# and an old program (rfp-bench) that remaps.  The guest's settings
	# are put back after.
	if [ $g = off ]; then
		test_cmd compat-decommission "$(cat <<'DOC'
doc=/usr/share/doc/rfp-compat/decommission.md
# An admin's PATH (the guest's own has /bin and /sbin alone).
export PATH=/usr/local/bin:/usr/bin:$PATH
fail() { echo "# decommission.md: $*"; exit 1; }
[ -f $doc ] || fail "not installed by the package"
block() { awk -v m="$1" '$0 == m { f = 1; next } f && /^```/ { if (b) exit; b = 1; next } f && b' $doc; }
run() {
	code=$(block "<!-- run: $1 -->")
	[ -n "$code" ] || fail "no block '$1'"
	echo "# step $1:" >&2
	echo "$code" | sed 's/^/#   $ /' >&2
	eval "$code"
}
blocks=$(grep -c '^```.' $doc)
steps=$(grep -c '^<!-- run: \|^<!-- file: ' $doc)
[ "$blocks" = "$steps" ] || fail "$blocks command blocks, $steps of them marked for this test"
[ "$(run value)" = 0 ] || fail "vm.remap_file_pages is not 0 with sysctl.vm.remap_file_pages=0 on the command line"
old=$(cat /proc/sys/vm/remap_file_pages)
restore() {
	echo $old >/proc/sys/vm/remap_file_pages
	rm -rf /etc/sysctl.d/60-remap-file-pages.conf /etc/systemd /usr/local/bin/old-program
	[ ! -d /sys/kernel/tracing/instances/rfp-callers ] || rmdir /sys/kernel/tracing/instances/rfp-callers
}
trap restore EXIT
echo 1 >/proc/sys/vm/remap_file_pages
mkdir -p /usr/local/bin /etc/sysctl.d
printf '#!/bin/sh\nexec /compat/rfp-bench -r 1 -s reverse\n' >/usr/local/bin/old-program
chmod 755 /usr/local/bin/old-program
run trace-start
/usr/local/bin/old-program >/dev/null || fail "the old program fails with the syscall allowed"
run callers >/tmp/callers
sed 's/^/# /' /tmp/callers
grep -q '^rfp-bench-[0-9]* dev=[0-9]*:[0-9]* ino=[0-9]*$' /tmp/callers || fail "step 1 did not list the old program"
run log | grep -q 'rfp-bench ([0-9]*) uses deprecated remap_file_pages() syscall' ||
	fail "step 1: no log line names the old program"
run turn-off >/dev/null
[ "$(run value)" = 0 ] || fail "step 3 did not turn the syscall off"
run check-start
run wrap >/dev/null || fail "the wrapped program failed"
f=$(sed -n 's/^<!-- file: \(.*\) -->$/\1/p' $doc)
mkdir -p "${f%/*}"
block "<!-- file: $f -->" >"$f"
cmd=$(sed -n 's/^ExecStart=\(..*\)$/\1/p' "$f")
[ -n "$cmd" ] || fail "the drop-in has no command"
echo "# the drop-in's command: $cmd"
$cmd >/dev/null || fail "the drop-in's command failed"
run check >/tmp/check
sed 's/^/# /' /tmp/check
grep -q '^ *[0-9]* rfp-bench-[0-9]* ret=-38$' /tmp/check || fail "step 4 shows no refused call of the wrapped program"
! grep -v '^ *[0-9]* rfp-bench-[0-9]* ret=-38$' /tmp/check || fail "step 4 shows other calls than the wrapped program's refused ones"
run trace-stop
[ ! -d /sys/kernel/tracing/instances/rfp-callers ] || fail "step 4 left the trace instance"
echo "# every step of decommission.md ran as the page says"
DOC
)"
	fi
	for d in /dev/shm /mnt/disk; do
		test_cmd "compat-stress-${d##*/}" \
			"/usr/bin/rfp-compat -q /compat/rfp-stress -d $d -s ${STRESS_SECONDS:-10} -p $STRESS_PROCS -t $STRESS_THREADS"
	done
done

# rfp-compat's own test on this machine's kernel, where the syscall is
# allowed: with --always the shim emulates every call.  rfp-compat is the
# package's, unpacked, as in the guests (scripts/userspace.sh); nothing
# is installed on this machine.  Its KTAP, plan and all.
shim_host_tests() {
	local dir rc=0
	dir=$(mktemp -d)
	(cd "$dir" && "$US/rfp-compat-root/usr/bin/rfp-compat" -q --always "$US/compat/rfp-compat-test") 2>&1 || rc=$?
	rm -rf "$dir"
	return "$rc"
}

# The same test on this machine's kernel, which allows the syscall (the
# shim emulates with --always): where the guests' programs run here
# (NATIVE=1 in config/arch/).
[ "$NATIVE" != 1 ] || host_step shim-host shim_host_tests

# make install and make uninstall, under a scratch DESTDIR (nothing is
# installed on this machine): the launcher, the libraries and the man
# page in place, the page as man shows it, and nothing left after the
# uninstall.
shim_install() {
	local d root rc=0 left
	d=$(mktemp -d)
	root=$d/root
	echo "1..3"
	if make -s -C "$TOP" install DESTDIR="$root" PREFIX=/usr >"$d/log" 2>&1 &&
		[ -x "$root/usr/bin/rfp-compat" ] && [ -f "$root/usr/lib/rfp-compat/librfp-compat.so" ] &&
		[ -f "$root/usr/share/man/man1/rfp-compat.1" ]; then
		echo "ok 1 - make install DESTDIR=... PREFIX=/usr: launcher, library, man page"
	else
		sed 's/^/# /' "$d/log"
		echo "not ok 1 - make install DESTDIR=... PREFIX=/usr"
		rc=1
	fi
	if ! command -v man >/dev/null; then
		echo "ok 2 - man -l shows rfp-compat(1) # SKIP no man on this machine"
	elif MANWIDTH=80 man -l "$root/usr/share/man/man1/rfp-compat.1" 2>&1 | grep -q '^EXIT STATUS'; then
		echo "ok 2 - man -l shows rfp-compat(1)"
	else
		echo "not ok 2 - man -l shows rfp-compat(1)"
		rc=1
	fi
	make -s -C "$TOP" uninstall DESTDIR="$root" PREFIX=/usr >"$d/log" 2>&1 || sed 's/^/# /' "$d/log"
	left=$(cd "$root" 2>/dev/null && find . -mindepth 1 | head -n 5)
	if [ -z "$left" ]; then
		echo "ok 3 - make uninstall leaves nothing behind"
	else
		echo "# left: $left"
		echo "not ok 3 - make uninstall leaves nothing behind"
		rc=1
	fi
	rm -rf "$d"
	return "$rc"
}
host_step shim-install shim_install

# The shim's files form a line (shim/shim.h): each uses only those
# before it.
shim_layers() {
	bash "$TOP/scripts/shim-layers.sh" "$TOP/shim"
}
host_step shim-layers shim_layers
