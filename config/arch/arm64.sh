# shellcheck shell=bash
# ARCH=arm64: QEMU's virt machine, cross-compiled with Debian's
# aarch64-linux-gnu toolchain (config/arch/x86_64.sh says what each
# setting is).  The 32-bit kselftest is built for armhf and runs as an
# AArch32 process (CONFIG_COMPAT).

KARCH=arm64
CROSS_COMPILE=aarch64-linux-gnu-
KIMAGE=arch/arm64/boot/Image
QEMU_SYSTEM=qemu-system-aarch64
QEMU_MACHINE=(-M virt)
# pauth-impdef: QEMU's own pointer-authentication hash, much cheaper to
# emulate than the architected one.
QEMU_CPU=max,pauth-impdef=on
KVM_HOST=aarch64
QEMU_DISK=virtio-blk-device
CONSOLE=ttyAMA0
# The virt machine has one UART: the job's output and exit status go on
# two virtio consoles.
GUEST_OUT=hvc0
GUEST_STATUS=hvc1
qemu_ports() { # LOG OUT STATUS
	PORTS=(-serial "file:$1" -device virtio-serial-device
		-chardev "file,id=out,path=$2" -device virtconsole,chardev=out
		-chardev "file,id=status,path=$3" -device virtconsole,chardev=status)
}

USER_CC64=aarch64-linux-gnu-gcc
USER_CC32=arm-linux-gnueabihf-gcc
SELFTEST_ARCH=arm64
SELFTEST_ARCH32=arm
BUSYBOX_ARCH=arm64
USER_SYSROOT_64=/usr/aarch64-linux-gnu
USER_LIBS_64=(/usr/aarch64-linux-gnu/lib)
USER_SYSROOT_32=/usr/arm-linux-gnueabihf
USER_LIBS_32=(/usr/arm-linux-gnueabihf/lib)
NATIVE=0			# (x86_64.sh)
FUNCTION_GRAPH=1
PACKAGES=(qemu-system-arm gcc-aarch64-linux-gnu libc6-dev-arm64-cross)
PACKAGES_32=(gcc-arm-linux-gnueabihf libc6-dev-armhf-cross)
# rfp-compat's peer programs (x86_64.sh): none, the host's are x86_64.
COMPAT_PEERS=()
