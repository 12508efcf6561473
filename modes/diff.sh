# make diff: rfp-diff, the same seeds on the stock and on the patched
# kernel of CONFIG, and the traces compared on the host: a remap answers
# as the stock kernel's does (SPEC section 2).
DIFF_DIRS="/dev/shm /mnt/disk"
for k in stock patched; do
	guest "diff-$k" "$k" "$CONFIG"
	test_cmd rfp-diff "rfp-ktap diff $STEPS '$DIFF_DIRS' $SEEDS"
done
host_step differential diff_compare
