#!/bin/bash
# Download TREE's kernel source package (config/tree/TREE.sh) from a suite
# the host's apt sources do not name (trixie-backports on Debian 12), with
# an apt configuration of its own under $RFP_CACHE/apt/SUITE: its own
# sources list, package lists and cache.  The .deb is unpacked into
# $RFP_CACHE/src/PACKAGE, not installed; the host's /etc/apt and dpkg
# database are left alone.  Nothing happens when the tarball is there.
# Usage: source.sh [--mirror URI]   (default: the mirror of the host's apt)
. "$(dirname "$0")/lib.sh"

[ -n "$SOURCE_SUITE" ] || die "source.sh: TREE=$TREE's $SOURCE_PKG is installed, not downloaded"
[ -f "$TARBALL" ] && exit 0
# One download at a time; one that waited may find the tarball there.
lock "$RFP_CACHE/src.lock" "downloading $SOURCE_PKG"
[ -f "$TARBALL" ] && exit 0

apt_dir=$RFP_CACHE/apt/$SOURCE_SUITE
dest=$RFP_CACHE/src/$SOURCE_PKG

# The Debian mirror the host's own apt uses for its release (the one that
# serves Debian's main archive, not the security one), so that a machine
# behind a local mirror uses it for this suite too.
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
mirror=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE)' 2>/dev/null |
	awk -v r="$codename" '$2 == r { print $1; exit }')
mirror=${mirror:-http://deb.debian.org/debian/}
case "${1:-}" in
'') ;;
--mirror) mirror=${2:?usage: source.sh [--mirror URI]} ;;
*) die "usage: source.sh [--mirror URI]" ;;
esac
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[ -f "$keyring" ] || die "no $keyring: apt-get install debian-archive-keyring"

mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/dl"
echo "deb [signed-by=$keyring] $mirror $SOURCE_SUITE main" >"$apt_dir/sources.list"
# Dir::State::status: an empty dpkg database, so that apt neither reads
# nor minds what the host has installed; APT::Sandbox::User: the lists
# and the download are root's files in the cache, not _apt's.
: >"$apt_dir/status"
apt_opts=(
	-o "Dir::Etc::sourcelist=$apt_dir/sources.list"
	-o Dir::Etc::sourceparts=/nonexistent
	-o "Dir::State::lists=$apt_dir/lists"
	-o "Dir::State::status=$apt_dir/status"
	-o "Dir::Cache=$apt_dir/cache"
	-o "APT::Architectures::=$(dpkg --print-architecture)"
	-o APT::Sandbox::User=root
)
fail() {
	tail -n 10 "$apt_dir/apt.log" >&2
	die "$1 (above; the whole log: $apt_dir/apt.log).
       $SOURCE_PKG comes from $SOURCE_SUITE at $mirror (sources list: $apt_dir/sources.list).
       If the mirror is unreachable or syncing, try again later; if the package is gone from
       $SOURCE_SUITE, config/tree/$TREE.sh must name the one that replaced it.
       TREE=6.12 does not need this download."
}

step "downloading $SOURCE_PKG from $SOURCE_SUITE ($mirror), with apt's configuration in $apt_dir"
# A mirror being synced fails now and then: once more, then the package
# lists of an earlier update, if there are any.
if ! run_logged "$apt_dir/apt.log" apt-get "${apt_opts[@]}" update &&
	! { sleep 10 && run_logged "$apt_dir/apt.log" apt-get "${apt_opts[@]}" update; }; then
	ls "$apt_dir/lists/"*_Packages* >/dev/null 2>&1 ||
		fail "apt-get update of $SOURCE_SUITE failed"
	note "apt-get update of $SOURCE_SUITE failed; trying the package lists of an earlier one"
fi
rm -f "$apt_dir/dl"/*.deb
(cd "$apt_dir/dl" && run_logged "$apt_dir/apt.log" apt-get "${apt_opts[@]}" download "$SOURCE_PKG") ||
	fail "apt-get download $SOURCE_PKG failed"
deb=$(ls "$apt_dir/dl"/*.deb)
rm -rf "$dest.tmp" && mkdir -p "$dest.tmp"
dpkg-deb -x "$deb" "$dest.tmp"
[ -f "$dest.tmp/usr/src/$SOURCE_PKG.tar.xz" ] || die "$deb has no usr/src/$SOURCE_PKG.tar.xz"
# The version, for the base commit's message.
dpkg-deb -f "$deb" Version >"$dest.tmp/version"
rm -rf "$dest" && mv "$dest.tmp" "$dest"
rm -f "$deb"
note "$SOURCE_PKG $(cat "$dest/version"): $TARBALL"
step_done
