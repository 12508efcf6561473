// SPDX-License-Identifier: GPL-2.0
/*
 * librfp-compat.so: remap_file_pages() for programs that still call it,
 * on a kernel that refuses it (vm.remap_file_pages = 0, or built without
 * CONFIG_REMAP_FILE_PAGES).  Load it with rfp-compat PROGRAM, or with
 * LD_PRELOAD.
 *
 * What the kernel does for a remap is an mmap(MAP_FIXED | MAP_SHARED) of
 * the same file over the range, with the VMA's protections, populated
 * unless MAP_NONBLOCK (Documentation/mm/remap_file_pages.rst).  This does
 * the same from user space:
 *
 *  - The calls.  glibc's remap_file_pages() is interposed; raw syscall()
 *    users are caught by a seccomp filter that traps remap_file_pages alone
 *    (SECCOMP_RET_TRAP) into a SIGSYS handler, which answers in the
 *    interrupted syscall's return register.  Each process asks the kernel
 *    first (the filter lets the shim's own call through: it carries a
 *    marker in the unused sixth argument), so the kernel still counts and
 *    names the caller, and a kernel that allows the syscall does the remap
 *    itself.  After the first -ENOSYS, the process's calls are emulated.
 *
 *  - The checks.  The kernel's, in its order, from /proc/self/smaps: the
 *    VMA at start must be VM_SHARED ("sh"), a range that leaves it must go
 *    on through VMAs of the same file with the same flags, without a hole.
 *    Then mmap() itself refuses what do_mmap() refuses (seals, MDWE, the
 *    LSM, vm.max_map_count), with the mapping unchanged.
 *
 *  - The file.  A descriptor for the VMA's file is found, in this order:
 *    one the shim keeps (mmap() is interposed: each file it maps shared is
 *    dup()ed once, and shared anonymous mappings are made from a memfd,
 *    which the shim keeps until the last mapping of it is unmapped); one
 *    of the program's own (/proc/self/fd, opened for writing, as a VM_SHARED
 *    VMA's file must have been); /proc/self/map_files (needs
 *    CAP_CHECKPOINT_RESTORE); the path in /proc/self/maps.  Each candidate
 *    is checked against the VMA's device and inode.  When there is none,
 *    the call fails with the kernel's -ENOSYS, and the shim says why.
 *
 * Knobs (environment, rfp-compat sets them): RFP_COMPAT_QUIET=1 keeps the
 * one line a process prints when it first emulates a call;
 * RFP_COMPAT_SECCOMP=0 catches only glibc's wrapper (no filter);
 * RFP_COMPAT_ALWAYS=1 emulates without asking the kernel first.
 *
 * The SIGSYS handler uses only async-signal-safe calls and the stack.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <ucontext.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#ifndef MFD_CLOEXEC
#define MFD_CLOEXEC 0x0001U
#endif
#ifndef MAP_SHARED_VALIDATE
#define MAP_SHARED_VALIDATE 0x03
#endif
#ifndef SYS_SECCOMP
#define SYS_SECCOMP 1
#endif

/*
 * PROCMAP_QUERY (Linux 6.11, <linux/fs.h>): one VMA from /proc/self/maps
 * by address, without formatting the others.  Spelled out here, for
 * older headers.
 */
struct rfp_procmap_query {
	uint64_t size, query_flags, query_addr, vma_start, vma_end, vma_flags;
	uint64_t vma_page_size, vma_offset, inode;
	uint32_t dev_major, dev_minor, vma_name_size, build_id_size;
	uint64_t vma_name_addr, build_id_addr;
};
#define RFP_PROCMAP_QUERY	_IOWR('f', 17, struct rfp_procmap_query)
#define RFP_QUERY_READABLE	0x01
#define RFP_QUERY_WRITABLE	0x02
#define RFP_QUERY_EXECUTABLE	0x04
#define RFP_QUERY_SHARED	0x08	/* VM_MAYSHARE */

/* Per architecture: the audit arch, and the trapped call's registers. */
#if defined(__x86_64__)
#define RFP_AUDIT_ARCH	AUDIT_ARCH_X86_64
#define UC_ARG(uc, n)	((unsigned long)(uc)->uc_mcontext.gregs[(int[]){ \
		REG_RDI, REG_RSI, REG_RDX, REG_R10, REG_R8 }[n]])
#define UC_RET(uc)	((uc)->uc_mcontext.gregs[REG_RAX])
#elif defined(__i386__)
#define RFP_AUDIT_ARCH	AUDIT_ARCH_I386
#define UC_ARG(uc, n)	((unsigned long)(uc)->uc_mcontext.gregs[(int[]){ \
		REG_EBX, REG_ECX, REG_EDX, REG_ESI, REG_EDI }[n]])
#define UC_RET(uc)	((uc)->uc_mcontext.gregs[REG_EAX])
#elif defined(__aarch64__)
#define RFP_AUDIT_ARCH	AUDIT_ARCH_AARCH64
#define UC_ARG(uc, n)	((unsigned long)(uc)->uc_mcontext.regs[n])
#define UC_RET(uc)	((uc)->uc_mcontext.regs[0])
#elif defined(__arm__) && defined(__ARM_EABI__)
#define RFP_AUDIT_ARCH	AUDIT_ARCH_ARM
/* arm_r0 to arm_r10 follow one another in struct sigcontext. */
#define UC_ARG(uc, n)	((&(uc)->uc_mcontext.arm_r0)[n])
#define UC_RET(uc)	((uc)->uc_mcontext.arm_r0)
#else
#error "rfp-compat: add the audit arch and the syscall registers of this architecture"
#endif

/*
 * The marker in the sixth argument of the shim's own call to the kernel,
 * which the syscall does not read: "RfpC", twice on 64-bit.
 */
#define RFP_MARKER_HALF	0x52667043U
#ifdef __LP64__
#define RFP_MARKER	(((unsigned long)RFP_MARKER_HALF << 32) | RFP_MARKER_HALF)
#else
#define RFP_MARKER	((unsigned long)RFP_MARKER_HALF)
#endif

#define MAX_FILES	1024

/* The descriptors the shim keeps, by the device and inode maps shows. */
struct kept {
	_Atomic int fd;		/* -1: free */
	dev_t dev;
	ino_t ino;
	bool anon;		/* a memfd behind a shared anonymous mapping */
};

static struct kept kept[MAX_FILES];
static _Atomic int nr_kept;	/* slots ever used */
static _Atomic int nr_anon;
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;

static unsigned long page_size;
static int quiet, always;
static _Atomic pid_t refused_pid;	/* the kernel said -ENOSYS to this process */
static _Atomic pid_t announced_pid;
/*
 * This process's pid, asked once a call by rfp_call() for everything the
 * call does (all threads of a process share it; a child has its own copy
 * of this variable, set at its first call).
 */
static _Atomic pid_t self_pid;
static _Atomic unsigned long emulated;	/* for tests: rfp_compat_emulated() */
/* The program has asked for locked memory (mlock*(), MAP_LOCKED). */
static _Atomic bool may_lock;

static int (*real_sigaction)(int, const struct sigaction *, struct sigaction *);
static int (*real_sigprocmask)(int, const sigset_t *, sigset_t *);
static int (*real_pthread_sigmask)(int, const sigset_t *, sigset_t *);
static struct sigaction program_sigsys;	/* what the program set for SIGSYS */
static bool own_sigsys;

/* Appends the strings up to NULL to BUF of SIZE bytes; its length. */
static size_t cat(char *buf, size_t size, size_t n, va_list ap)
{
	const char *s;

	while ((s = va_arg(ap, const char *))) {
		size_t len = strlen(s);

		if (len > size - 1 - n)
			len = size - 1 - n;
		memcpy(buf + n, s, len);
		n += len;
	}
	buf[n] = '\0';
	return n;
}

/* Writes the strings up to NULL to stderr, in one write(). */
static void say(const char *first, ...)
{
	char buf[512];
	size_t n;
	va_list ap;

	n = strlen(first) < sizeof(buf) ? strlen(first) : sizeof(buf) - 1;
	memcpy(buf, first, n);
	va_start(ap, first);
	n = cat(buf, sizeof(buf), n, ap);
	va_end(ap);
	if (write(2, buf, n) < 0)
		return;
}

/* V in BASE, written backwards into BUF (24 bytes): its first digit. */
static const char *ul(char *buf, unsigned long v, int base)
{
	char *p = buf + 23;

	*p = '\0';
	do {
		*--p = "0123456789abcdef"[v % base];
		v /= base;
	} while (v);
	return p;
}

/* The strings up to NULL, joined into BUF of SIZE bytes. */
static char *join(char *buf, size_t size, ...)
{
	va_list ap;

	va_start(ap, size);
	cat(buf, size, 0, ap);
	va_end(ap);
	return buf;
}

unsigned long rfp_compat_emulated(void)
{
	return atomic_load(&emulated);
}

/* ---- /proc/self/smaps, streamed, async-signal-safe ---- */

struct vma {
	unsigned long start, end;
	char perms[5];
	unsigned int major, minor;
	unsigned long ino;
	char path[256];
	char flags[160];	/* VmFlags */
};

struct reader {
	int fd;
	char buf[4096];
	size_t len, pos;
};

/* Next line of the file, without its newline; NULL at the end. */
static char *next_line(struct reader *r)
{
	char *nl;

	for (;;) {
		nl = memchr(r->buf + r->pos, '\n', r->len - r->pos);
		if (nl) {
			char *line = r->buf + r->pos;

			*nl = '\0';
			r->pos = nl + 1 - r->buf;
			return line;
		}
		/* Keep the partial line, read more after it. */
		memmove(r->buf, r->buf + r->pos, r->len - r->pos);
		r->len -= r->pos;
		r->pos = 0;
		if (r->len == sizeof(r->buf))
			r->len = 0;	/* a line longer than the buffer: drop it */
		ssize_t n = read(r->fd, r->buf + r->len, sizeof(r->buf) - r->len);

		if (n <= 0)
			return NULL;
		r->len += n;
	}
}

static unsigned long parse_hex(const char **p)
{
	unsigned long v = 0;

	for (;; (*p)++) {
		char c = **p;

		if (c >= '0' && c <= '9')
			v = v * 16 + c - '0';
		else if (c >= 'a' && c <= 'f')
			v = v * 16 + c - 'a' + 10;
		else
			return v;
	}
}

static unsigned long parse_dec(const char **p)
{
	unsigned long v = 0;

	for (; **p >= '0' && **p <= '9'; (*p)++)
		v = v * 10 + **p - '0';
	return v;
}

static void skip_spaces(const char **p)
{
	while (**p == ' ')
		(*p)++;
}

/* "start-end perms offset major:minor inode   path", as maps prints it. */
static bool parse_header(const char *p, struct vma *v)
{
	if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
		return false;
	memset(v, 0, sizeof(*v));
	v->start = parse_hex(&p);
	if (*p++ != '-')
		return false;
	v->end = parse_hex(&p);
	skip_spaces(&p);
	memcpy(v->perms, p, 4);
	p += 4;
	skip_spaces(&p);
	parse_hex(&p);
	skip_spaces(&p);
	v->major = parse_hex(&p);
	if (*p++ != ':')
		return false;
	v->minor = parse_hex(&p);
	skip_spaces(&p);
	v->ino = parse_dec(&p);
	skip_spaces(&p);
	strncpy(v->path, p, sizeof(v->path) - 1);
	return true;
}

static bool has_flag(const struct vma *v, const char *flag)
{
	const char *p;

	for (p = v->flags; (p = strstr(p, flag)); p += 2)
		if ((p == v->flags || p[-1] == ' ') && (p[2] == ' ' || !p[2]))
			return true;
	return false;
}

/*
 * The VMAs over [start, end), as the kernel's checks need them: the first
 * in *first; 0 when they make one range of one file with the same flags,
 * -EINVAL otherwise (no VMA at start, a hole, another file, other flags).
 * Reads no further than the last VMA it needs.
 */
static int range_vmas(unsigned long start, unsigned long end,
		      struct vma *first)
{
	struct reader r = { .fd = open("/proc/self/smaps", O_RDONLY | O_CLOEXEC) };
	struct vma cur, prev;
	bool in = false, have_first = false;
	char *line;
	int ret = -EINVAL;

	if (r.fd < 0)
		return -ENOSYS;
	while ((line = next_line(&r))) {
		if (!in) {
			if (!parse_header(line, &cur) || cur.end <= start)
				continue;
			if (!have_first && cur.start > start)
				break;		/* no VMA at start */
			in = true;
			continue;
		}
		if (strncmp(line, "VmFlags:", 8))
			continue;
		strncpy(cur.flags, line + 8, sizeof(cur.flags) - 1);
		in = false;
		if (!have_first) {
			*first = cur;
			have_first = true;
		} else if (cur.start != prev.end || cur.major != first->major ||
			   cur.minor != first->minor || cur.ino != first->ino ||
			   strcmp(cur.flags, first->flags)) {
			break;
		}
		if (cur.end >= end) {
			ret = 0;
			break;
		}
		prev = cur;
	}
	close(r.fd);
	/* The kernel looks at VM_SHARED before it looks past the first VMA. */
	if (have_first && !has_flag(first, "sh"))
		return -EINVAL;
	return ret;
}

/*
 * /proc/self/maps, kept open for PROCMAP_QUERY: -1 before the first
 * query, and again in a child (whose maps it is not).  The descriptor is
 * checked by its answer: a program that closed it, or reused its number,
 * gets no answer from it, and the shim opens another.
 */
static _Atomic int maps_fd = -1;
static _Atomic pid_t maps_pid;

static int maps_query(struct rfp_procmap_query *q)
{
	pid_t pid = atomic_load(&self_pid);
	int fd, tries;

	for (tries = 0; tries < 2; tries++) {
		fd = atomic_load(&maps_fd);
		if (fd < 0 || atomic_load(&maps_pid) != pid) {
			fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
			if (fd < 0)
				return -ENOTTY;
			atomic_store(&maps_pid, pid);
			atomic_store(&maps_fd, fd);
		}
		if (!ioctl(fd, RFP_PROCMAP_QUERY, q))
			return 0;
		if (errno == ENOENT)
			return -ENOENT;
		/* Not (or no longer) ours: leave that number to the program. */
		atomic_store(&maps_fd, -1);
	}
	return -ENOTTY;
}

/*
 * The VMA that covers ADDR, without its VmFlags, and without its path
 * unless NAME (it costs a d_path()): 0, -ENOENT, -ENOTTY.
 */
static int query_vma(unsigned long addr, struct vma *v, bool name)
{
	struct rfp_procmap_query q = {
		.size = sizeof(q),
		.query_addr = addr,
		.vma_name_size = name ? sizeof(v->path) : 0,
		.vma_name_addr = name ? (uintptr_t)v->path : 0,
	};
	int ret;

	memset(v, 0, sizeof(*v));
	ret = maps_query(&q);
	if (ret)
		return ret;
	v->start = q.vma_start;
	v->end = q.vma_end;
	v->perms[0] = q.vma_flags & RFP_QUERY_READABLE ? 'r' : '-';
	v->perms[1] = q.vma_flags & RFP_QUERY_WRITABLE ? 'w' : '-';
	v->perms[2] = q.vma_flags & RFP_QUERY_EXECUTABLE ? 'x' : '-';
	v->perms[3] = q.vma_flags & RFP_QUERY_SHARED ? 's' : 'p';
	v->major = q.dev_major;
	v->minor = q.dev_minor;
	v->ino = q.inode;
	return 0;
}

/* VmLck of /proc/self/status, in kB; -1 when it cannot be read. */
static long locked_kb(void)
{
	struct reader r = { .fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC) };
	const char *p;
	char *line;
	long kb = -1;

	if (r.fd < 0)
		return -1;
	while ((line = next_line(&r)))
		if (!strncmp(line, "VmLck:", 6)) {
			p = line + 6;
			skip_spaces(&p);
			while (*p == '\t' || *p == ' ')
				p++;
			kb = parse_dec(&p);
			break;
		}
	close(r.fd);
	return kb;
}

/*
 * The VMAs over [start, end) as range_vmas() gives them, and whether the
 * first is VM_LOCKED.  The common case is answered by PROCMAP_QUERY alone:
 * a range inside one writable VMA (a writable shared VMA is VM_SHARED:
 * mmap() clears VM_SHARED only with VM_MAYWRITE) of a process that has
 * locked nothing.  Everything else reads /proc/self/smaps.
 */
static int lookup(unsigned long start, unsigned long end, struct vma *v,
		  bool *locked)
{
	int ret = query_vma(start, v, false);

	if (ret == -ENOENT || (!ret && v->perms[3] != 's'))
		return -EINVAL;
	if (!ret && end <= v->end && v->perms[1] == 'w' &&
	    (!atomic_load(&may_lock) || locked_kb() == 0)) {
		*locked = false;
		return 0;
	}
	ret = range_vmas(start, end, v);
	*locked = has_flag(v, "lo");
	return ret;
}

/* ---- the file behind a VMA ---- */

static bool same_file(int fd, const struct vma *v)
{
	struct stat st;

	return fd >= 0 && !fstat(fd, &st) && st.st_ino == v->ino &&
	       major(st.st_dev) == v->major && minor(st.st_dev) == v->minor;
}

static bool writable(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl >= 0 && (fl & O_ACCMODE) == O_RDWR;
}

/* Keep FD (the shim's own) for the file it names; false when full. */
static bool keep(int fd, bool anon)
{
	struct stat st;
	int i, n;

	if (fstat(fd, &st))
		return false;
	pthread_mutex_lock(&kept_lock);
	n = atomic_load(&nr_kept);
	for (i = 0; i < n; i++)
		if (atomic_load(&kept[i].fd) < 0)
			break;
	if (i == MAX_FILES) {
		pthread_mutex_unlock(&kept_lock);
		return false;
	}
	kept[i].dev = st.st_dev;
	kept[i].ino = st.st_ino;
	kept[i].anon = anon;
	atomic_store(&kept[i].fd, fd);
	if (i == n)
		atomic_store(&nr_kept, n + 1);
	if (anon)
		atomic_fetch_add(&nr_anon, 1);
	pthread_mutex_unlock(&kept_lock);
	return true;
}

static int kept_fd(dev_t dev, ino_t ino)
{
	int i, n = atomic_load(&nr_kept);

	for (i = 0; i < n; i++) {
		int fd = atomic_load(&kept[i].fd);

		if (fd >= 0 && kept[i].dev == dev && kept[i].ino == ino)
			return fd;
	}
	return -1;
}

/* One of the program's descriptors for V's file, open for writing. */
static int program_fd(const struct vma *v)
{
	char buf[1024];
	int dir = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int found = -1;
	long n;

	if (dir < 0)
		return -1;
	while (found < 0 && (n = syscall(SYS_getdents64, dir, buf, sizeof(buf))) > 0) {
		long off;

		for (off = 0; off < n && found < 0;) {
			struct { uint64_t ino; int64_t off; unsigned short reclen;
				 unsigned char type; char name[]; } *d = (void *)(buf + off);
			const char *p = d->name;
			int fd;

			off += d->reclen;
			if (*p < '0' || *p > '9')
				continue;
			fd = parse_dec(&p);
			if (fd != dir && same_file(fd, v) && writable(fd))
				found = fd;
		}
	}
	close(dir);
	return found;
}

/*
 * A descriptor for the file of the VM_SHARED VMA V, open for reading and
 * writing (as the file of a VM_SHARED VMA was); *opened when the caller
 * must close it.
 */
static int vma_file(struct vma *v, bool *opened)
{
	char path[80], a[24], b[24];
	int fd;

	*opened = false;
	fd = kept_fd(makedev(v->major, v->minor), v->ino);
	if (same_file(fd, v))
		return fd;
	fd = program_fd(v);
	if (fd >= 0)
		return fd;

	join(path, sizeof(path), "/proc/self/map_files/", ul(a, v->start, 16),
	     "-", ul(b, v->end, 16), NULL);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0 && !v->path[0]) {
		struct vma named;

		/* The fast lookup left the path out. */
		if (!query_vma(v->start, &named, true) && named.ino == v->ino)
			memcpy(v->path, named.path, sizeof(v->path));
	}
	if (fd < 0 && v->path[0] == '/' && !strstr(v->path, " (deleted)"))
		fd = open(v->path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (!same_file(fd, v)) {
		close(fd);
		return -1;
	}
	/* Closing it would drop the process's POSIX locks on the file. */
	if (!keep(fd, false))
		*opened = true;
	return fd;
}

/* ---- the emulation ---- */

/* mmap() with the offset in pages, as the syscall of each ABI takes it. */
static void *sys_mmap(unsigned long addr, unsigned long len, int prot,
		      int flags, int fd, unsigned long pgoff)
{
#ifdef SYS_mmap2
	return (void *)syscall(SYS_mmap2, addr, len, prot, flags, fd, pgoff);
#else
	if (pgoff > ~0UL / page_size) {
		errno = EOVERFLOW;	/* what do_mmap() says to such a pgoff */
		return MAP_FAILED;
	}
	return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd,
			       pgoff * page_size);
#endif
}

static long emulate(unsigned long start, unsigned long size,
		    unsigned long prot, unsigned long pgoff, unsigned long flags)
{
	struct vma v;
	int fd, mflags;
	bool opened, locked;
	long ret;

	/* The kernel's checks, in its order (mm/remap_file_pages.c). */
	if (prot)
		return -EINVAL;
	start &= ~(page_size - 1);
	size &= ~(page_size - 1);
	if (start + size <= start)
		return -EINVAL;
	if (pgoff + size / page_size < pgoff)
		return -EINVAL;
	ret = lookup(start, start + size, &v, &locked);
	if (ret)
		return ret;

	fd = vma_file(&v, &opened);
	if (fd < 0) {
		char a[24], b[24];

		say("rfp-compat: cannot emulate remap_file_pages() at ",
		    ul(a, start, 16), " (", v.path[0] ? v.path : "?",
		    ", inode ", ul(b, v.ino, 10),
		    "): no descriptor for its file (README, \"what it cannot do\")\n",
		    NULL);
		return -ENOSYS;
	}
	prot = (v.perms[0] == 'r' ? PROT_READ : 0) |
	       (v.perms[1] == 'w' ? PROT_WRITE : 0) |
	       (v.perms[2] == 'x' ? PROT_EXEC : 0);
	mflags = MAP_SHARED | MAP_FIXED | MAP_POPULATE | (flags & MAP_NONBLOCK);
	if (locked)
		mflags |= MAP_LOCKED;
	ret = sys_mmap(start, size, prot, mflags, fd, pgoff) == MAP_FAILED ? -errno : 0;
	if (opened)
		close(fd);
	atomic_fetch_add(&emulated, 1);
	return ret;
}

static void announce(void)
{
	char buf[24], comm[32] = "?";
	pid_t pid = atomic_load(&self_pid);
	int fd;

	if (quiet || atomic_exchange(&announced_pid, pid) == pid)
		return;
	fd = open("/proc/self/comm", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t n = read(fd, comm, sizeof(comm) - 1);

		comm[n > 0 ? n - 1 : 0] = '\0';
		close(fd);
	}
	say("rfp-compat: ", comm, " (", ul(buf, pid, 10), "): ",
	    always ? "" : "the kernel refuses remap_file_pages(): ",
	    "remap_file_pages() emulated with mmap(MAP_FIXED)\n", NULL);
}

/* Every call, from glibc's wrapper or from the SIGSYS handler. */
static long rfp_call(unsigned long start, unsigned long size,
		     unsigned long prot, unsigned long pgoff,
		     unsigned long flags)
{
	pid_t pid = getpid();

	atomic_store(&self_pid, pid);
	if (!always && atomic_load(&refused_pid) != pid) {
		long ret = syscall(SYS_remap_file_pages, start, size, prot,
				   pgoff, flags, RFP_MARKER);

		if (ret == 0 || errno != ENOSYS)
			return ret ? -errno : 0;
		atomic_store(&refused_pid, pid);
	}
	announce();
	return emulate(start, size, prot, pgoff, flags);
}

int remap_file_pages(void *start, size_t size, int prot, size_t pgoff,
		     int flags)
{
	long ret = rfp_call((unsigned long)start, size, prot, pgoff, flags);

	if (ret) {
		errno = -ret;
		return -1;
	}
	return 0;
}

/* ---- SIGSYS ---- */

static void chain_sigsys(int sig, siginfo_t *info, void *uc)
{
	struct sigaction sa = program_sigsys;

	if (sa.sa_flags & SA_SIGINFO) {
		sa.sa_sigaction(sig, info, uc);
	} else if (sa.sa_handler == SIG_IGN) {
		return;
	} else if (sa.sa_handler != SIG_DFL) {
		sa.sa_handler(sig);
	} else {
		/* The default action: die of it, as without the shim. */
		sa.sa_flags = 0;
		sigemptyset(&sa.sa_mask);
		real_sigaction(SIGSYS, &sa, NULL);
		raise(SIGSYS);
	}
}

static void on_sigsys(int sig, siginfo_t *info, void *ctx)
{
	ucontext_t *uc = ctx;
	int saved = errno;

	if (info->si_code != SYS_SECCOMP || info->si_syscall != SYS_remap_file_pages ||
	    info->si_arch != RFP_AUDIT_ARCH) {
		chain_sigsys(sig, info, ctx);
		return;
	}
	UC_RET(uc) = rfp_call(UC_ARG(uc, 0), UC_ARG(uc, 1), UC_ARG(uc, 2),
			      UC_ARG(uc, 3), UC_ARG(uc, 4));
	errno = saved;
}

/*
 * The program's SIGSYS handler is kept aside and called for every SIGSYS
 * that is not the filter's; SIGSYS is never blocked, because a blocked
 * SIGSYS from seccomp kills the process.
 */
int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	struct sigaction copy;

	if (sig == SIGSYS && own_sigsys) {
		if (old)
			*old = program_sigsys;
		if (act)
			program_sigsys = *act;
		return 0;
	}
	if (act) {
		copy = *act;
		sigdelset(&copy.sa_mask, SIGSYS);
		act = &copy;
	}
	return real_sigaction(sig, act, old);
}

sighandler_t signal(int sig, sighandler_t handler)
{
	struct sigaction sa = { .sa_handler = handler, .sa_flags = SA_RESTART };
	struct sigaction old;

	/* glibc's signal(): BSD semantics. */
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, sig);
	if (sigaction(sig, &sa, &old))
		return SIG_ERR;
	return old.sa_handler;
}

static const sigset_t *without_sigsys(int how, const sigset_t *set,
				      sigset_t *copy)
{
	if (!set || how == SIG_UNBLOCK || !own_sigsys)
		return set;
	*copy = *set;
	sigdelset(copy, SIGSYS);
	return copy;
}

int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	sigset_t copy;

	return real_sigprocmask(how, without_sigsys(how, set, &copy), old);
}

int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	sigset_t copy;

	return real_pthread_sigmask(how, without_sigsys(how, set, &copy), old);
}

/* ---- mmap() and munmap(): the files behind shared mappings ---- */

static bool is_shared(int flags)
{
	int type = flags & MAP_TYPE;

	return type == MAP_SHARED || type == MAP_SHARED_VALIDATE;
}

static void *shared_anon_from_memfd(void *addr, size_t len, int prot,
				    int flags)
{
	int fd = syscall(SYS_memfd_create, "rfp-compat", MFD_CLOEXEC);
	void *p;

	if (fd < 0)
		return MAP_FAILED;
	if (ftruncate(fd, (len + page_size - 1) & ~(page_size - 1)) ||
	    (p = sys_mmap((unsigned long)addr, len, prot, flags & ~MAP_ANONYMOUS,
			  fd, 0)) == MAP_FAILED ||
	    !keep(fd, true)) {
		close(fd);
		return MAP_FAILED;
	}
	return p;
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	struct stat st;
	void *p;
	int dup;

	if (flags & MAP_LOCKED)
		atomic_store(&may_lock, true);
	if (is_shared(flags) && (flags & MAP_ANONYMOUS) && !(flags & MAP_HUGETLB) &&
	    len) {
		p = shared_anon_from_memfd(addr, len, prot, flags);
		if (p != MAP_FAILED)
			return p;
	}
	if (off & (page_size - 1)) {
		errno = EINVAL;
		return MAP_FAILED;
	}
	p = sys_mmap((unsigned long)addr, len, prot, flags, fd,
		     (unsigned long)off / page_size);
	if (p == MAP_FAILED || !is_shared(flags) || (flags & MAP_ANONYMOUS) ||
	    !writable(fd))
		return p;
	if (fstat(fd, &st) || kept_fd(st.st_dev, st.st_ino) >= 0)
		return p;
	dup = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (dup >= 0 && !keep(dup, false))
		close(dup);
	return p;
}

/* What programs built with _FILE_OFFSET_BITS=64 call. */
void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off64_t off)
{
	if (off != (off_t)off) {
		/* Past a 32-bit off_t: no file kept, the mapping made. */
		if (off & (page_size - 1)) {
			errno = EINVAL;
			return MAP_FAILED;
		}
		return sys_mmap((unsigned long)addr, len, prot, flags, fd,
				off / page_size);
	}
	return mmap(addr, len, prot, flags, fd, off);
}

/*
 * Whether a VMA may be locked is asked of the kernel only once the
 * program has asked for locked memory (the common remap then needs no
 * read of /proc/self/status).
 */
int mlock(const void *addr, size_t len)
{
	atomic_store(&may_lock, true);
	return syscall(SYS_mlock, addr, len);
}

int mlock2(const void *addr, size_t len, unsigned int flags)
{
	atomic_store(&may_lock, true);
	return syscall(SYS_mlock2, addr, len, flags);
}

int mlockall(int flags)
{
	atomic_store(&may_lock, true);
	return syscall(SYS_mlockall, flags);
}

/* Drop the memfds of shared anonymous mappings that are gone. */
static void drop_unmapped_memfds(void)
{
	struct reader r;
	struct vma v;
	bool mapped[MAX_FILES] = { false };
	char *line;
	int i, n;

	if (!atomic_load(&nr_anon))
		return;
	r = (struct reader){ .fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC) };
	if (r.fd < 0)
		return;
	pthread_mutex_lock(&kept_lock);
	n = atomic_load(&nr_kept);
	while ((line = next_line(&r))) {
		if (!parse_header(line, &v))
			continue;
		for (i = 0; i < n; i++)
			if (kept[i].anon && kept[i].ino == v.ino &&
			    major(kept[i].dev) == v.major &&
			    minor(kept[i].dev) == v.minor)
				mapped[i] = true;
	}
	close(r.fd);
	for (i = 0; i < n; i++) {
		int fd = atomic_load(&kept[i].fd);

		if (fd < 0 || !kept[i].anon || mapped[i])
			continue;
		atomic_store(&kept[i].fd, -1);
		atomic_fetch_sub(&nr_anon, 1);
		close(fd);
	}
	pthread_mutex_unlock(&kept_lock);
}

int munmap(void *addr, size_t len)
{
	long ret = syscall(SYS_munmap, addr, len);

	if (!ret)
		drop_unmapped_memfds();
	return ret;
}

/* ---- setup ---- */

/* args[5]'s halves, little-endian; a 32-bit call's high half is 0. */
#define ARG5_LO		offsetof(struct seccomp_data, args[5])
#define ARG5_HI		(ARG5_LO + 4)
#ifdef __LP64__
#define ARG5_HI_MARKER	RFP_MARKER_HALF
#else
#define ARG5_HI_MARKER	0
#endif

static int install_filter(void)
{
	struct sock_filter insns[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, RFP_AUDIT_ARCH, 0, 7),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_remap_file_pages, 0, 5),
		/* The shim's own call, marked in args[5], goes through. */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG5_LO),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, RFP_MARKER_HALF, 0, 2),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG5_HI),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARG5_HI_MARKER, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {
		.len = sizeof(insns) / sizeof(insns[0]),
		.filter = insns,
	};

	/* Without CAP_SYS_ADMIN a filter needs no_new_privs (inherited). */
	if (!syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
		     SECCOMP_FILTER_FLAG_TSYNC, &prog))
		return 0;
	if (errno != EACCES || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
		       SECCOMP_FILTER_FLAG_TSYNC, &prog) ? -1 : 0;
}

static bool env_is(const char *name, const char *value)
{
	const char *v = getenv(name);

	return v && !strcmp(v, value);
}

__attribute__((constructor))
static void rfp_compat_init(void)
{
	struct sigaction sa = { .sa_sigaction = on_sigsys,
				.sa_flags = SA_SIGINFO | SA_NODEFER };
	int i;

	page_size = sysconf(_SC_PAGESIZE);
	for (i = 0; i < MAX_FILES; i++)
		atomic_init(&kept[i].fd, -1);
	quiet = env_is("RFP_COMPAT_QUIET", "1");
	always = env_is("RFP_COMPAT_ALWAYS", "1");
	real_sigaction = dlsym(RTLD_NEXT, "sigaction");
	real_sigprocmask = dlsym(RTLD_NEXT, "sigprocmask");
	real_pthread_sigmask = dlsym(RTLD_NEXT, "pthread_sigmask");
	if (!real_sigaction || !real_sigprocmask || !real_pthread_sigmask) {
		say("rfp-compat: cannot find libc's signal functions: not active\n", NULL);
		return;
	}
	if (env_is("RFP_COMPAT_SECCOMP", "0"))
		return;
	sigemptyset(&sa.sa_mask);
	real_sigaction(SIGSYS, &sa, &program_sigsys);
	own_sigsys = true;
	if (install_filter()) {
		say("rfp-compat: cannot install the seccomp filter: only glibc's remap_file_pages() is emulated, not raw syscall()s\n",
		    NULL);
		real_sigaction(SIGSYS, &program_sigsys, NULL);
		own_sigsys = false;
	}
}
