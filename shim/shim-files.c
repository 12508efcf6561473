// SPDX-License-Identifier: GPL-2.0
/*
 * librfp-compat.so: the file behind a VMA, and the descriptors the shim
 * keeps.
 *
 * The kernel's remap reaches the file through the VMA; user space needs
 * a descriptor.  The shim keeps one only while the file is mapped, and
 * only where the program may not have one of its own: for a file it maps
 * that has no name left (unlinked, or a memfd), for the memfd it makes
 * each shared anonymous mapping from, and for a file it had to find at a
 * remap.  The shim's descriptors live at the highest numbers free under
 * the descriptor limit, out of the way of the program's open(), which
 * takes the lowest free number.  A kept descriptor is closed
 *
 *  - when no VMA of its file is left in the addresses it was seen at
 *    (munmap(), mmap(MAP_FIXED) and mremap() over them), and in a child
 *    that fork() left without the mapping;
 *  - when the process changes its credentials (set*id(), setgroups()),
 *    but for the memfds of shared anonymous memory;
 *  - never while the process holds a POSIX lock on its file: closing any
 *    descriptor of a file drops them all (so no descriptor the shim opens
 *    or copies is closed without that check);
 *  - never behind the program's back: the program's close(), closefrom()
 *    and close_range() leave the shim's numbers alone, which the program
 *    never got; dup2() over one is the program's to make.
 *
 * The table takes no lock: the SIGSYS handler may run in a thread that is
 * inside munmap(), and fork() may come at any time.  A slot is claimed and
 * released with compare-and-swap on its descriptor; whoever reads a slot
 * checks the descriptor's file (device and inode) before using it.  The
 * table is the process's that made it: a vfork() child, which shares it,
 * reads it and changes nothing; a fork() child takes its copy over.
 * The chunks past the first are unmapped when the table empties, once
 * no walk of the table is under way.
 */
#define _GNU_SOURCE
#define _FILE_OFFSET_BITS 64	/* fstat() of files of 2 GiB and more */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <sys/resource.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "shim.h"

#define SLOTS	255

enum kind { KEPT_FILE, KEPT_MEMFD };

struct slot {
	/* 0: free; -1: being filled or emptied; else the descriptor + 1 */
	_Atomic int fd1;
	enum kind kind;
	dev_t dev;
	ino_t ino;
	/* The addresses the file was seen mapped at: [lo, hi) */
	_Atomic unsigned long lo, hi;
};

struct chunk {
	struct slot slot[SLOTS];
	struct chunk *_Atomic next;
};

/* The first chunk is static: no constructor needed, no allocation. */
static struct chunk table;
static _Atomic int used;	/* slots in use: nothing to scan at 0 */
static _Atomic int walkers;	/* walks of the table under way */
static struct chunk *_Atomic unused;	/* chunks to unmap, when nobody walks */
static _Atomic pid_t owner;	/* the process the table is of */

/* Whether this process may change the table (it is not a vfork() child). */
static bool mine(void)
{
	pid_t pid = self_pid(), none = 0;

	return atomic_load(&owner) == pid ||
	       atomic_compare_exchange_strong(&owner, &none, pid);
}

/* How many descriptors the shim may keep for shared anonymous memory. */
bool room_for_memfd(void)
{
	return atomic_load(&used) < fd_limit() / 4;
}

/*
 * A walk of the table, between walk_begin() and walk_end(): the chunks
 * it reaches stay mapped until it ends.
 */
#define for_each_slot(c, s) \
	for (c = &table; c; c = atomic_load(&c->next)) \
		for (s = c->slot; s < c->slot + SLOTS; s++)

static void walk_begin(void)
{
	atomic_fetch_add(&walkers, 1);
}

/*
 * The last walk unmaps the chunks the table left: no walk can reach them
 * once they are off the table, and those that could have are over.
 */
static void walk_end(void)
{
	struct chunk *c, *next;

	if (atomic_fetch_sub(&walkers, 1) != 1 || !atomic_load(&unused))
		return;
	for (c = atomic_exchange(&unused, NULL); c; c = next) {
		next = atomic_load(&c->next);
		sys(SYS_munmap, c, sizeof(*c));
	}
}

/*
 * The table emptied: the chunks past the first go, to be unmapped at
 * the end of the last walk, and the held /proc/self/maps with them.  A
 * claim that comes meanwhile finds the first chunk free.
 */
static void emptied(void)
{
	struct chunk *rest, *last, *old;

	maps_release();
	walk_begin();
	rest = atomic_exchange(&table.next, NULL);
	if (rest) {
		for (last = rest; atomic_load(&last->next);)
			last = atomic_load(&last->next);
		old = atomic_load(&unused);
		do
			atomic_store(&last->next, old);
		while (!atomic_compare_exchange_weak(&unused, &old, rest));
	}
	walk_end();
}

/* Slot S, claimed, is free again. */
static void unclaim(struct slot *s)
{
	atomic_store(&s->fd1, 0);
	if (atomic_fetch_sub(&used, 1) == 1)
		emptied();
}

static void widen(struct slot *s, unsigned long addr, unsigned long len)
{
	unsigned long v, end = addr + len;

	v = atomic_load(&s->lo);
	while (addr < v && !atomic_compare_exchange_weak(&s->lo, &v, addr))
		;
	v = atomic_load(&s->hi);
	while (end > v && !atomic_compare_exchange_weak(&s->hi, &v, end))
		;
}

/*
 * A free slot, claimed (fd1 == -1); NULL when no memory is left.  The
 * slot is counted in USED before it is looked for, so that the table
 * does not empty under a claim.
 */
static struct slot *claim(void)
{
	struct chunk *c = &table, *next;
	struct slot *s = NULL;
	int zero;

	atomic_fetch_add(&used, 1);
	walk_begin();
	while (!s) {
		for (s = c->slot; s < c->slot + SLOTS; s++) {
			zero = 0;
			if (atomic_compare_exchange_strong(&s->fd1, &zero, -1))
				break;
		}
		if (s < c->slot + SLOTS)
			break;
		s = NULL;
		next = atomic_load(&c->next);
		if (!next) {
			/* A raw mmap(): malloc() is not async-signal-safe. */
			struct chunk *fresh = sys_mmap(0, sizeof(*fresh),
						       PROT_READ | PROT_WRITE,
						       MAP_PRIVATE | MAP_ANONYMOUS,
						       -1, 0);

			if (fresh == MAP_FAILED)
				break;
			if (!atomic_compare_exchange_strong(&c->next, &next, fresh))
				sys(SYS_munmap, fresh, sizeof(*fresh));
			else
				next = fresh;
		}
		c = next;
	}
	walk_end();
	if (!s && atomic_fetch_sub(&used, 1) == 1)
		emptied();
	return s;
}

/* Keep FD, the shim's own, for its file, seen at [addr, addr + len). */
static bool keep(int fd, enum kind kind, unsigned long addr, unsigned long len)
{
	struct slot *s;
	struct stat st;

	/*
	 * The descriptor that tells when the file is unmapped is opened
	 * now: a process that runs out of descriptors still has it then.
	 */
	if (!mine() || fstat(fd, &st) || !(s = claim()))
		return false;
	fork_handler_wanted();
	if (maps_hold() < 0) {
		unclaim(s);
		return false;
	}
	s->kind = kind;
	s->dev = st.st_dev;
	s->ino = st.st_ino;
	atomic_store(&s->lo, addr);
	atomic_store(&s->hi, addr + len);
	atomic_store(&s->fd1, fd + 1);
	return true;
}

static struct slot *kept(dev_t dev, ino_t ino, int *fd)
{
	struct chunk *c;
	struct slot *s;
	int fd1;

	if (!atomic_load(&used))
		return NULL;
	walk_begin();
	for_each_slot(c, s) {
		fd1 = atomic_load(&s->fd1);
		if (fd1 > 0 && s->dev == dev && s->ino == ino) {
			*fd = fd1 - 1;
			walk_end();
			return s;
		}
	}
	walk_end();
	return NULL;
}

/*
 * Empty slot S, whose descriptor is FD1 - 1; the descriptor is closed
 * unless CLOSE is false (the program closed that number itself).
 */
static void release(struct slot *s, int fd1, bool close)
{
	struct stat st;

	if (!mine() || !atomic_compare_exchange_strong(&s->fd1, &fd1, -1))
		return;		/* a vfork() child's, or someone else's now */
	if (close && s->kind == KEPT_FILE && holds_posix_lock(s->dev, s->ino)) {
		atomic_store(&s->fd1, fd1);
		return;
	}
	/*
	 * A number closed by a raw syscall, and reused, is the program's:
	 * only the file the shim kept is closed.
	 */
	if (close && !fstat(fd1 - 1, &st) && st.st_dev == s->dev &&
	    st.st_ino == s->ino)
		sys_close(fd1 - 1);
	unclaim(s);
}

/*
 * Close FD, a descriptor the shim opened or copied, unless the process
 * holds a POSIX lock on its file: then it is kept, as seen at [addr,
 * addr + len), and closed with the others when that is unmapped.
 */
static void close_unlocked(int fd, unsigned long addr, unsigned long len)
{
	struct stat st;

	if (!fstat(fd, &st) && holds_posix_lock(st.st_dev, st.st_ino) &&
	    keep(fd, KEPT_FILE, addr, len))
		return;
	sys_close(fd);
}

/*
 * A file the program maps shared and writable: kept if it has no name.
 * The shim's descriptor that keeps it, or -1.
 */
int keep_mapped(int fd, unsigned long addr, unsigned long len)
{
	struct stat st;
	struct slot *s;
	int dup, kfd;
	bool low;

	if (fstat(fd, &st))
		return -1;
	s = kept(st.st_dev, st.st_ino, &kfd);
	if (s) {
		widen(s, addr, len);
		return kfd;
	}
	if (st.st_nlink)
		return -1;	/* a path reaches it, or the program's own */
	dup = shim_fd(fcntl(fd, F_DUPFD_CLOEXEC, 0), false, &low);
	if (dup >= 0 && (low || !keep(dup, KEPT_FILE, addr, len))) {
		close_unlocked(dup, addr, len);
		return -1;
	}
	return dup;
}

/* The memfd behind a shared anonymous mapping; false when it cannot. */
bool keep_memfd(int fd, unsigned long addr, unsigned long len)
{
	return keep(fd, KEPT_MEMFD, addr, len);
}

/*
 * [addr, addr + len) was unmapped or replaced: close what is not mapped.
 * MAPPED: the shim's descriptor whose file is mapped there now, or -1
 * (its file is mapped: no need to ask).
 */
void drop_unmapped(unsigned long addr, unsigned long len, int mapped)
{
	struct chunk *c;
	struct slot *s;
	int fd1;

	if (!atomic_load(&used) || !mine())
		return;
	walk_begin();
	for_each_slot(c, s) {
		fd1 = atomic_load(&s->fd1);
		if (fd1 <= 0 || fd1 == mapped + 1 || atomic_load(&s->hi) <= addr ||
		    atomic_load(&s->lo) >= addr + len)
			continue;
		if (!file_mapped_in(s->dev, s->ino, atomic_load(&s->lo),
				    atomic_load(&s->hi)))
			release(s, fd1, true);
	}
	walk_end();
}

/* mremap(): what was seen at OLD is now also at NEW. */
void moved(unsigned long old, unsigned long old_len, unsigned long new,
	   unsigned long new_len)
{
	struct chunk *c;
	struct slot *s;

	if (!atomic_load(&used) || !mine())
		return;
	/* An old_len of 0 maps the same pages again, and unmaps nothing. */
	walk_begin();
	for_each_slot(c, s)
		if (atomic_load(&s->fd1) > 0 && atomic_load(&s->hi) > old &&
		    atomic_load(&s->lo) < old + (old_len ? old_len : 1))
			widen(s, new, new_len);
	walk_end();
	if (old_len)
		drop_unmapped(old, old_len, -1);
}

/* The program takes number FD over (dup2()): it is no longer the shim's. */
static void forget(int fd)
{
	struct chunk *c;
	struct slot *s;

	maps_forget(fd, fd);
	if (!atomic_load(&used))
		return;
	walk_begin();
	for_each_slot(c, s)
		if (atomic_load(&s->fd1) == fd + 1)
			release(s, fd + 1, false);
	walk_end();
}

/* Whether FD is one of the shim's numbers. */
static bool is_shim_fd(int fd)
{
	struct chunk *c;
	struct slot *s;
	bool found = false;

	if (fd >= 0 && fd == maps_fd_now())
		return true;
	if (fd < 0 || !atomic_load(&used))
		return false;
	walk_begin();
	for_each_slot(c, s)
		found |= atomic_load(&s->fd1) == fd + 1;
	walk_end();
	return found;
}

/* The lowest of the shim's numbers at or above FD; -1: none. */
static int next_shim_fd(int fd)
{
	struct chunk *c;
	struct slot *s;
	int best = -1, m = maps_fd_now(), fd1;

	if (m >= fd)
		best = m;
	if (!atomic_load(&used))
		return best;
	walk_begin();
	for_each_slot(c, s) {
		fd1 = atomic_load(&s->fd1);
		if (fd1 > fd && (best < 0 || fd1 - 1 < best))
			best = fd1 - 1;
	}
	walk_end();
	return best;
}

/* The program's close_range(): FIRST to LAST but the shim's numbers. */
static int close_around(unsigned int first, unsigned int last, int flags)
{
	int next;

	while (first <= last) {
		next = next_shim_fd(first);
		if (next < 0 || (unsigned int)next > last)
			return sys(SYS_close_range, first, last, flags);
		if ((unsigned int)next > first &&
		    sys(SYS_close_range, first, next - 1, flags))
			return -1;
		if ((unsigned int)next == ~0U)
			break;
		first = next + 1;
	}
	return 0;
}

/* The credentials changed: no descriptor opened under the old ones. */
static void drop_files(void)
{
	struct chunk *c;
	struct slot *s;
	int fd1;

	if (!atomic_load(&used) || !mine())
		return;
	walk_begin();
	for_each_slot(c, s) {
		fd1 = atomic_load(&s->fd1);
		if (fd1 > 0 && s->kind == KEPT_FILE)
			release(s, fd1, true);
	}
	walk_end();
}

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

/*
 * A copy of one of the program's descriptors for V's file, open for
 * writing.  The copy is checked again, and it is what is mapped, so that
 * another thread that gives the number to another file in between
 * changes nothing.
 */
static int program_fd(const struct vma *v)
{
	char buf[1024];
	int dir = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int found = -1;
	long n;

	if (dir < 0)
		return -1;
	while (found < 0 && (n = sys(SYS_getdents64, dir, buf, sizeof(buf))) > 0) {
		long off;

		for (off = 0; off < n && found < 0;) {
			struct { uint64_t ino; int64_t off; unsigned short reclen;
				 unsigned char type; char name[]; } *d = (void *)(buf + off);
			const char *p = d->name;
			int fd, copy;

			off += d->reclen;
			if (*p < '0' || *p > '9')
				continue;
			fd = parse_dec(&p);
			if (fd == dir || is_shim_fd(fd) || !same_file(fd, v) ||
			    !writable(fd))
				continue;
			/*
			 * At the program's next number for a moment: moved
			 * up once it is known to be the file (shim_fd()).
			 */
			copy = fcntl(fd, F_DUPFD_CLOEXEC, 0);
			if (copy < 0)
				continue;
			/* Another thread may have given the number to another file. */
			if (same_file(copy, v) && writable(copy))
				found = copy;
			else
				close_unlocked(copy, v->start, v->end - v->start);
		}
	}
	sys_close(dir);
	return found;
}

/* The descriptor the shim keeps for V's file; -1: none. */
int kept_file(const struct vma *v)
{
	struct slot *s;
	int fd;

	s = kept(makedev(v->major, v->minor), v->ino, &fd);
	return s && same_file(fd, v) ? fd : -1;
}

/*
 * A descriptor for the file of the VM_SHARED VMA V that the shim does not
 * keep yet, open for reading and writing (as the file of a VM_SHARED VMA
 * was), kept from now until the file is unmapped; -1 when there is none.
 * *ONCE is set when it could not be kept: done_once() after the remap.
 */
int find_file(struct vma *v, bool *once)
{
	char path[80], a[24], b[24];
	int fd;
	bool low;

	*once = false;

	fd = program_fd(v);
	if (fd < 0) {
		join(path, sizeof(path), "/proc/self/map_files/",
		     ul(a, v->start, 16), "-", ul(b, v->end, 16), NULL);
		fd = open(path, O_RDWR | O_CLOEXEC);
	}
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
		close_unlocked(fd, v->start, v->end - v->start);
		return -1;
	}
	fd = shim_fd(fd, false, &low);
	/*
	 * Closing it now would drop the process's POSIX locks on the file;
	 * it is closed when the file is unmapped, after a look for them.
	 */
	*once = low || !keep(fd, KEPT_FILE, v->start, v->end - v->start);
	return fd;
}

/* FD, from find_file(), served one remap of [addr, addr + len). */
void done_once(int fd, unsigned long addr, unsigned long len)
{
	close_unlocked(fd, addr, len);
}

/* In a fork() child: the table is its own now; what it does not map goes. */
void files_after_fork(void)
{
	struct chunk *c;
	struct slot *s;
	int fd1;

	/* Nothing written where nothing was kept: no page copied. */
	if (!atomic_load(&owner))
		return;
	atomic_store(&owner, getpid());
	/* Walks of other threads of the parent are not the child's. */
	if (atomic_load(&walkers))
		atomic_store(&walkers, 0);
	maps_after_fork();
	if (!atomic_load(&used))
		return;
	walk_begin();
	for_each_slot(c, s) {
		fd1 = atomic_load(&s->fd1);
		if (fd1 > 0 && !file_mapped_in(s->dev, s->ino, atomic_load(&s->lo),
					       atomic_load(&s->hi)))
			release(s, fd1, true);
	}
	walk_end();
	/* The child's own maps, for what it keeps. */
	if (atomic_load(&used))
		maps_hold();
}

/* A fork() child: the tables are its own. */
static void after_fork(void)
{
	call_after_fork();
	files_after_fork();
	locks_after_fork();
}

/*
 * The fork() handler, registered once the process has something in the
 * tables for a child to take over (fork_handler_wanted(): a call made, a
 * descriptor kept), not at each exec(): registered, it costs every
 * fork() and exec() of a program that never remaps.  pthread_atfork() is
 * not async-signal-safe: called from the shim's mmap() family and glibc's
 * remap_file_pages() and syscall(), which are not either, never from the
 * SIGSYS handler, nor from close() or dup2().
 */
void fork_handler_now(void)
{
	if (fork_handler_due())
		pthread_atfork(NULL, NULL, after_fork);
}

/* ---- the program's own descriptor calls ---- */


/* A number of the shim's, which the program never got: not the program's to close. */
int close(int fd)
{
	if (is_shim_fd(fd)) {
		errno = EBADF;
		return -1;
	}
	return REAL(close) ? REAL(close)(fd) : sys_close(fd);
}

int close_range(unsigned int first, unsigned int last, int flags)
{
	return close_around(first, last, flags);
}

void closefrom(int lowfd)
{
	close_around(lowfd < 0 ? 0 : lowfd, ~0U, 0);
}

int dup2(int old, int new)
{
	if (old != new && fcntl(old, F_GETFD) >= 0)
		forget(new);
	return REAL(dup2)(old, new);
}

int dup3(int old, int new, int flags)
{
	if (old != new && fcntl(old, F_GETFD) >= 0)
		forget(new);
	return REAL(dup3)(old, new, flags);
}

/* ---- credentials: the descriptors opened under the old ones go ---- */

#define CREDENTIALS(name, params, args)		\
int name params					\
{						\
	int ret = REAL(name) args;		\
	pid_t outer;				\
						\
	if (!ret) {				\
		outer = call_begin();		\
		drop_files();			\
		call_end(outer);		\
	}					\
	return ret;				\
}

CREDENTIALS(setuid, (uid_t u), (u))
CREDENTIALS(setgid, (gid_t g), (g))
CREDENTIALS(seteuid, (uid_t u), (u))
CREDENTIALS(setegid, (gid_t g), (g))
CREDENTIALS(setreuid, (uid_t r, uid_t e), (r, e))
CREDENTIALS(setregid, (gid_t r, gid_t e), (r, e))
CREDENTIALS(setresuid, (uid_t r, uid_t e, uid_t s), (r, e, s))
CREDENTIALS(setresgid, (gid_t r, gid_t e, gid_t s), (r, e, s))
CREDENTIALS(setgroups, (size_t n, const gid_t *l), (n, l))
