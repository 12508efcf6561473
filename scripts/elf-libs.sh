#!/bin/bash
# elf-libs.sh FILE...: the dynamic loader and the libraries that the ELF
# programs and libraries FILE... load, one path a line, without running
# them (ldd runs the loader, and this host's kernel may have no 32-bit
# support).  Looked up where Debian puts them, by word size.
set -euo pipefail
declare -A seen=()
dirs64=(/lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu /lib64)
dirs32=(/lib32 /usr/lib32 /lib/i386-linux-gnu /usr/lib/i386-linux-gnu)

walk() { # FILE
	local f=$1 cls lib d found
	cls=$(readelf -h "$f" | sed -n 's/^ *Class: *//p')
	readelf -l "$f" 2>/dev/null | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p' |
		while read -r interp; do echo "$interp"; done
	for lib in $(readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
		found=
		if [ "$cls" = ELF32 ]; then set -- "${dirs32[@]}"; else set -- "${dirs64[@]}"; fi
		for d in "$@"; do
			[ -e "$d/$lib" ] && { found=$d/$lib; break; }
		done
		[ -n "$found" ] || { echo "elf-libs.sh: $f needs $lib, not found" >&2; exit 1; }
		[ -z "${seen[$found]:-}" ] || continue
		seen[$found]=1
		echo "$found"
		walk "$found"
	done
}

for f in "$@"; do
	walk "$f"
done | sort -u
