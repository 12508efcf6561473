# help: rfp-stress on tmpfs and ext4 (STRESS_SECONDS=120 each)
# make stress: rfp-stress on tmpfs and ext4, STRESS_SECONDS each.
guest stress "$KERNEL" "$CONFIG"
test_cmd stress "rfp-ktap stress ${STRESS_SECONDS:-120} $STRESS_PROCS $STRESS_THREADS"
