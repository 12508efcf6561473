#!/bin/bash
# Count the TAP results of a check run and print the closing line.
# Usage: summary.sh GUEST_STATUS LOG...
. "$(dirname "$0")/lib.sh"
guest_rc=$1
shift

cat "$@" | tr -d '\r' | awk -v guest_rc="$guest_rc" '
	/^# rfp-test-start: / { bin = $3; seen[bin] = 0; fails[bin] = 0; next }
	/^# rfp-test-exit: / {
		# A binary that died without reporting a failure is one.
		if ($4 != 0 && $4 != 4 && fails[$3] == 0) {
			printf "not ok - %s exited with status %s\n", $3, $4
			failed++
		}
		if (seen[$3] == 0 && $4 != 4) {
			printf "not ok - %s reported no test\n", $3
			failed++
		}
		next
	}
	/^not ok / { failed++; fails[bin]++; seen[bin]++; bad = bad "\n  " bin ": " $0; next }
	/^ok / {
		seen[bin]++
		if ($0 ~ /# *SKIP/) skipped++; else passed++
		next
	}
	END {
		if (guest_rc != 0 && failed == 0) {
			print "not ok - the guest run failed (status " guest_rc ")"
			failed++
		}
		if (bad != "") print "failed:" bad
		printf "%d passed, %d failed, %d skipped\n", passed, failed, skipped
		exit failed != 0
	}'
