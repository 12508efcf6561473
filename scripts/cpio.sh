#!/bin/bash
# Write an initramfs archive with the kernel's usr/gen_init_cpio (built by
# scripts/guest.mk into the userspace directory).
# Usage: cpio.sh OUT.cpio < LIST
#
# Each line of LIST is "DEST SRC": the file SRC at DEST in the archive,
# with mode 0755 when SRC is executable and 0644 otherwise, and the
# directories above DEST before it; or a gen_init_cpio line of its own
# ("dir ...", "nod ...", "slink ..."), kept as it is (a link with the
# directories above it).
. "$(dirname "$0")/lib.sh"
out=${1:?usage: cpio.sh OUT.cpio < LIST}
gen=$US/bin/gen_init_cpio
[ -x "$gen" ] || die "no $gen (scripts/userspace.sh builds it)"

declare -A made=()
parents() { # PATH: the directories above PATH, each once
	local d= p parts
	IFS=/ read -ra parts <<<"${1#/}"
	for p in "${parts[@]:0:${#parts[@]}-1}"; do
		d=$d/$p
		[ -n "${made[$d]:-}" ] || { echo "dir $d 0755 0 0"; made[$d]=1; }
	done
}
list=$(
	while read -r dest src rest; do
		case "$dest" in
		'' | '#'*) continue ;;
		dir | nod | slink)
			# A link's directories before it, as a file's.
			[ "$dest" != slink ] || parents "$src"
			echo "$dest $src $rest"
			[ "$dest" != dir ] || made[$src]=1
			continue ;;
		esac
		[ -e "$src" ] || die "cpio.sh: $src (for $dest) does not exist"
		parents "$dest"
		mode=0644
		[ ! -x "$src" ] || mode=0755
		echo "file $dest $(readlink -f "$src") $mode 0 0"
	done
)
# Written under a name of its own, then renamed: a reader has the old
# archive or the new one, whole, and two writers do not mix.
"$gen" <(echo "$list") >"$out.new.$$" || { rm -f "$out.new.$$"; die "gen_init_cpio failed for $out"; }
mv "$out.new.$$" "$out"
