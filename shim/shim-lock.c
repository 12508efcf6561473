// SPDX-License-Identifier: GPL-2.0
/*
 * librfp-compat.so: which addresses are locked (VM_LOCKED), from the
 * program's own calls of the mlock() family, so that a remap asks the
 * kernel (/proc/self/smaps, a read of every VMA before the range) only
 * where the answer is not known here.
 *
 * The ranges are kept as the kernel keeps VM_LOCKED: set by mlock(),
 * mlock2(), mlockall(MCL_CURRENT) and MAP_LOCKED, cleared by munlock(),
 * munlockall(), and by munmap() or mmap(MAP_FIXED) over them, moved by
 * mremap(); a call that fails may have locked or unlocked part of its
 * range, and from then on the kernel is asked.  A mapping made after
 * mlockall(MCL_FUTURE) is not among
 * them, and need not be: the kernel locks it, and the emulation's own
 * mmap() over it, alike.  Locks are not inherited by fork(): a child
 * starts with none.  Locks set by raw syscalls are not seen (README,
 * "What it cannot do").
 *
 * The table takes no lock, as the descriptors' table (shim-files.c): a
 * range is replaced by publishing its pieces before it is removed, so a
 * reader sees either the old ranges or the new ones, or both.
 */
#define _GNU_SOURCE
#define _FILE_OFFSET_BITS 64
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "shim.h"

#define RANGES	1024

struct range {
	_Atomic int state;	/* 0: free; -1: being filled; 1: in use */
	unsigned long start, end;
};

static struct range ranges[RANGES];
static _Atomic int used;	/* slots [0, used) may be in use, no other */
static _Atomic pid_t owner;	/* the process the table is of */
static _Atomic bool unknown;	/* a call whose effect is not known */

/*
 * Only the slots that may be in use are written: a fork() child that
 * wrote them all would fault in the table's pages (24 KiB) at every fork.
 */
static void empty(void)
{
	int i;

	for (i = 0; i < atomic_load(&used); i++)
		atomic_store(&ranges[i].state, 0);
	atomic_store(&used, 0);
	atomic_store(&unknown, false);
}

/* Whether the table holds nothing: no range, no call of unknown effect. */
static bool blank(void)
{
	return !atomic_load(&used) && !atomic_load(&unknown);
}

/*
 * Whether the table is this process's, taken if it is nobody's or blank.
 * A fork() child empties its copy (locks_after_fork()); a vfork() child,
 * which shares its parent's, and a child of a raw clone() leave a table
 * that is not blank alone, and ask the kernel.
 */
static bool own(void)
{
	pid_t pid = self_pid(), cur = atomic_load(&owner);

	if (cur == pid)
		return true;
	return (!cur || blank()) &&
	       atomic_compare_exchange_strong(&owner, &cur, pid);
}

/*
 * A fork() child holds no lock.  A blank table is left as it is, to be
 * taken at the child's first call: a child that only exec()s writes no
 * page of it.
 */
void locks_after_fork(void)
{
	if (blank())
		return;
	empty();
	atomic_store(&owner, getpid());
}

/*
 * The kernel may have changed locks the table does not show: a call that
 * failed part-way, or a change the table is not this process's to take
 * (a vfork() child's, which shares it; a raw clone()'s copy).  From then
 * on remaps ask the kernel.
 */
static void lost_track(void)
{
	fork_handler_wanted();
	atomic_store(&unknown, true);
}

/* A free slot set to [start, end), in use; NULL when the table is full. */
static struct range *publish(unsigned long start, unsigned long end)
{
	int i, zero;

	fork_handler_wanted();	/* a fork() child holds no lock */
	for (i = 0; i < RANGES; i++) {
		int n = atomic_load(&used);

		if (atomic_load(&ranges[i].state))
			continue;
		/* used first: no slot past it is ever taken (empty()). */
		while (n <= i && !atomic_compare_exchange_weak(&used, &n, i + 1))
			;
		zero = 0;
		if (atomic_compare_exchange_strong(&ranges[i].state, &zero, -1)) {
			ranges[i].start = start;
			ranges[i].end = end;
			atomic_store(&ranges[i].state, 1);
			return &ranges[i];
		}
	}
	atomic_store(&unknown, true);	/* full: ask the kernel from now on */
	return NULL;
}

/*
 * Lock [start, end): one range a run of locked addresses, so that a
 * program that locks page after page (stress-ng does) fills no table.
 * The union goes in before the ranges it takes the place of go out.
 */
static void add(unsigned long start, unsigned long end)
{
	struct range *fresh;
	bool grew;
	int i, one;

	if (start >= end)
		return;
	do {
		grew = false;
		for (i = 0; i < atomic_load(&used); i++) {
			struct range *r = &ranges[i];

			if (atomic_load(&r->state) != 1 || r->start > end ||
			    r->end < start || (r->start >= start && r->end <= end))
				continue;
			start = r->start < start ? r->start : start;
			end = r->end > end ? r->end : end;
			grew = true;
		}
	} while (grew);
	fresh = publish(start, end);
	if (!fresh)
		return;
	for (i = 0; i < atomic_load(&used); i++) {
		struct range *r = &ranges[i];

		one = 1;
		if (r != fresh && atomic_load(&r->state) == 1 &&
		    r->start >= start && r->end <= end)
			atomic_compare_exchange_strong(&r->state, &one, 0);
	}
}

static void remove_range(unsigned long start, unsigned long end)
{
	int i, one;

	for (i = 0; i < atomic_load(&used); i++) {
		struct range *r = &ranges[i];

		if (atomic_load(&r->state) != 1 || r->end <= start ||
		    r->start >= end)
			continue;
		/* What is left of it goes in first. */
		if (r->start < start)
			publish(r->start, start);
		if (end < r->end)
			publish(end, r->end);
		one = 1;
		atomic_compare_exchange_strong(&r->state, &one, 0);
	}
}

static unsigned long page_down(unsigned long addr)
{
	return addr & ~(shim_page_size() - 1);
}

static unsigned long page_up(unsigned long addr)
{
	return (addr + shim_page_size() - 1) & ~(shim_page_size() - 1);
}

void locked_add(unsigned long addr, unsigned long len)
{
	if (own())
		add(page_down(addr), page_up(addr + len));
	else
		lost_track();
}

void locked_remove(unsigned long addr, unsigned long len)
{
	if (own())
		remove_range(page_down(addr), page_up(addr + len));
	else
		lost_track();
}

/* A mapping made at [addr, addr + len), or moved there. */
void locked_mapped(unsigned long addr, unsigned long len, bool locked)
{
	if (!own()) {
		lost_track();
		return;
	}
	remove_range(addr, page_up(addr + len));
	if (locked)
		add(addr, page_up(addr + len));
}

bool locked_at(unsigned long addr)
{
	int i;

	if (atomic_load(&owner) != self_pid())
		return false;
	for (i = 0; i < atomic_load(&used); i++)
		if (atomic_load(&ranges[i].state) == 1 &&
		    ranges[i].start <= addr && addr < ranges[i].end)
			return true;
	return false;
}

/*
 * Whether [start, end) is locked: 1, or 0; -1 when it is not known here
 * (a lock begins or ends inside it, or a call's effect is not known).
 */
int locked_state(unsigned long start, unsigned long end)
{
	int i;

	if (atomic_load(&owner) != self_pid())
		return blank() ? 0 : -1;	/* 0: no lock set */
	if (atomic_load(&unknown))
		return -1;
	for (i = 0; i < atomic_load(&used); i++)
		if (atomic_load(&ranges[i].state) == 1 &&
		    ((ranges[i].start > start && ranges[i].start < end) ||
		     (ranges[i].end > start && ranges[i].end < end)))
			return -1;
	return locked_at(start);
}

/* ---- the mlock() family ---- */

/* A failed call may have locked or unlocked part of the range (ENOMEM). */
static void followed(long ret, bool lock, const void *addr, size_t len)
{
	pid_t outer = call_begin();

	if (ret)
		lost_track();
	else if (lock)
		locked_add((unsigned long)addr, len);
	else
		locked_remove((unsigned long)addr, len);
	call_end(outer);
}

int mlock(const void *addr, size_t len)
{
	long ret = sys(SYS_mlock, addr, len);

	followed(ret, true, addr, len);
	return ret;
}

int mlock2(const void *addr, size_t len, unsigned int flags)
{
	long ret = sys(SYS_mlock2, addr, len, flags);

	followed(ret, true, addr, len);
	return ret;
}

int munlock(const void *addr, size_t len)
{
	long ret = sys(SYS_munlock, addr, len);

	followed(ret, false, addr, len);
	return ret;
}

/* MCL_CURRENT locks every VMA there is now: those of /proc/self/maps. */
static void all_locked(void)
{
	struct reader r;
	const char *p;
	char *line;

	if (!own()) {
		lost_track();
		return;
	}
	r = (struct reader){ .fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC) };
	if (r.fd < 0) {
		lost_track();
		return;
	}
	while ((line = next_line(&r))) {
		unsigned long start, end;

		p = line;
		start = parse_hex(&p);
		if (*p++ != '-')
			continue;
		end = parse_hex(&p);
		add(start, end);
	}
	sys_close(r.fd);
}

int mlockall(int flags)
{
	long ret = sys(SYS_mlockall, flags);
	pid_t outer = call_begin();

	/* A failed call may have locked some VMAs. */
	if (ret)
		lost_track();
	else if (flags & MCL_CURRENT)
		all_locked();
	call_end(outer);
	return ret;
}

int munlockall(void)
{
	long ret = sys(SYS_munlockall);
	pid_t outer = call_begin();

	if (!ret && own())
		empty();
	else
		lost_track();
	call_end(outer);
	return ret;
}
