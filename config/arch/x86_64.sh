# shellcheck shell=bash
# ARCH=x86_64 (the default): everything the harness needs to know about an
# architecture is in a file like this one, read by scripts/lib.sh (models:
# tools/testing/kunit/qemu_configs/, virtme-ng's architectures.py).

KARCH=x86_64			# the kernel's ARCH=
CROSS_COMPILE=			# the kernel's CROSS_COMPILE=
KIMAGE=arch/x86/boot/bzImage	# in the build directory; make's target is its name
QEMU_SYSTEM=qemu-system-x86_64
QEMU_MACHINE=()			# QEMU's default pc machine
QEMU_CPU=max			# under TCG; KVM runs -cpu host
KVM_HOST=x86_64			# KVM when the host's uname -m is this
QEMU_DISK=virtio-blk-pci
CONSOLE=ttyS0			# the kernel log
# The job's output and its exit status, on ports of their own: files
# OUT and STATUS.  The guest's /init is told their names (rfp.out=,
# rfp.status=); the kernel log goes to file LOG on CONSOLE.
GUEST_OUT=ttyS1
GUEST_STATUS=ttyS2
qemu_ports() { # LOG OUT STATUS
	PORTS=(-serial "file:$1" -serial "file:$2" -serial "file:$3")
}

# User space: the compilers of the 64-bit and of the 32-bit programs the
# kernel runs (empty: none of that size).  The test tools are built with
# the first there is; the kselftest as remap_file_pages_64 and _32, one
# with each; rfp-compat's library as librfp-compat.so and
# librfp-compat32.so.  SELFTEST_ARCH is the ARCH= of
# tools/testing/selftests/mm for the 64-bit programs, SELFTEST_ARCH32 for
# the 32-bit ones (where the uapi headers differ too).
USER_CC64=gcc
USER_CC32="gcc -m32"
SELFTEST_ARCH=x86_64
SELFTEST_ARCH32=x86_64
BUSYBOX_ARCH=			# empty: the host's own busybox-static
# Where the libraries of the dynamically linked 64- and 32-bit programs
# are found (rfp-compat's archive: scripts/elf-libs.sh); with a SYSROOT
# (a cross toolchain's), they go to /lib/TRIPLET in the guest, else they
# keep their paths.
USER_SYSROOT_64=
USER_LIBS_64=(/lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu /lib64)
USER_SYSROOT_32=
USER_LIBS_32=(/lib32 /usr/lib32 /lib/i386-linux-gnu /usr/lib/i386-linux-gnu)
# What the guests can do beyond the suite every architecture runs:
# NATIVE=1, they run the host's own programs (trinity and COMPAT_PEERS,
# the host's Debian packages; rfp-compat's test on the host), and the
# host's checks, the same for every ARCH, run once, with this one.
# FUNCTION_GRAPH=1, its kernels can have ftrace's function_graph tracer
# (make profile).
NATIVE=1
FUNCTION_GRAPH=1
# Debian's packages (scripts/deps.sh): QEMU and the compiler of the first
# programs, which every target needs; PACKAGES_32, the compiler of the
# 32-bit ones, only the modes that build them (make run does not).
# -m32: gcc-12-multilib and the i386 kernel headers, not gcc-multilib,
# which conflicts with every cross compiler (ARCH=arm64's).
PACKAGES=(qemu-system-x86)
PACKAGES_32=(gcc-12-multilib linux-libc-dev:i386)
# Debian's programs in rfp-compat's archive: real programs that call
# remap_file_pages(), run under rfp-compat by make compat and make bench,
# and strace, which traces rfp-compat-test (traced_by_strace); the host's
# own, as Debian ships them (dynamically linked), so only where the guest
# runs the host's programs.  Each is a Debian package of that name,
# installed by the modes that need the shim.
COMPAT_PEERS=(stress-ng trinity strace)
