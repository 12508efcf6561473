#!/bin/bash
# Install the Debian packages the harness needs, if any is missing.
. "$(dirname "$0")/lib.sh"
mkdir -p "$RFP_CACHE"

pkgs=(
	linux-source-6.12	# the kernel tree
	build-essential bc bison flex libelf-dev libssl-dev cpio xz-utils kmod
	rsync			# headers_install
	gcc-multilib		# the 32-bit selftest (IA32 emulation)
	qemu-system-x86 busybox-static e2fsprogs
	git perl python3 file
	python3-ply python3-git	# checkpatch.pl runs scripts/spdxcheck.py
	gnuplot-nox		# make bench's plot
	trinity			# make fuzz
	liburcu-dev		# tools/testing/vma, the VMA userland tests
)

missing=()
for p in "${pkgs[@]}"; do
	[ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null)" = installed ] ||
		missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=
if [ "$(id -u)" != 0 ]; then
	command -v sudo >/dev/null || die "missing packages (${missing[*]}) and not root: install them as root"
	sudo=sudo
fi
step "installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
run_logged "$RFP_CACHE/apt.log" $sudo apt-get update ||
	{ tail -n 20 "$RFP_CACHE/apt.log" >&2; die "apt-get update failed"; }
run_logged "$RFP_CACHE/apt.log" $sudo apt-get install -y --no-install-recommends "${missing[@]}" ||
	{ tail -n 20 "$RFP_CACHE/apt.log" >&2; die "apt-get install failed"; }
step_done
