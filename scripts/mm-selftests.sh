#!/bin/bash
# make mm-selftests: the tree's own mm selftests that run in this guest, on
# the stock and on the patched kernel (same CONFIG), side by side.  Fails
# when the patched kernel fails a case that the stock one passes.
. "$(dirname "$0")/lib.sh"
kernel_vars patched "$CONFIG"	# both kernels of CONFIG: check it

# Those that build statically here and need neither hugetlbfs, THP, KSM,
# userfaultfd nor a module; mremap_test needs MEM=4G.
MM_TESTS=(mremap_test mremap_dontunmap map_fixed_noreplace map_populate
	mlock2-tests mlock-random-test on-fault-limit mrelease_test
	madv_populate mseal_test mdwe_test)

bash "$TOP/scripts/deps.sh"
for k in stock patched; do
	bash "$TOP/scripts/build.sh" "$k" "$CONFIG"
done
bash "$TOP/scripts/userspace.sh"
user_boot_opts

US=$RFP_CACHE/userspace
OUT=$US/mmtests
mkdir -p "$OUT"
built=()
step "building the mm selftests (${MM_TESTS[*]})"
for t in "${MM_TESTS[@]}"; do
	if mm_selftest_make "$TREE" "$OUT" "$OUT/$t" >"$OUT/$t.build.log" 2>&1; then
		built+=("$t")
	else
		note "$t did not build (log: $OUT/$t.build.log); left out"
	fi
done
step_done
[ ${#built[@]} -gt 0 ] || die "no mm selftest built"

for t in "${built[@]}"; do
	echo "/mm/$t $OUT/$t"
done | bash "$TOP/scripts/cpio.sh" "$OUT/mm.cpio"

for k in stock patched; do
	run=$RFP_CACHE/runs/mm-selftests-$k-$CONFIG
	mkdir -p "$run"
	cat >"$run/mm.job" <<'JOB'
# The same address-space layout on both kernels, run after run: with
# ASLR, mremap_test's "40MB Preamble" case fails on about 5% of runs on
# stock and patched alike (6 of 120 each), when its preamble lands on a
# mapping that is_remap_region_valid() did not look at ("Failed to map
# dest preamble region: File exists").
echo 0 >/proc/sys/kernel/randomize_va_space
for t in /mm/*; do
	n=${t##*/}
	echo "# mm-test: $n"
	timeout 600 "$t" >/tmp/out 2>&1
	rc=$?
	grep -E '^(not )?ok [0-9]' /tmp/out | sed "s|^|$n: |"
	# why: what the test printed just before each failure, or its end
	if [ $rc != 0 ]; then
		{ grep -B3 '^not ok' /tmp/out | grep -vE '^(not )?ok |^--$' ||
			tail -n 3 /tmp/out; } | sed "s|^|# mm-why: $n: |"
	fi
	echo "# mm-exit: $n $rc"
done
JOB
	step "mm selftests on the $k kernel"
	bash "$TOP/scripts/boot.sh" --obj "$(kernel_obj "$k" "$CONFIG")" \
		--run "$run" "${BOOT_OPTS[@]}" --mem 4G --cpio "$OUT/mm.cpio" \
		"$run/mm.job" >"$run/mm.log" 2>&1 ||
		{ tail -n 30 "$run/mm.log" >&2; die "the guest run failed on the $k kernel"; }
	step_done
done

# Per test: exit status and TAP counts, stock against patched; and every
# case that passes on stock but not on the patched kernel.
awk '
	FNR == 1 { k = (++nfile == 1) ? "stock" : "patched" }
	{ sub(/\r$/, "") }
	/^# mm-exit: / { rc[k, $3] = $4; tests[$3] = 1; next }
	/^# mm-why: / {
		name = $3; sub(/:$/, "", name)
		line = $0; sub(/^# mm-why: [^:]*: /, "", line)
		why[k, name] = why[k, name] "\n      " line
		next
	}
	/: (not )?ok [0-9]/ {
		name = $1; sub(/:$/, "", name)
		line = $0; sub(/^[^:]*: /, "", line)
		ok = (line !~ /^not ok/)
		skip = (line ~ /# *SKIP/)
		desc = line; sub(/^(not )?ok [0-9]+ */, "", desc)
		res[k, name, desc] = ok ? (skip ? "skip" : "ok") : "FAIL"
		cases[name, desc] = 1
		if (skip) nskip[k, name]++; else if (ok) nok[k, name]++; else nfail[k, name]++
	}
	END {
		printf "%-22s %-26s %-26s\n", "mm selftest", "stock", "patched"
		for (t in tests) {
			for (i = 1; i <= 2; i++) {
				kk = i == 1 ? "stock" : "patched"
				s[i] = sprintf("exit %s, %d ok %d fail %d skip", rc[kk, t], nok[kk, t], nfail[kk, t], nskip[kk, t])
			}
			printf "%-22s %-26s %-26s\n", t, s[1], s[2]
			if (rc["patched", t] != rc["stock", t] && rc["patched", t] != 0 && rc["patched", t] != 4) {
				reg = reg sprintf("\n  %s: exit %s on patched, %s on stock%s", t, rc["patched", t], rc["stock", t], why["patched", t])
				told[t] = 1
			}
		}
		for (c in cases) {
			split(c, p, SUBSEP)
			if (res["patched", p[1], p[2]] == "FAIL" && res["stock", p[1], p[2]] != "FAIL") {
				reg = reg sprintf("\n  %s: %s", p[1], p[2])
				if (!told[p[1]]++)
					reg = reg why["patched", p[1]]
			}
		}
		if (reg != "") { print "regressions (fail on patched, not on stock):" reg; exit 1 }
		print "no regression: the patched kernel fails nothing that the stock one passes"
	}' "$RFP_CACHE/runs/mm-selftests-stock-$CONFIG/out.log" \
	"$RFP_CACHE/runs/mm-selftests-patched-$CONFIG/out.log"
