#!/bin/bash
# elf-libs.sh FILE...: the dynamic loader and the libraries that the ELF
# programs and libraries FILE... load, one "GUEST-PATH HOST-PATH" a line,
# without running them (ldd runs the loader, and this host's kernel may
# run neither 32-bit nor foreign programs).  Looked up where ARCH's file
# says (USER_LIBS_64, USER_LIBS_32, by ELF class): the host's own
# libraries keep their paths in the guest; a cross toolchain's (with a
# USER_SYSROOT_*) go to /lib/TRIPLET, where Debian's loader looks, and the
# loader to its own path.
. "$(dirname "$0")/lib.sh"
declare -A seen=()

# LIBDIRS and SYSROOT for ELF file F: ARCH's of its word size
# (config/arch/ARCH.sh).
lib_dirs() { # F
	local class
	class=$(readelf -h "$1" | sed -n 's/^ *Class: *ELF//p')
	case "$class" in
	64) SYSROOT=$USER_SYSROOT_64 LIBDIRS=(${USER_LIBS_64[@]+"${USER_LIBS_64[@]}"}) ;;
	32) SYSROOT=$USER_SYSROOT_32 LIBDIRS=(${USER_LIBS_32[@]+"${USER_LIBS_32[@]}"}) ;;
	*) die "elf-libs.sh: $1: not an ELF file" ;;
	esac
	[ ${#LIBDIRS[@]} -gt 0 ] || die "elf-libs.sh: $1: config/arch/$ARCH.sh has no USER_LIBS_$class"
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
		[ -n "$found" ] || die "elf-libs.sh: $f needs $lib, not found in ${LIBDIRS[*]}"
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
