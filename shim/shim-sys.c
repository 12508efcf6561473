// SPDX-License-Identifier: GPL-2.0
/*
 * librfp-compat.so, the bottom layer: the raw system calls, through
 * glibc's syscall() (past the shim's own, which shim-map.c interposes),
 * which every other part makes.  Async-signal-safe once looked up: the
 * constructor looks glibc's syscall() up, and a constructor that runs
 * before the shim's gets it at its first call.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "shim.h"

/* From the auxiliary vector, so that it is right before any constructor. */
unsigned long shim_page_size(void)
{
	static _Atomic unsigned long size;
	unsigned long s = atomic_load_explicit(&size, memory_order_relaxed);

	if (!s) {
		s = getauxval(AT_PAGESZ);
		if (!s)
			s = 4096;
		atomic_store_explicit(&size, s, memory_order_relaxed);
	}
	return s;
}

static long (*glibc_syscall)(long nr, ...);

/*
 * glibc's syscall(), looked up by the constructor: dlsym() is not
 * async-signal-safe, and a signal handler may make the first call.
 */
void syscall_lookup(void)
{
	if (!glibc_syscall)
		glibc_syscall = dlsym(RTLD_NEXT, "syscall");
}

/*
 * The six arguments of a system call, read as glibc's syscall() reads
 * them, whether the caller passed six or not.
 */
void sys_args(long a[6], va_list ap)
{
	int i;

	for (i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
}

/* System call NR, as glibc's syscall() makes it: -1 and errno, or its value. */
long sys6(long nr, const long a[6])
{
	syscall_lookup();	/* a constructor that runs before the shim's */
	return glibc_syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

long sys(long nr, ...)
{
	long a[6];
	va_list ap;

	va_start(ap, nr);
	sys_args(a, ap);
	va_end(ap);
	return sys6(nr, a);
}

/* mmap() with the offset in pages, as the syscall of each ABI takes it. */
void *sys_mmap(unsigned long addr, unsigned long len, int prot, int flags,
	       int fd, unsigned long pgoff)
{
#ifdef SYS_mmap2
	return (void *)sys(SYS_mmap2, addr, len, prot, flags, fd, pgoff);
#else
	if (pgoff > ~0UL / shim_page_size()) {
		errno = EOVERFLOW;	/* what do_mmap() says to such a pgoff */
		return MAP_FAILED;
	}
	return (void *)sys(SYS_mmap, addr, len, prot, flags, fd,
			   pgoff * shim_page_size());
#endif
}

/* close(), past the shim's own interposer of it. */
long sys_close(int fd)
{
	return sys(SYS_close, fd);
}
