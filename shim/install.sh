#!/bin/bash
# install.sh install|uninstall DESTDIR PREFIX BUILDDIR SRCDIR MANIFEST
# (shim/Makefile's install and uninstall; its comment says where each
# file goes).
#
# install puts the files built in BUILDDIR under DESTDIR/PREFIX and, with
# MANIFEST=1, lists each file, link and directory it made in
# PREFIX/lib/rfp-compat/installed; uninstall removes exactly those (the
# directories when they are empty, after the list).  The package
# (debian/rules) installs with MANIFEST=0: dpkg keeps its own list.
set -euo pipefail
what=$1 destdir=$2 prefix=$3 build=$4 src=$5 manifest=$6
die() { echo "rfp-compat: $*" >&2; exit 1; }
case "$prefix" in
/*) ;;
*) die "PREFIX must be an absolute path (got '$prefix')" ;;
esac
root=$destdir$prefix
list=$root/lib/rfp-compat/installed

if [ "$what" = uninstall ]; then
	[ -f "$list" ] || die "nothing to uninstall: no $list (made by make install under this PREFIX and DESTDIR)"
	mapfile -t lines <"$list"
	# Files and links first, the list itself, then the directories
	# install made, the last made first, each only if it is empty.
	for l in "${lines[@]}"; do
		[ "${l%% *}" = dir ] || rm -f "$destdir${l#* }"
	done
	rm -f "$list"
	for ((i = ${#lines[@]} - 1; i >= 0; i--)); do
		l=${lines[i]}
		[ "${l%% *}" != dir ] || rmdir --ignore-fail-on-non-empty "$destdir${l#* }"
	done
	exit 0
fi

[ "$what" = install ] || die "install.sh: install or uninstall, not '$what'"
[ -x "$build/rfp-compat" ] && [ -f "$build/librfp-compat.so" ] ||
	die "nothing built in $build: make -C shim first"
made=()
mkdir_p() { # DIR under DESTDIR: each directory made is listed
	local d=$1 up=()
	while [ -n "$d" ] && [ ! -d "$destdir$d" ]; do
		up=("$d" ${up[@]+"${up[@]}"})
		d=${d%/*}
	done
	[ -z "$destdir" ] || mkdir -p "$destdir"
	for d in ${up[@]+"${up[@]}"}; do
		mkdir -m 0755 "$destdir$d"
		made+=("dir $d")
	done
}
put() { # MODE SRC DEST
	mkdir_p "${3%/*}"
	install -m "$1" "$2" "$destdir$3"
	made+=("file $3")
}
link() { # TARGET DEST
	mkdir_p "${2%/*}"
	ln -sfn "$1" "$destdir$2"
	made+=("link $2")
}
lib=$prefix/lib/rfp-compat
put 0755 "$build/rfp-compat" "$lib/rfp-compat"
put 0644 "$build/librfp-compat.so" "$lib/librfp-compat.so"
if [ -f "$build/librfp-compat32.so" ]; then
	put 0644 "$build/librfp-compat32.so" "$prefix/lib32/rfp-compat/librfp-compat.so"
	link ../../lib32/rfp-compat/librfp-compat.so "$lib/librfp-compat32.so"
fi
link ../lib/rfp-compat/rfp-compat "$prefix/bin/rfp-compat"
put 0644 "$src/rfp-compat.1" "$prefix/share/man/man1/rfp-compat.1"
# The reference and the admin's path, where the man page says.
put 0644 "$src/README.md" "$prefix/share/doc/rfp-compat/README.md"
put 0644 "$src/../docs/decommission.md" "$prefix/share/doc/rfp-compat/decommission.md"
# In the order made; an install over an install keeps the first list's
# lines (its directories) and adds the new ones.
if [ "$manifest" = 1 ]; then
	{
		[ ! -f "$list" ] || cat "$list"
		printf '%s\n' "${made[@]}"
	} | awk '!seen[$0]++' >"$list.new"
	mv "$list.new" "$list"
fi
