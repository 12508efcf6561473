#!/bin/bash
# make deb: rfp-compat's Debian package, from debian/ and shim/, built
# with dpkg-buildpackage and debhelper in a copy under DEB_OUT/build (the
# checkout stays clean), checked by lintian, and left as
# DEB_OUT/rfp-compat_VERSION_ARCH.deb.  Built again only when a file it
# is made of changed.  Prints the .deb's path last, or writes it into
# the file PATH-FILE:  deb.sh [PATH-FILE]
#
# Also run by scripts/userspace.sh: the guests of make compat and make
# check run what the package installs (unpacked with dpkg -x).
. "$(dirname "$0")/lib.sh"

cd "$TOP"
version=$(dpkg-parsechangelog -S Version) || die "debian/changelog: no version"
arch=$(dpkg --print-architecture)
deb=$DEB_OUT/rfp-compat_${version}_$arch.deb
say_deb() {
	if [ -n "${1:-}" ]; then echo "$deb" >"$1"; else echo "$deb"; fi
}
srcs=(debian shim docs/decommission.md)

mkdir -p "$DEB_OUT"
lock "$DEB_OUT/.lock" "building rfp-compat's package ($deb)"
# Up to date: no file of the package's newer than it.
if [ -f "$deb" ] && [ -z "$(find "${srcs[@]}" -newer "$deb" -print -quit)" ]; then
	say_deb "${1:-}"
	exit 0
fi

# The man page renders without a warning (lintian asks man too).
warn=$(groff -ww -z -man shim/rfp-compat.1 2>&1) ||
	die "groff cannot render shim/rfp-compat.1: $warn"
[ -z "$warn" ] || die "groff -ww warns about shim/rfp-compat.1:
$warn"

step "building $deb (dpkg-buildpackage; log: $DEB_OUT/build.log)"
build=$DEB_OUT/build
src=$build/rfp-compat-$version
rm -rf "$build"
mkdir -p "$src/docs"
cp -a debian "$src/"
cp -a docs/decommission.md "$src/docs/"
# shim/ as it is in the checkout, without what a build left in it.
mkdir "$src/shim"
find shim -maxdepth 1 -type f -exec cp -a {} "$src/shim/" \;
(cd "$src" && run_logged "$DEB_OUT/build.log" dpkg-buildpackage -us -uc -b) ||
	{ tail -n 30 "$DEB_OUT/build.log" >&2; die "dpkg-buildpackage failed (log: $DEB_OUT/build.log)"; }
step_done

# lintian: no warning nor error, but for the overrides in debian/ (each
# with its reason).
step "lintian $deb"
if ! lintian --fail-on error,warning --info "$build/rfp-compat_${version}_$arch.deb" \
	>"$DEB_OUT/lintian.log" 2>&1; then
	cat "$DEB_OUT/lintian.log" >&2
	die "lintian rejects the package (above; $DEB_OUT/lintian.log)"
fi
step_done
# What it said besides (its note on running as root left out).
grep -v '^running with root privileges' "$DEB_OUT/lintian.log" | sed 's/^/    /' || true
mv "$build/rfp-compat_${version}_$arch.deb" "$deb"
say_deb "${1:-}"
