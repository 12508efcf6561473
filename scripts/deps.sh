#!/bin/bash
# Install the Debian packages a target needs, if any is missing.  Usage:
#   deps.sh [NEED...]
# With no NEED, what every target needs: the kernel's build tools, the
# kernel tree's source package, ARCH's QEMU and compiler of its first
# programs (config/arch/ARCH.sh: PACKAGES), and ARCH's busybox-static,
# which is downloaded and unpacked into the cache (not installed: it would
# replace the host's).  That is all make run, make shell and make kernel
# need.  The modes add theirs (modes/*.sh: needs):
#   user32      the second word size's programs (ARCH's PACKAGES_32)
#   shim        rfp-compat's peer programs (ARCH's COMPAT_PEERS), and
#               what builds its package (the guests run its contents)
#   deb         what make deb runs: debhelper, lintian, groff, and on amd64
#               gcc-12-multilib (the package's i386 library; not
#               gcc-multilib, which conflicts with make configs' cross
#               compilers)
#   checkpatch  what scripts/checkpatch.pl runs
#   trinity     the fuzzer of make fuzz
#   plot        the charts of make bench and make profile
#   configs     make configs' cross compilers and sparse
#   all         every one of them (make deps)
. "$(dirname "$0")/lib.sh"
mkdir -p "$RFP_CACHE"

pkgs=(
	build-essential bc bison flex libelf-dev libssl-dev cpio xz-utils kmod
	rsync			# headers_install
	busybox-static e2fsprogs
	git perl python3 file
	"${PACKAGES[@]}"	# ARCH's QEMU and compiler
)
[ $# -gt 0 ] || set -- core
[ "$*" != all ] || set -- user32 shim deb checkpatch trinity plot configs
# rfp-compat's package (scripts/deb.sh).
deb_pkgs=(debhelper dpkg-dev lintian groff-base)
[ "$(dpkg --print-architecture)" != amd64 ] || deb_pkgs+=(gcc-12-multilib)
for need in "$@"; do
	case "$need" in
	core) ;;
	user32) pkgs+=(${PACKAGES_32[@]+"${PACKAGES_32[@]}"}) ;;
	shim) pkgs+=(${COMPAT_PEERS[@]+"${COMPAT_PEERS[@]}"} "${deb_pkgs[@]}") ;;
	deb) pkgs+=("${deb_pkgs[@]}") ;;
	checkpatch) pkgs+=(python3-ply python3-git) ;; # scripts/spdxcheck.py
	trinity) pkgs+=(trinity) ;;
	plot) pkgs+=(gnuplot-nox) ;;
	configs) pkgs+=(gcc-aarch64-linux-gnu gcc-riscv64-linux-gnu sparse) ;;
	*) die "deps.sh: no need '$need' (core, user32, shim, deb, checkpatch, trinity, plot, configs or all)" ;;
	esac
done

# make deb (deb alone) builds no kernel and boots nothing: only the
# compiler and the package's tools, no kernel source, no busybox.
if [ "$*" = deb ]; then
	pkgs=(build-essential "${deb_pkgs[@]}")
	SOURCE_PKG= SOURCE_SUITE= BUSYBOX_ARCH=
fi

# The kernel tree: a package of the host's apt sources is installed; one of
# another suite is downloaded into the cache (scripts/source.sh, at the end).
[ -n "$SOURCE_SUITE" ] || [ -z "$SOURCE_PKG" ] || pkgs+=("$SOURCE_PKG")

missing=()
for p in "${pkgs[@]}"; do
	[ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null)" = installed ] ||
		missing+=("$p")
done
bb=$RFP_CACHE/debs/busybox-static-$BUSYBOX_ARCH
[ ${#missing[@]} -eq 0 ] && { [ -z "$BUSYBOX_ARCH" ] || [ -x "$bb/bin/busybox" ]; } &&
	{ [ -z "$SOURCE_SUITE" ] || [ -f "$TARBALL" ]; } && exit 0

# One command installs at a time (apt would refuse a second); the next one
# finds what the first installed.
lock "$RFP_CACHE/deps.lock" "installing packages"
sudo=
if [ "$(id -u)" != 0 ]; then
	command -v sudo >/dev/null || die "missing packages (${missing[*]} busybox-static:$BUSYBOX_ARCH) and not root: install them as root"
	sudo=sudo
fi
export DEBIAN_FRONTEND=noninteractive
updated=0
# A mirror that is being synced fails one index now and then ("File has
# unexpected size ... Mirror sync in progress?"): try once more, then go
# on with the lists apt has; only a failed install is an error.
apt_update() {
	[ "$updated" = 0 ] || return 0
	updated=1
	run_logged "$RFP_CACHE/apt.log" $sudo apt-get update && return 0
	note "apt-get update failed; trying once more in 10 s"
	sleep 10
	run_logged "$RFP_CACHE/apt.log" $sudo apt-get update && return 0
	grep -E '^(E|W): ' "$RFP_CACHE/apt.log" | head -n 5 | sed 's/^/    /' >&2
	note "apt-get update failed twice (above); installing with the package lists apt has"
}
# A Multi-Arch: same package of another architecture (linux-libc-dev:i386)
# must have the version of the native one.  When an index is missing the
# two can differ: ask for the newest version both architectures have,
# both of them (a downgrade of the native one, if need be).
pair_multiarch() { # NAME:ARCH -> the apt-get install arguments
	local name=${1%%:*} v
	v=$(comm -12 <(apt-cache madison "$name" | awk '{print $3}' | sort -u) \
		<(apt-cache madison "$1" | awk '{print $3}' | sort -u) | sort -V | tail -n 1)
	if [ -n "$v" ]; then
		echo "$name=$v $1=$v"
	else
		echo "$1"
	fi
}
# Debian multiarch: a package of another architecture (NAME:ARCH) needs
# that architecture in dpkg's list.
add_arch() { # DEBIAN-ARCH
	dpkg --print-foreign-architectures | grep -qx "$1" && return
	[ "$1" = "$(dpkg --print-architecture)" ] && return
	$sudo dpkg --add-architecture "$1"
	updated=0
}
if [ ${#missing[@]} -gt 0 ]; then
	step "installing ${missing[*]}"
	for p in "${missing[@]}"; do
		case "$p" in *:*) add_arch "${p#*:}" ;; esac
	done
	apt_update
	args=()
	for p in "${missing[@]}"; do
		case "$p" in
		*:*) read -ra a <<<"$(pair_multiarch "$p")"; args+=("${a[@]}") ;;
		*) args+=("$p") ;;
		esac
	done
	run_logged "$RFP_CACHE/apt.log" $sudo apt-get install -y --no-install-recommends \
		--allow-downgrades "${args[@]}" ||
		{
			tail -n 20 "$RFP_CACHE/apt.log" >&2
			die "apt-get install failed (above; the whole log: $RFP_CACHE/apt.log).
       If an index failed to download, the mirror may be syncing: 'make deps' again later."
		}
	step_done
fi
if [ -n "$BUSYBOX_ARCH" ] && [ ! -x "$bb/bin/busybox" ]; then
	step "downloading busybox-static:$BUSYBOX_ARCH (Debian multiarch) into $bb"
	add_arch "$BUSYBOX_ARCH"
	apt_update
	rm -rf "$bb" "$bb.deb.d"
	mkdir -p "$bb.deb.d"
	# apt-get download writes to the current directory, as _apt when it can.
	chmod 777 "$bb.deb.d"
	(cd "$bb.deb.d" && run_logged "$RFP_CACHE/apt.log" apt-get download "busybox-static:$BUSYBOX_ARCH") ||
		{ tail -n 20 "$RFP_CACHE/apt.log" >&2; die "apt-get download busybox-static:$BUSYBOX_ARCH failed"; }
	dpkg-deb -x "$bb.deb.d"/busybox-static_*.deb "$bb"
	rm -rf "$bb.deb.d"
	[ -x "$bb/bin/busybox" ] || die "busybox-static:$BUSYBOX_ARCH has no bin/busybox"
	step_done
fi
[ -z "$SOURCE_SUITE" ] || bash "$TOP/scripts/source.sh"
