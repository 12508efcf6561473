#!/bin/bash
# elf-libs.sh FILE...: the dynamic loader and the libraries that the ELF
# programs and libraries FILE... load, one "GUEST-PATH HOST-PATH" a line,
# without running them (ldd runs the loader, and this host's kernel may
# run neither 32-bit nor foreign programs).  Looked up where Debian puts
# them, by ELF machine and class: the host's own libraries (x86) keep
# their paths in the guest; a cross toolchain's (arm64, armhf) go to
# /lib/TRIPLET, where Debian's loader looks, and the loader to its own
# path.
set -euo pipefail
declare -A seen=()

# LIBDIRS and SYSROOT for ELF file F.
lib_dirs() { # F
	local hdr machine
	hdr=$(readelf -h "$1")
	machine=$(sed -n 's/^ *Machine: *//p' <<<"$hdr")
	SYSROOT=
	case "$machine" in
	*X86-64*) LIBDIRS=(/lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu /lib64) ;;
	*80386*) LIBDIRS=(/lib32 /usr/lib32 /lib/i386-linux-gnu /usr/lib/i386-linux-gnu) ;;
	*AArch64*) SYSROOT=/usr/aarch64-linux-gnu LIBDIRS=("$SYSROOT/lib") ;;
	ARM) SYSROOT=/usr/arm-linux-gnueabihf LIBDIRS=("$SYSROOT/lib") ;;
	*) echo "elf-libs.sh: $1: no library directories for machine '$machine'" >&2; exit 1 ;;
	esac
}

walk() { # FILE
	local f=$1 lib d found interp
	lib_dirs "$f"
	interp=$(readelf -l "$f" 2>/dev/null | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p')
	if [ -z "$interp" ]; then
		:
	elif [ -n "$SYSROOT" ]; then
		echo "$interp $SYSROOT/lib/${interp##*/}"
	else
		echo "$interp $interp"
	fi
	for lib in $(readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
		found=
		for d in "${LIBDIRS[@]}"; do
			[ -e "$d/$lib" ] && { found=$d/$lib; break; }
		done
		[ -n "$found" ] || { echo "elf-libs.sh: $f needs $lib, not found" >&2; exit 1; }
		[ -z "${seen[$found]:-}" ] || continue
		seen[$found]=1
		if [ -n "$SYSROOT" ]; then
			echo "/lib/${SYSROOT##*/}/$lib $found"
		else
			echo "$found $found"
		fi
		walk "$found"
		lib_dirs "$f"
	done
}

for f in "$@"; do
	walk "$f"
done | sort -u
