// SPDX-License-Identifier: GPL-2.0
/*
 * librfp-compat.so: the emulation, and the calls that map and unmap.
 *
 * What the kernel does for a remap is an mmap(MAP_FIXED | MAP_SHARED) of
 * the same file over the range, with the VMA's protections, populated
 * unless MAP_NONBLOCK (Documentation/mm/remap_file_pages.rst).  This does
 * the same from user space, after the kernel's checks in its order.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "shim.h"

/*
 * The marker in the sixth argument of the shim's own call to the kernel,
 * which the syscall does not read: "RfpC", twice on 64-bit.  The seccomp
 * filter lets such a call through (shim-trap.c).
 */
#define RFP_MARKER_HALF	0x52667043U
#ifdef __LP64__
#define RFP_MARKER	(((unsigned long)RFP_MARKER_HALF << 32) | RFP_MARKER_HALF)
#else
#define RFP_MARKER	((unsigned long)RFP_MARKER_HALF)
#endif

/* The knobs, set by the constructor (shim-trap.c). */
bool always, quiet;

static _Atomic unsigned long emulated;	/* for tests: rfp_compat_emulated() */
static _Atomic pid_t announced_pid;

unsigned long rfp_compat_emulated(void)
{
	return atomic_load(&emulated);
}

/*
 * A SysV shared memory segment (shmat()) has no file to map: the part the
 * remap asks for is attached anew, moved over the range with mremap(),
 * and the rest detached, so that the range is an attachment of the
 * segment as the kernel's remap makes it (shm_nattch, shmdt()).  The
 * segment's id is the inode number maps shows for "/SYSV<key>".  1: not
 * a segment, or not one this can do (the range past its end, shmat()
 * refused): the caller goes on; else 0 or -errno.
 */
static long remap_sysv(const struct vma *v, unsigned long start,
		       unsigned long size, unsigned long pgoff, int prot,
		       bool locked, unsigned long flags)
{
	unsigned long page = shim_page_size(), off = pgoff * page, len;
	struct shmid_ds ds;
	struct vma named;
	char *at;

	/* Segments live on an internal mount (device 0:N), unlinked. */
	if (v->major || query_vma(start, &named, true) ||
	    strncmp(named.path, "/SYSV", 5) || !strstr(named.path, " (deleted)") ||
	    shmctl(v->ino, IPC_STAT, &ds))
		return 1;
	len = (ds.shm_segsz + page - 1) & ~(page - 1);
	if (pgoff > len / page || size > len - off)
		return 1;
	/* Where shmat() is refused, /proc/self/map_files may still serve. */
	at = shmat(v->ino, NULL, prot & PROT_WRITE ? 0 : SHM_RDONLY);
	if (at == (void *)-1)
		return 1;
	if ((void *)sys(SYS_mremap, at + off, size, size,
			    MREMAP_MAYMOVE | MREMAP_FIXED, start) == MAP_FAILED) {
		shmdt(at);
		return 1;
	}
	if (off)
		sys(SYS_munmap, at, off);
	if (off + size < len)
		sys(SYS_munmap, at + off + size, len - off - size);
	/* As the kernel's mmap() of the segment: its protections, populated. */
	if (mprotect((void *)start, size, prot))
		return -errno;
	if (locked && sys(SYS_mlock, start, size))
		return -errno;
	if (!(flags & MAP_NONBLOCK))
		madvise((void *)start, size, prot & PROT_WRITE ?
			MADV_POPULATE_WRITE : MADV_POPULATE_READ);
	return 0;
}

static long emulate(unsigned long start, unsigned long size,
		    unsigned long prot, unsigned long pgoff, unsigned long flags)
{
	unsigned long page = shim_page_size();
	struct vma v;
	int fd, mflags;
	bool locked, once = false;
	long ret;

	/* The kernel's checks, in its order (mm/remap_file_pages.c). */
	if (prot)
		return -EINVAL;
	start &= ~(page - 1);
	size &= ~(page - 1);
	if (start + size <= start)
		return -EINVAL;
	if (pgoff + size / page < pgoff)
		return -EINVAL;
	ret = lookup(start, start + size, &v, &locked);
	if (ret)
		return ret;

	prot = (v.perms[0] == 'r' ? PROT_READ : 0) |
	       (v.perms[1] == 'w' ? PROT_WRITE : 0) |
	       (v.perms[2] == 'x' ? PROT_EXEC : 0);
	fd = kept_file(&v);
	if (fd < 0) {
		ret = remap_sysv(&v, start, size, pgoff, prot, locked, flags);
		if (ret <= 0) {
			atomic_fetch_add(&emulated, 1);
			return ret;
		}
		fd = find_file(&v, &once);
	}
	if (fd < 0) {
		char a[24], b[24];

		say("rfp-compat: cannot emulate remap_file_pages() at ",
		    ul(a, start, 16), " (", v.path[0] ? v.path : "?",
		    ", inode ", ul(b, v.ino, 10),
		    "): no descriptor for its file (README, \"What it cannot do\")\n",
		    NULL);
		return -ENOSYS;
	}
	mflags = MAP_SHARED | MAP_FIXED | MAP_POPULATE | (flags & MAP_NONBLOCK);
	if (locked)
		mflags |= MAP_LOCKED;
	ret = sys_mmap(start, size, prot, mflags, fd, pgoff) == MAP_FAILED ? -errno : 0;
	if (once)
		done_once(fd, start, size);
	atomic_fetch_add(&emulated, 1);
	return ret;
}

static void announce(void)
{
	char buf[24], comm[32] = "?";
	pid_t pid = self_pid();
	int fd;

	if (quiet || atomic_exchange(&announced_pid, pid) == pid)
		return;
	fd = open("/proc/self/comm", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t n = read(fd, comm, sizeof(comm) - 1);

		comm[n > 0 ? n - 1 : 0] = '\0';
		sys_close(fd);
	}
	say("rfp-compat: ", comm, " (", ul(buf, pid, 10), "): ",
	    always ? "" : "the kernel refuses remap_file_pages(): ",
	    "remap_file_pages() emulated with mmap(MAP_FIXED)\n", NULL);
}

/*
 * Every call, from glibc's wrapper or from the SIGSYS handler: the
 * kernel's answer (0 or -errno), or a value the program's own SIGSYS
 * handler gave.
 *
 * Each call is first made to the kernel, marked, so that the kernel
 * counts and names the caller, a kernel that allows the syscall does the
 * remap itself, and a seccomp filter of the program's own answers as it
 * would without the shim (its errno, or its SIGSYS handler's value).
 * With --always, the call the kernel sees has prot = PROT_READ, which it
 * refuses with EINVAL before it looks at the range (and -ENOSYS where it
 * refuses the syscall): the program's filter still has its say, and the
 * shim emulates.
 */
long rfp_call(unsigned long start, unsigned long size, unsigned long prot,
	      unsigned long pgoff, unsigned long flags)
{
	long ret;
	pid_t outer;

	/* glibc's syscall(), past the shim's, which would emulate it. */
	ret = sys(SYS_remap_file_pages, start, size, always ? PROT_READ : prot,
		  pgoff, flags, RFP_MARKER);

	if (ret != -1)
		return ret;
	if (errno != ENOSYS && !(always && errno == EINVAL))
		return -errno;
	outer = call_begin();
	fork_handler_wanted();
	announce();
	ret = emulate(start, size, prot, pgoff, flags);
	call_end(outer);
	return ret;
}

/* As glibc's wrappers answer: -1 and errno, or the value; errno kept. */
static long rfp_call_errno(unsigned long start, unsigned long size,
			   unsigned long prot, unsigned long pgoff,
			   unsigned long flags)
{
	int saved = errno;
	long ret = rfp_call(start, size, prot, pgoff, flags);

	fork_handler_now();

	if (ret < 0) {
		errno = -ret;
		return -1;
	}
	errno = saved;
	return ret;
}

int remap_file_pages(void *start, size_t size, int prot, size_t pgoff,
		     int flags)
{
	return rfp_call_errno((unsigned long)start, size, prot, pgoff, flags);
}

/*
 * glibc's syscall(), through which most programs make the raw call
 * (PyPy-STM, stress-ng where glibc has no wrapper): its remap is answered
 * here as the wrapper's is, without the seccomp trap, whose signal costs
 * more than the remap.  The arguments are read as glibc's syscall() reads
 * them, six whether the caller passed six or not; so the sixth is not
 * looked at (it may be a marker left on the stack by the shim's own
 * call).  Every other call is glibc's.
 */
long syscall(long nr, ...)
{
	long a[6];
	va_list ap;

	va_start(ap, nr);
	sys_args(a, ap);
	va_end(ap);
	if (nr == SYS_remap_file_pages)
		return rfp_call_errno(a[0], a[1], a[2], a[3], a[4]);
	return sys6(nr, a);
}

/* ---- mmap() and munmap(): the files behind shared mappings ---- */

static bool is_shared(int flags)
{
	int type = flags & MAP_TYPE;

	return type == MAP_SHARED || type == MAP_SHARED_VALIDATE;
}

static bool writable(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl >= 0 && (fl & O_ACCMODE) == O_RDWR;
}

/*
 * A memfd's size counts against RLIMIT_FSIZE, and shared anonymous
 * memory's not: past the limit, ftruncate() would raise SIGXFSZ.
 */
static bool within_file_size_limit(size_t len)
{
	struct rlimit lim;

	return getrlimit(RLIMIT_FSIZE, &lim) || lim.rlim_cur == RLIM_INFINITY ||
	       len <= lim.rlim_cur;
}

/*
 * Shared anonymous memory has no file a process can open: the shim makes
 * it from a memfd, which it keeps while the memory is mapped.  Where no
 * descriptor is to be had, the memory is made as the program asked, and
 * a remap of it needs /proc/self/map_files (README, "What it cannot do").
 */
static void *shared_anon_from_memfd(void *addr, size_t len, int prot,
				    int flags, int *kept)
{
	unsigned long page = shim_page_size();
	bool low;
	int fd;
	void *p;

	/* A quarter of the descriptor limit at most: the program's first. */
	if (!room_for_memfd() ||
	    !within_file_size_limit((len + page - 1) & ~(page - 1)))
		return MAP_FAILED;
	/*
	 * The kernel charges shared anonymous memory against overcommit,
	 * and a memfd not: it is asked first, with the program's flags, so
	 * that what it would refuse is refused (by the fallback's own call).
	 */
	p = sys_mmap(0, len, PROT_NONE, MAP_SHARED | MAP_ANONYMOUS |
		     (flags & MAP_NORESERVE), -1, 0);
	if (p == MAP_FAILED)
		return MAP_FAILED;
	sys(SYS_munmap, p, len);
	fd = shim_fd(sys(SYS_memfd_create, "rfp-compat", MFD_CLOEXEC), true, &low);
	if (fd < 0 || low) {
		if (fd >= 0)
			sys_close(fd);
		return MAP_FAILED;
	}
	if (ftruncate(fd, (len + page - 1) & ~(page - 1))) {
		sys_close(fd);
		return MAP_FAILED;
	}
	p = sys_mmap((unsigned long)addr, len, prot, flags & ~MAP_ANONYMOUS,
		     fd, 0);
	/* Without a slot, the mapping is the program's as it is. */
	if (p == MAP_FAILED || !keep_memfd(fd, (unsigned long)p, len))
		sys_close(fd);
	else
		*kept = fd;
	return p;
}

/* A shared mapping of /dev/zero is shared anonymous memory. */
static bool dev_zero(int fd)
{
	struct stat st;

	return !fstat(fd, &st) && S_ISCHR(st.st_mode) &&
	       st.st_rdev == makedev(1, 5);
}

static void *map_and_keep(void *addr, size_t len, int prot, int flags,
			  int fd, off_t off)
{
	void *p = MAP_FAILED;
	int kept = -1;

	if (is_shared(flags) && !(flags & MAP_HUGETLB) && len &&
	    ((flags & MAP_ANONYMOUS) || (!off && dev_zero(fd))))
		p = shared_anon_from_memfd(addr, len, prot, flags, &kept);
	if (p == MAP_FAILED) {
		if (off & (shim_page_size() - 1)) {
			errno = EINVAL;
			return MAP_FAILED;
		}
		p = sys_mmap((unsigned long)addr, len, prot, flags, fd,
			     (unsigned long)off / shim_page_size());
		if (p == MAP_FAILED)
			return p;
		if (is_shared(flags) && !(flags & MAP_ANONYMOUS) && writable(fd))
			kept = keep_mapped(fd, (unsigned long)p, len);
	}
	if (flags & MAP_FIXED)
		drop_unmapped((unsigned long)p, len, kept);
	locked_mapped((unsigned long)p, len, flags & MAP_LOCKED);
	return p;
}

/* One getpid() for the tables' steps (call_begin()). */
void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	pid_t outer = call_begin();
	void *p = map_and_keep(addr, len, prot, flags, fd, off);

	call_end(outer);
	fork_handler_now();
	return p;
}

/* What programs built with _FILE_OFFSET_BITS=64 call. */
void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off64_t off)
{
	if (off != (off_t)off) {
		/* Past a 32-bit off_t: no file kept, the mapping made. */
		if (off & (shim_page_size() - 1)) {
			errno = EINVAL;
			return MAP_FAILED;
		}
		return sys_mmap((unsigned long)addr, len, prot, flags, fd,
				off / shim_page_size());
	}
	return mmap(addr, len, prot, flags, fd, off);
}

int munmap(void *addr, size_t len)
{
	long ret = sys(SYS_munmap, addr, len);
	pid_t outer;

	if (!ret) {
		outer = call_begin();
		drop_unmapped((unsigned long)addr, len, -1);
		locked_remove((unsigned long)addr, len);
		call_end(outer);
	}
	fork_handler_now();
	return ret;
}

void *mremap(void *old, size_t old_len, size_t new_len, int flags, ...)
{
	void *new = NULL, *p;
	va_list ap;

	if (flags & MREMAP_FIXED) {
		va_start(ap, flags);
		new = va_arg(ap, void *);
		va_end(ap);
	}
	pid_t outer = call_begin();
	bool was_locked = locked_at((unsigned long)old);

	p = (void *)sys(SYS_mremap, old, old_len, new_len, flags, new);
	if (p != MAP_FAILED) {
		locked_remove((unsigned long)old, old_len);
		locked_mapped((unsigned long)p, new_len, was_locked);
		if (flags & MREMAP_FIXED)
			drop_unmapped((unsigned long)p, new_len, -1);
		moved((unsigned long)old, old_len, (unsigned long)p, new_len);
	}
	call_end(outer);
	fork_handler_now();
	return p;
}
