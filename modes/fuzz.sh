# make fuzz: rfp-fuzz against its model (FUZZ_CALLS calls, seeds 1 to 4),
# then trinity for FUZZ_SECONDS, on the debug kernel.
trinity_cpio
guest fuzz "$KERNEL" debug --cpio "$TRINITY_CPIO"
test_cmd fuzz "rfp-ktap fuzz $FUZZ_CALLS 1 2 3 4"
test_cmd trinity "rfp-ktap trinity $FUZZ_SECONDS"
