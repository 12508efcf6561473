#!/bin/bash
# make run / check / shell / stress / faults / fuzz / diff: build what is
# out of date, boot the guest and run the job.
# Usage: run.sh run|check|shell|stress|faults|fuzz|diff
. "$(dirname "$0")/lib.sh"
mode=${1:?usage: run.sh run|check|shell|stress|faults|fuzz|diff}
# make diff compares the stock kernel with the patched one of the same CONFIG.
if [ "$mode" = diff ]; then
	KERNEL=patched
	[ "${CONFIG:-base}" != norfp ] || die "make diff needs the syscall: CONFIG=base or debug"
fi
# make diff and make check: SEEDS and STEPS checked before building.
case "$mode:${SEEDS:-} ${STEPS:-}" in
check:*[!0-9\ ]* | diff:*[!0-9\ ]*)
	die "SEEDS and STEPS are numbers (got SEEDS='${SEEDS:-}' STEPS='${STEPS:-}')" ;;
esac
check_kernel_var

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

# The stress run, in TAP: rfp-stress on tmpfs and on the ext4 disk.
stress_job() { # name seconds
	cat <<JOB
echo "# rfp-test-start: $1/rfp-stress"
for d in /dev/shm /mnt/disk; do
	if rfp-stress -d \$d -s $2 -p ${STRESS_PROCS:-3} -t ${STRESS_THREADS:-3}; then
		echo "ok - rfp-stress on \$d"
	else
		echo "not ok - rfp-stress on \$d"
	fi
done
echo "# rfp-test-exit: $1/rfp-stress 0"
JOB
}

# rfp-fuzz, in TAP: random calls checked against the model, one per seed.
fuzz_job() { # name calls seeds...
	local name=$1 calls=$2 seed
	shift 2
	echo "echo '# rfp-test-start: $name/rfp-fuzz'"
	for seed in "$@"; do
		echo "rfp-fuzz -n $calls -s $seed && echo 'ok - rfp-fuzz seed $seed' || echo 'not ok - rfp-fuzz seed $seed'"
	done
	echo "echo '# rfp-test-exit: $name/rfp-fuzz 0'"
}

# Trinity (Debian's, dynamically linked: its libraries go in a cpio of
# their own) with the mm syscalls only, for a bounded time; the verdict is
# the kernel log's, which boot.sh scans.  As root it wants --dangerous: the
# guest is thrown away after the run.  No sockets: the kernel has no
# networking, and trinity would spend its time failing to make them.
trinity_job() { # name seconds
	cat <<JOB
echo "# rfp-test-start: $1/trinity"
cd /tmp
timeout $2 /usr/bin/trinity --dangerous --disable-fds=sockets -q -l off -C 4 -c remap_file_pages -c mmap -c munmap \\
	-c mremap -c mprotect -c madvise -c mlock -c munlock -c msync -c fork \\
	>/tmp/trinity.log 2>&1
rc=\$?
tail -n 3 /tmp/trinity.log | sed 's/^/#   /'
# What reached remap_file_pages() (the series' counters; none on stock).
grep remap_file_pages /proc/vmstat | sed 's/^/#   /'
# Stopped by timeout (124, or 143 for SIGTERM): it ran the whole time.
case \$rc in
124|143) echo "ok - trinity, mm syscalls, $2 s, no kernel report" ;;
*) echo "not ok - trinity ended early with status \$rc" ;;
esac
echo "# rfp-test-exit: $1/trinity 0"
JOB
}

trinity_cpio() {
	local list=$RFP_CACHE/userspace/trinity.list f
	command -v trinity >/dev/null || die "trinity is not installed (make deps)"
	{
		echo "dir /usr 0755 0 0"
		echo "dir /usr/bin 0755 0 0"
		echo "dir /lib 0755 0 0"
		echo "dir /lib64 0755 0 0"
		echo "dir /lib/x86_64-linux-gnu 0755 0 0"
		echo "file /usr/bin/trinity $(command -v trinity) 0755 0 0"
		for f in $(ldd "$(command -v trinity)" | grep -o '/[^ ]*'); do
			echo "file $f $(readlink -f "$f") 0755 0 0"
		done
	} >"$list"
	"$RFP_CACHE/userspace/bin/gen_init_cpio" "$list" >"$RFP_CACHE/userspace/trinity.cpio"
	echo "$RFP_CACHE/userspace/trinity.cpio"
}

# Fault injection, in TAP: skipped on a kernel without it.  On tmpfs,
# where the series keeps the VMAs a remap replaces and a remap happens
# whole or not at all.  Not on ext4: there a remap is still a new mmap(),
# which leaves the range unmapped when an allocation fails after it was
# cleared, on 6.12.118 as with the series (README, "What was seen").
faults_job() { # name
	cat <<JOB
echo "# rfp-test-start: $1/rfp-faults"
rfp-faults /dev/shm
case \$? in
0) echo "ok - rfp-faults" ;;
4) echo "ok - rfp-faults # SKIP no fault injection in this kernel (CONFIG=debug has it)" ;;
*) echo "not ok - rfp-faults" ;;
esac
echo "# rfp-test-exit: $1/rfp-faults 0"
JOB
}

# The differential run: rfp-diff, the same seeds on the stock and on the
# patched kernel, and their traces compared (SPEC §2: a remap answers as
# stock's does).  Its seeds, steps and directories are these.
DIFF_SEEDS=${SEEDS:-1 2 3 4 5 6}
DIFF_STEPS=${STEPS:-500}
DIFF_DIRS="/dev/shm /mnt/disk"

# The guest's part.  Both kernels in one address-space layout (no ASLR),
# and no periodic writeback (it would lock page cache pages at moments of
# its own).  A trace is hundreds of kilobytes: it crosses the serial port
# gzipped, in base64, between marker lines.
diff_job() {
	cat <<JOB
echo "# \$(uname -r): rfp-diff, seeds $DIFF_SEEDS, $DIFF_STEPS steps"
echo 0 >/proc/sys/kernel/randomize_va_space
echo 0 >/proc/sys/vm/dirty_writeback_centisecs
mmc=\$(cat /proc/sys/vm/max_map_count)
for d in $DIFF_DIRS; do
	for s in $DIFF_SEEDS; do
		rfp-diff -s \$s -n $DIFF_STEPS -d \$d >/tmp/trace 2>&1
		rc=\$?
		echo \$mmc >/proc/sys/vm/max_map_count
		echo "# rfp-diff-trace: \$s \$d status \$rc, \$(wc -l </tmp/trace) lines"
		gzip -c /tmp/trace | base64
		echo "# rfp-diff-trace-end"
	done
done
JOB
}

# Boot KERNEL with that job and unpack its traces into DIR/traces, one
# file a seed and directory (seed-1-shm.txt...).  Status: boot.sh's.
diff_boot() { # KERNEL DIR
	local dir=$2 rc=0 b
	mkdir -p "$dir"
	rm -rf "$dir/traces"
	mkdir "$dir/traces"
	diff_job >"$dir/diff.job"
	KERNEL=$1 RFP_RUN=$dir bash "$TOP/scripts/boot.sh" "$dir/diff.job" >"$dir/boot.log" || rc=$?
	grep -E '^(==>|# )' "$dir/boot.log" | grep -v '^# rfp-diff-trace-end' | sed 's/^/    /' || true
	tr -d '\r' <"$dir/out.log" | awk -v dir="$dir/traces" '
		/^# rfp-diff-trace: / { d = $4; sub(".*/", "", d); f = dir "/seed-" $3 "-" d ".b64"; printf "" >f; next }
		/^# rfp-diff-trace-end/ { if (f != "") close(f); f = ""; next }
		f != "" { print >>f }'
	for b in "$dir"/traces/*.b64; do
		[ -e "$b" ] || continue
		base64 -d <"$b" 2>/dev/null | gunzip >"${b%.b64}.txt" 2>/dev/null || true
		rm -f "$b"
	done
	return "$rc"
}

# The host's part, in TAP: each trace of the patched kernel must be the
# stock kernel's, and both must have run to their end.
diff_compare() { # STOCK_DIR PATCHED_DIR
	local s d a b what
	echo "# rfp-test-start: differential"
	for d in $DIFF_DIRS; do
		for s in $DIFF_SEEDS; do
			a=$1/traces/seed-$s-${d##*/}.txt
			b=$2/traces/seed-$s-${d##*/}.txt
			what="differential: seed $s on $d"
			if ! grep -qs "^# rfp-diff: seed $s steps [0-9]* done\$" "$a"; then
				echo "not ok - $what: the stock kernel's trace is missing or cut short ($a)"
			elif ! grep -qs "^# rfp-diff: seed $s steps [0-9]* done\$" "$b"; then
				echo "not ok - $what: the patched kernel's trace is missing or cut short ($b)"
			elif cmp -s "$a" "$b"; then
				echo "ok - $what matches stock"
				continue
			else
				echo "not ok - $what differs from stock"
			fi
			if [ -s "$a" ] && [ -s "$b" ]; then
				{ diff -u --label "stock $a" --label "patched $b" "$a" "$b" || true; } |
					head -n 40 | sed 's/^/# /'
			fi
		done
	done
	echo "# rfp-test-exit: differential 0"
}

# The stock kernel built too, both booted, the traces compared, in TAP
# into LOG; the runs are in $RUN/diff/stock and $RUN/diff/patched.
diff_run() { # LOG
	local rc=0
	KERNEL=stock bash "$TOP/scripts/build.sh"
	step "differential: rfp-diff on the stock kernel"
	diff_boot stock "$RUN/diff/stock" || rc=$?
	step_done
	step "differential: rfp-diff on the patched kernel"
	diff_boot patched "$RUN/diff/patched" || rc=$?
	step_done
	diff_compare "$RUN/diff/stock" "$RUN/diff/patched" | tee "$1"
	return "$rc"
}

case "$mode" in
stress)
	stress_job stress "${STRESS_SECONDS:-120}" >"$job"
	rc=0
	bash "$TOP/scripts/boot.sh" "$job" | tee "$RUN/stress.log" || rc=$?
	exec bash "$TOP/scripts/summary.sh" "$rc" "$RUN/stress.log"
	;;
fuzz)
	{
		fuzz_job fuzz "${FUZZ_CALLS:-20000}" 1 2 3 4
		trinity_job fuzz "${FUZZ_SECONDS:-120}"
	} >"$job"
	rc=0
	EXTRA_CPIO=$(trinity_cpio) bash "$TOP/scripts/boot.sh" "$job" |
		tee "$RUN/fuzz.log" || rc=$?
	exec bash "$TOP/scripts/summary.sh" "$rc" "$RUN/fuzz.log"
	;;
faults)
	faults_job faults >"$job"
	rc=0
	bash "$TOP/scripts/boot.sh" "$job" | tee "$RUN/faults.log" || rc=$?
	exec bash "$TOP/scripts/summary.sh" "$rc" "$RUN/faults.log"
	;;
shell)
	exec bash "$TOP/scripts/boot.sh" --shell
	;;
diff)
	rc=0
	diff_run "$RUN/differential.log" || rc=$?
	exec bash "$TOP/scripts/summary.sh" "$rc" "$RUN/differential.log"
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
	# One guest run of the kselftests: suite_job NAME [kselftest args].
	suite_job() {
		cat <<JOB
echo "# \$(uname -r) \$(cat /proc/cmdline)"
# The kselftest's disk variant runs in the current directory: the ext4
# filesystem that guest/init mounts.
cd /mnt/disk
for t in /tests/*; do
	echo "# rfp-test-start: $1/\${t##*/}"
	"\$t" ${*:2}
	echo "# rfp-test-exit: $1/\${t##*/} \$?"
done
JOB
	}
	rc=0
	logs=()
	{
		suite_job main
		stress_job main "${STRESS_SECONDS:-10}"
		faults_job main
		fuzz_job main 5000 1
	} >"$job"
	bash "$TOP/scripts/boot.sh" "$job" || rc=$?
	logs+=("$RUN/out.log")

	# The series' own boot-time cases: the syscall refused from the
	# command line, and a kernel built without it.
	if [ "$KERNEL" = patched ] && [ "$CONFIG" = base ]; then
		step "suite: booted with sysctl.vm.remap_file_pages=0"
		suite_job cmdline-off -f knob -t sysctl_boot_value -t syscall_matches_kernel_config >"$RUN/cmdline-off.job"
		RFP_RUN=$RUN/cmdline-off BOOTARGS="${BOOTARGS:-} sysctl.vm.remap_file_pages=0" \
			bash "$TOP/scripts/boot.sh" "$RUN/cmdline-off.job" || rc=$?
		logs+=("$RUN/cmdline-off/out.log")

		step "suite: CONFIG_REMAP_FILE_PAGES=n"
		CONFIG=norfp bash "$TOP/scripts/build.sh"
		suite_job norfp -t syscall_matches_kernel_config >"$RUN/norfp.job"
		CONFIG=norfp RFP_RUN=$RUN/norfp bash "$TOP/scripts/boot.sh" "$RUN/norfp.job" || rc=$?
		logs+=("$RUN/norfp/out.log")

		# The same seeded trace on the stock kernel and on this one.
		diff_run "$RUN/differential.log" || rc=$?
		logs+=("$RUN/differential.log")
	fi

	# Host-side checks, in TAP too: the series' style, and the harness's
	# promise that 'make run PROG=' returns the program's exit status.
	step "host checks: checkpatch --strict, tools/testing/vma, make run PROG= exit status"
	{
		echo "# rfp-test-start: host"
		bash "$TOP/scripts/patches.sh" checkpatch || true
		if [ "${KERNEL:-patched}" = patched ]; then
			bash "$TOP/scripts/vma-tests.sh" || true
		fi
		bash "$TOP/scripts/selftest-harness.sh" || true
		echo "# rfp-test-exit: host 0"
	} | tee "$RUN/host.log"
	step_done
	exec bash "$TOP/scripts/summary.sh" "$rc" "${logs[@]}" "$RUN/host.log"
	;;
*)
	die "unknown mode '$mode'"
	;;
esac
