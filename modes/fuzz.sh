# make fuzz: rfp-fuzz against its model (FUZZ_CALLS calls, seeds 1 to 4),
# then trinity for FUZZ_SECONDS, on the debug kernel.  trinity is the
# host's Debian package: x86_64 only.
if [ "$ARCH" = x86_64 ]; then
	needs trinity
	trinity_cpio
	guest fuzz "$KERNEL" debug --cpio "$TRINITY_CPIO"
else
	guest fuzz "$KERNEL" debug
fi
test_cmd fuzz "rfp-ktap fuzz $FUZZ_CALLS 1 2 3 4"
if [ "$ARCH" = x86_64 ]; then
	test_cmd trinity "rfp-ktap trinity $FUZZ_SECONDS"
else
	# Exit status 4: kselftest's runner.sh reports a skip.
	test_cmd trinity "echo '# trinity: only the host's x86_64 package is at hand'; exit 4"
fi
