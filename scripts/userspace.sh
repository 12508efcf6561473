#!/bin/bash
# Build what runs in the guest: the series' kselftests (from the patched
# tree, so that the same binaries test the stock and the patched kernel),
# the demo, and the base initramfs.  make decides what is out of date.
. "$(dirname "$0")/lib.sh"

bash "$TOP/scripts/tree.sh" patched

US=${RFP_CACHE}/userspace
HDR=${US}/usr
mkdir -p "$US/mm" "$US/bin"

# Exported headers of the patched tree, only when its uapi changed.
uapi_rev=$(git -C "$TREE" rev-parse HEAD:include/uapi 2>/dev/null)-$(git -C "$TREE" diff HEAD -- include/uapi arch/x86/include/uapi | sha1sum | cut -c1-12)
if [ "$(cat "$US/uapi.rev" 2>/dev/null)" != "$uapi_rev" ]; then
	step "installing the patched tree's uapi headers"
	run_logged "$US/headers.log" make -C "$TREE" O="$US/hdr-obj" ARCH=x86_64 \
		headers_install INSTALL_HDR_PATH="$HDR" ||
		{ tail -n 20 "$US/headers.log" >&2; die "headers_install failed"; }
	echo "$uapi_rev" >"$US/uapi.rev"
	step_done
fi

# The kselftests the harness runs, 64- and 32-bit, statically linked.
SELFTESTS=(remap_file_pages_64 remap_file_pages_32)
targets=()
for t in "${SELFTESTS[@]}"; do
	targets+=("$US/mm/$t")
done
if ! mm_selftest_make "$TREE" "$US/mm" -q "${targets[@]}" >/dev/null 2>&1; then
	step "building kselftests: ${SELFTESTS[*]}"
	if ! mm_selftest_make "$TREE" "$US/mm" "${targets[@]}" \
		>"$US/selftests.log" 2>&1; then
		grep -E -A4 'error' "$US/selftests.log" | head -n 40 >&2 || tail -n 30 "$US/selftests.log" >&2
		die "building the kselftests failed (log: $US/selftests.log)"
	fi
	step_done
fi

# The demo and the initramfs, by the harness's own makefile.
make -s -f "$TOP/scripts/guest.mk" TOP="$TOP" US="$US" TREE="$TREE" RFP_CACHE="$RFP_CACHE" \
	SELFTESTS="${SELFTESTS[*]}"
