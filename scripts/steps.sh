# The host's part of the modes: functions that modes/*.sh name, and that
# print TAP result lines.  Sourced by scripts/run.sh (RUN, CONFIG, TOP).
# shellcheck shell=bash

# The series' style, tools/testing/vma, and the harness's own promises.
# The first two are the same whatever the kernel's config, and so are
# most of the third: CONFIG=debug runs only what its kernel adds (CI runs
# make check, then make check CONFIG=debug).
host_checks() {
	local rc=0
	if [ "$CONFIG" = base ]; then
		bash "$TOP/scripts/patches.sh" checkpatch || rc=1
		if [ "$KERNEL" = patched ]; then
			bash "$TOP/scripts/vma-tests.sh" || rc=1
		fi
	fi
	bash "$TOP/scripts/selftest-harness.sh" || rc=1
	return "$rc"
}

# The traces of the diff-stock and diff-patched guests (modes/diff.sh),
# one file a seed and directory (seed-1-shm.txt...), copied out of the
# /traces directory of the guest's ext4 image into DIR.
unpack_traces() { # GUEST DIR
	rm -rf "$2" "$2.dump"
	mkdir -p "$2.dump"
	debugfs -R "rdump /traces $2.dump" "$RUN/$1/disk.img" >/dev/null 2>&1 || true
	mv "$2.dump/traces" "$2" 2>/dev/null || mkdir -p "$2"
	rm -rf "$2.dump"
}

# Each trace of the patched kernel must be the stock kernel's, and both
# must have run to their end.
diff_compare() {
	local s d a b what rc=0
	unpack_traces diff-stock "$RUN/traces/stock"
	unpack_traces diff-patched "$RUN/traces/patched"
	for d in $DIFF_DIRS; do
		for s in $SEEDS; do
			a=$RUN/traces/stock/seed-$s-${d##*/}.txt
			b=$RUN/traces/patched/seed-$s-${d##*/}.txt
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
			rc=1
			if [ -s "$a" ] && [ -s "$b" ]; then
				{ diff -u --label "stock $a" --label "patched $b" "$a" "$b" || true; } |
					head -n 40 | sed 's/^/# /'
			fi
		done
	done
	return "$rc"
}

# Trinity, Debian's, dynamically linked: its libraries go in an archive of
# their own, TRINITY_CPIO.
trinity_cpio() {
	local f
	command -v trinity >/dev/null || die "trinity is not installed (make deps)"
	TRINITY_CPIO=$US/trinity.cpio
	{
		echo "/usr/bin/trinity $(command -v trinity)"
		for f in $(ldd "$(command -v trinity)" | grep -o '/[^ ]*'); do
			echo "$f $f"
		done
	} | bash "$TOP/scripts/cpio.sh" "$TRINITY_CPIO" ||
		die "cannot make $TRINITY_CPIO"
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

# make bench: both kernels' rfp-bench output side by side.
bench_report() {
	local k
	mkdir -p "$BENCH_OUT"
	for k in stock patched; do
		if ! guest_file "bench-$k" /bench.txt "$BENCH_OUT/$k.txt"; then
			echo "not ok - no rfp-bench output from the $k kernel"
			return 1
		fi
	done
	if ! guest_file bench-compat /bench.txt "$BENCH_OUT/shim.txt"; then
		echo "not ok - no rfp-bench output from rfp-compat"
		return 1
	fi
	python3 "$TOP/scripts/bench-report.py" "$BENCH_OUT/stock.txt" \
		"$BENCH_OUT/patched.txt" "$BENCH_OUT" "$BENCH_OUT/shim.txt" | sed 's/^/# /'
	[ "${PIPESTATUS[0]}" = 0 ] || { echo "not ok - bench-report.py failed"; return 1; }
	echo "ok - the table above, also in $BENCH_OUT/bench.json"
	[[ " ${COMPAT_PEERS[*]-} " == *" stress-ng "* ]] || return 0
	stress_ng_report
}

# stress-ng --remap on the kernel's emulation and under rfp-compat.
stress_ng_report() {
	local k ns kernel shim
	for k in patched compat; do
		if ! guest_file "bench-$k" /stress-ng.txt "$BENCH_OUT/stress-ng-$k.txt"; then
			echo "not ok - no stress-ng output from bench-$k"
			return 1
		fi
		ns=$(sed -n 's/.* remap  *\([0-9.]*\) nanosecs per page remap.*/\1/p' \
			"$BENCH_OUT/stress-ng-$k.txt")
		if [ -z "$ns" ]; then
			echo "not ok - bench-$k: stress-ng printed no time per remap ($BENCH_OUT/stress-ng-$k.txt)"
			return 1
		fi
		if [ $k = patched ]; then kernel=$ns; else shim=$ns; fi
	done
	echo "# stress-ng --remap, guest instructions per page remap: kernel $kernel, rfp-compat $shim ($(echo "scale=2; $shim / $kernel" | bc)x)"
	echo "ok - stress-ng's cost under rfp-compat"
}

profile_report() {
	local k out=$BENCH_OUT/profile-$SCENARIO
	mkdir -p "$out"
	for k in stock patched; do
		mkdir -p "$out/$k"
		for f in profile.txt profile-plain.txt profile-traced.txt; do
			guest_file "profile-$k" "/$f" "$out/$k/$f" && continue
			echo "not ok - no $f from the $k kernel"
			return 1
		done
	done
	python3 "$TOP/scripts/profile-report.py" "$SCENARIO" "$DEPTH" \
		"$out/stock" "$out/patched" "$out" | sed 's/^/# /'
	[ "${PIPESTATUS[0]}" = 0 ] || { echo "not ok - profile-report.py failed"; return 1; }
	echo "ok - the profile above, also in $out"
}

# make mm-selftests: build TESTS from the patched tree, statically, into an
# archive of their own (MM_CPIO, in /mm); MM_BUILT: those that built.
mm_selftests_cpio() { # TESTS...
	local out=$US/mmtests t
	user_space
	mkdir -p "$out"
	MM_BUILT=()
	MM_UNBUILT=()
	step "building the mm selftests ($*)" >&2
	for t in "$@"; do
		if mm_selftest_make $([ -n "$USER_CC64" ] || echo --32) "$KTREE" "$out" "$out/$t" >"$out/$t.build.log" 2>&1; then
			MM_BUILT+=("$t")
		else
			MM_UNBUILT+=("$t")
			note "$t did not build (log: $out/$t.build.log); left out" >&2
		fi
	done
	step_done >&2
	[ ${#MM_BUILT[@]} -gt 0 ] || die "no mm selftest built"
	for t in "${MM_BUILT[@]}"; do
		echo "/mm/$t $out/$t"
	done | bash "$TOP/scripts/cpio.sh" "$out/mm.cpio"
	MM_CPIO=$out/mm.cpio
}

# make mm-selftests: each test's results, stock against patched.
mm_compare() {
	guest_file mm-stock /collected "$RUN/collected-stock" &&
		guest_file mm-patched /collected "$RUN/collected-patched" ||
		{ echo "not ok - the collected results are missing"; return 1; }
	# Said in the results, not only while building.
	for t in ${MM_UNBUILT[@]+"${MM_UNBUILT[@]}"}; do
		echo "ok - $t # SKIP did not build statically here ($US/mmtests/$t.build.log)"
	done
	python3 "$TOP/scripts/mm-compare.py" "$RUN/collected-stock" "$RUN/collected-patched"
}

# rfp-compat's own test on this machine's kernel, where the syscall is
# allowed: with --always the shim emulates every call.  Its result lines,
# and a failure when it printed fewer than its plan.
shim_host_tests() {
	local log=$RUN/shim-host.log dir plan n rc=0
	dir=$(mktemp -d)
	(cd "$dir" && "$US/compat/rfp-compat" -q --always "$US/compat/rfp-compat-test") \
		>"$log" 2>&1 || rc=$?
	rm -rf "$dir"
	grep -E '^(not )?ok |^# ' "$log" || true
	plan=$(sed -n 's/^1\.\.\([0-9][0-9]*\)$/\1/p' "$log" | head -n 1)
	n=$(grep -cE '^(not )?ok ' "$log" || true)
	if [ -z "$plan" ] || [ "$n" != "$plan" ]; then
		echo "not ok - rfp-compat-test printed $n results of its plan of ${plan:-none} ($log)"
		return 1
	fi
	return "$rc"
}
