#!/bin/bash
# Build what runs in the guest, for ARCH: the series' kselftests (from the
# patched tree, so that the same binaries test the stock and the patched
# kernel), the demo and test tools, busybox, and the base initramfs.  make
# decides what is out of date.
. "$(dirname "$0")/lib.sh"

bash "$TOP/scripts/tree.sh" patched

# One command builds the user space at a time (a boot copies the archives
# out under the same lock, shared: scripts/boot.sh); the tree is read
# under its shared lock.
lock "$US_LOCK" "building the user space ($US)"
lock "$TREE_LOCK" "building the user space from $KTREE" -s

mkdir -p "$US/bin"

# Exported headers of the patched tree, for each ARCH= the kselftests are
# built for, only when its uapi changed.
uapi_rev=$(git -C "$KTREE" rev-parse HEAD:include/uapi 2>/dev/null)-$(git -C "$KTREE" diff HEAD -- include/uapi 'arch/*/include/uapi' | sha1sum | cut -c1-12)
for a in $(for b in $(user_bits); do
	if [ "$b" = 32 ]; then echo "$SELFTEST_ARCH32"; else echo "$SELFTEST_ARCH"; fi
done | sort -u); do
	hdr=$US/usr-$a
	[ "$(cat "$hdr.rev" 2>/dev/null)" != "$uapi_rev" ] || continue
	step "installing the patched tree's uapi headers (ARCH=$a)"
	run_logged "$US/headers-$a.log" make -C "$KTREE" O="$US/hdr-obj-$a" ARCH="$a" \
		headers_install INSTALL_HDR_PATH="$hdr" ||
		{ tail -n 20 "$US/headers-$a.log" >&2; die "headers_install failed"; }
	echo "$uapi_rev" >"$hdr.rev"
	step_done
done

# The kselftest, remap_file_pages_64 and _32 (each where this ARCH's kernel
# runs programs of that size): statically linked in mm/ for the guests,
# and dynamically linked in mm-dyn/ for rfp-compat, which needs the
# dynamic loader (the last EXTRA_CFLAGS= wins).  The mm Makefile names
# them so on x86_64 only; elsewhere its remap_file_pages is renamed.
# The programs of the first word size go in base.cpio (and compat.cpio),
# those of the second, where a mode needs them (USER32=1), in archives of
# their own, base32.cpio (and compat32.cpio): make run and make check
# build the same base.cpio, and neither rebuilds what the other built.
first=$(USER32=0 user_bits | head -n 1)
SELFTESTS=("remap_file_pages_$first")
SELFTESTS32=()
for b in $(user_bits); do
	[ "$b" = "$first" ] || SELFTESTS32+=("remap_file_pages_$b")
done
build_selftest() { # OUTDIR WHAT BITS [make args...]
	local out=$1 what=$2 b=$3 sarch=$SELFTEST_ARCH opt=() target
	shift 3
	[ "$b" = 64 ] || { sarch=$SELFTEST_ARCH32; opt=(--32); }
	if [ "$sarch" = x86_64 ]; then
		target=$out/remap_file_pages_$b
	else
		target=$out/$b/remap_file_pages
	fi
	mkdir -p "${target%/*}"
	if ! mm_selftest_make "${opt[@]}" "$KTREE" "${target%/*}" "$@" -q "$target" >/dev/null 2>&1; then
		step "building the $what kselftest remap_file_pages_$b"
		if ! mm_selftest_make "${opt[@]}" "$KTREE" "${target%/*}" "$@" "$target" >"$out/build-$b.log" 2>&1; then
			grep -E -A4 'error' "$out/build-$b.log" | head -n 40 >&2 || tail -n 30 "$out/build-$b.log" >&2
			die "building the kselftest remap_file_pages_$b failed (log: $out/build-$b.log)"
		fi
		step_done
	fi
	[ "$target" = "$out/remap_file_pages_$b" ] || cp -p "$target" "$out/remap_file_pages_$b"
}
build_selftests() { # OUTDIR WHAT [make args...]
	local out=$1 what=$2 b
	shift 2
	for b in $(user_bits); do
		build_selftest "$out" "$what" "$b" "$@"
	done
}
build_selftests "$US/mm" static
[ "${SHIM:-0}" != 1 ] || build_selftests "$US/mm-dyn" "dynamically linked" EXTRA_CFLAGS=

# busybox: the host's, or Debian's busybox-static of ARCH (scripts/deps.sh
# unpacks it).
BUSYBOX=/bin/busybox
[ -z "$BUSYBOX_ARCH" ] || BUSYBOX=$RFP_CACHE/debs/busybox-static-$BUSYBOX_ARCH/bin/busybox
[ -x "$BUSYBOX" ] || die "no busybox at $BUSYBOX (scripts/deps.sh installs it)"

# The host's programs of COMPAT_PEERS (config/arch/), by their paths.
peer_paths() {
	local p path
	for p in ${COMPAT_PEERS[@]+"${COMPAT_PEERS[@]}"}; do
		path=$(command -v "$p") || die "$p is not installed (make deps)"
		echo "$path"
	done
}
# The base initramfs always; rfp-compat's (compat.cpio) when the mode
# needs the shim (SHIM=1: scripts/run.sh, needs shim); and their 32-bit
# programs' archives when the mode needs them (scripts/boot.sh adds them).
targets=("$US/base.cpio")
[ ${#SELFTESTS32[@]} = 0 ] || targets+=("$US/base32.cpio")
peers=
if [ "${SHIM:-0}" = 1 ]; then
	targets+=("$US/compat.cpio")
	[ ${#SELFTESTS32[@]} = 0 ] || targets+=("$US/compat32.cpio")
	peers=$(peer_paths) || exit 1
fi
cc32=$USER_CC32
[[ " $(user_bits | tr '\n' ' ')" == *" 32 "* ]] || cc32=

# rfp-compat as its users install it, for the guests (compat.cpio) and
# the host step shim-host: the package's contents, unpacked with dpkg -x
# (scripts/deb.sh builds it when it changed); where the guest does not
# run this machine's programs, shim/'s make install with ARCH's
# compilers.  Unpacked again only when the package or the build changed.
pkgroot=
if [ "${SHIM:-0}" = 1 ]; then
	pkgroot=$US/rfp-compat-root
	if [ "$NATIVE" = 1 ]; then
		bash "$TOP/scripts/deb.sh" "$US/rfp-compat.deb-path" || exit 1
		deb=$(cat "$US/rfp-compat.deb-path")
		from="$deb $(stat -c %Y "$deb")"
		if [ "$(cat "$pkgroot.from" 2>/dev/null)" != "$from" ]; then
			rm -rf "$pkgroot"
			dpkg -x "$deb" "$pkgroot" || die "dpkg -x $deb failed"
			# Its files carry the package's date: newer than the archives.
			find "$pkgroot" -exec touch -h {} +
			echo "$from" >"$pkgroot.from"
		fi
	else
		build=(make -s -C "$TOP/shim" O="$US/shim-build" CC="${USER_CC64:-$USER_CC32}"
			CC32="$([ -n "$USER_CC64" ] && echo "$cc32")")
		"${build[@]}" >/dev/null || die "building rfp-compat failed"
		if [ ! -f "$pkgroot.from" ] ||
			[ -n "$(find "$US/shim-build" "$TOP/shim" "$TOP/docs" -newer "$pkgroot.from" -print -quit)" ]; then
			rm -rf "$pkgroot"
			"${build[@]}" install PREFIX=/usr DESTDIR="$pkgroot" MANIFEST=0 ||
				die "installing rfp-compat into $pkgroot failed"
			touch "$pkgroot.from"
		fi
	fi
fi

# The tools and the initramfs, by the harness's own makefile.
make -s -f "$TOP/scripts/guest.mk" TOP="$TOP" US="$US" KTREE="$KTREE" RFP_CACHE="$RFP_CACHE" \
	CC64="$USER_CC64" CC32="$cc32" BUSYBOX="$BUSYBOX" \
	SELFTESTS="${SELFTESTS[*]}" DYN_SELFTESTS="${SELFTESTS[*]/#/$US/mm-dyn/}" \
	SELFTESTS32="${SELFTESTS32[*]}" DYN_SELFTESTS32="${SELFTESTS32[*]/#/$US/mm-dyn/}" \
	PEERS="${peers//$'\n'/ }" PKGROOT="$pkgroot" "${targets[@]}"
