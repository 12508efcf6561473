# shellcheck shell=bash
# ARCH=i386: a 32-bit x86 kernel on QEMU's pc machine (config/arch/x86_64.sh
# says what each setting is).  The native kselftest is the 32-bit one.

KARCH=i386
CROSS_COMPILE=
KIMAGE=arch/x86/boot/bzImage
QEMU_SYSTEM=qemu-system-i386
QEMU_MACHINE=()
QEMU_CPU=max
KVM_HOST=x86_64
QEMU_DISK=virtio-blk-pci
CONSOLE=ttyS0
GUEST_OUT=ttyS1
GUEST_STATUS=ttyS2
qemu_ports() { # LOG OUT STATUS
	PORTS=(-serial "file:$1" -serial "file:$2" -serial "file:$3")
}

USER_CC64=
USER_CC32="gcc -m32"
SELFTEST_ARCH=
SELFTEST_ARCH32=i386
BUSYBOX_ARCH=i386		# Debian's busybox-static:i386, unpacked
USER_SYSROOT_64=
USER_LIBS_64=()
USER_SYSROOT_32=
USER_LIBS_32=(/lib32 /usr/lib32 /lib/i386-linux-gnu /usr/lib/i386-linux-gnu)
NATIVE=0			# (x86_64.sh)
# x86_32 has function_graph only in kernels not built for size, which
# tinyconfig's are: its instructions would not be make bench's.
FUNCTION_GRAPH=0
PACKAGES=(qemu-system-x86 gcc-12-multilib linux-libc-dev:i386)
PACKAGES_32=()			# its only programs are the 32-bit ones
# rfp-compat's peer programs (x86_64.sh): none, the host's are x86_64.
COMPAT_PEERS=()
