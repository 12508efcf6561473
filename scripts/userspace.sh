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

# The kselftests the harness runs, 64- and 32-bit: statically linked for
# the guests, and dynamically linked in mm-dyn/ for rfp-compat, which
# needs the dynamic loader (the last EXTRA_CFLAGS= wins).
SELFTESTS=(remap_file_pages_64 remap_file_pages_32)
build_selftests() { # OUTDIR WHAT [make args...]
	local out=$1 what=$2 targets=() t
	shift 2
	for t in "${SELFTESTS[@]}"; do
		targets+=("$out/$t")
	done
	mkdir -p "$out"
	mm_selftest_make "$TREE" "$out" "$@" -q "${targets[@]}" >/dev/null 2>&1 && return
	step "building $what kselftests: ${SELFTESTS[*]}"
	if ! mm_selftest_make "$TREE" "$out" "$@" "${targets[@]}" >"$out/build.log" 2>&1; then
		grep -E -A4 'error' "$out/build.log" | head -n 40 >&2 || tail -n 30 "$out/build.log" >&2
		die "building the $what kselftests failed (log: $out/build.log)"
	fi
	step_done
}
build_selftests "$US/mm" static
build_selftests "$US/mm-dyn" "dynamically linked" EXTRA_CFLAGS=

# The demo and the initramfs, by the harness's own makefile.
make -s -f "$TOP/scripts/guest.mk" TOP="$TOP" US="$US" TREE="$TREE" RFP_CACHE="$RFP_CACHE" \
	SELFTESTS="${SELFTESTS[*]}" DYN_SELFTESTS="${SELFTESTS[*]/#/$US/mm-dyn/}"
