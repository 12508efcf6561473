# help: rfp-fuzz against the model, then trinity (CONFIG=debug)
# make fuzz: rfp-fuzz against its model (FUZZ_CALLS calls, seeds 1 to 4),
# then trinity for FUZZ_SECONDS, on the debug kernel.  trinity is the
# host's Debian package: where the guest runs the host's programs
# (NATIVE=1 in config/arch/).

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

if [ "$NATIVE" = 1 ]; then
	needs trinity
	trinity_cpio
	guest fuzz "$KERNEL" debug --cpio "$TRINITY_CPIO"
else
	guest fuzz "$KERNEL" debug
fi
test_cmd fuzz "rfp-ktap fuzz $FUZZ_CALLS 1 2 3 4"
if [ "$NATIVE" = 1 ]; then
	test_cmd trinity "rfp-ktap trinity $FUZZ_SECONDS"
else
	# Exit status 4: kselftest's runner.sh reports a skip.
	test_cmd trinity "echo '# trinity: only the host's own package is at hand (NATIVE=0 in config/arch/$ARCH.sh)'; exit 4"
fi
