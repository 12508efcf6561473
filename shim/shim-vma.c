// SPDX-License-Identifier: GPL-2.0
/*
 * librfp-compat.so: the VMAs over a range, as the kernel's checks need
 * them, from PROCMAP_QUERY (one VMA by address) or /proc/self/smaps.
 * Async-signal-safe: the SIGSYS handler runs it.
 */
#define _GNU_SOURCE
#define _FILE_OFFSET_BITS 64
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "shim.h"

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
#define RFP_QUERY_OR_NEXT	0x10	/* the VMA at the address, or the next */
#define RFP_QUERY_FILE		0x20	/* file-backed VMAs only */

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
	sys_close(r.fd);
	/* The kernel looks at VM_SHARED before it looks past the first VMA. */
	if (have_first && !has_flag(first, "sh"))
		return -EINVAL;
	return ret;
}

/*
 * /proc/self/maps, held open for PROCMAP_QUERY while the shim keeps a
 * descriptor (shim-files.c): the lookup that tells when a kept file is
 * unmapped must work in a process that has run out of descriptors.
 * With nothing kept, nothing is held: a query opens it for the call.
 * -1 when not held.  The descriptor is checked by its answer: a program
 * that closed it, or reused its number, gets no answer from it.
 */
static _Atomic int maps_fd = -1;
static _Atomic pid_t maps_pid;

/* The held descriptor, if this process's (not a vfork() child's). */
static int maps_held(void)
{
	int fd = atomic_load(&maps_fd);

	return fd >= 0 && atomic_load(&maps_pid) == self_pid() ? fd : -1;
}

/* Hold /proc/self/maps open: its descriptor, or -1. */
int maps_hold(void)
{
	int fd = maps_held(), none = -1;
	bool low;

	if (fd >= 0)
		return fd;
	fd = shim_fd(open("/proc/self/maps", O_RDONLY | O_CLOEXEC), true, &low);
	if (fd < 0 || low) {
		if (fd >= 0)
			sys_close(fd);
		return -1;
	}
	atomic_store(&maps_pid, getpid());
	/* Another thread may have opened one meanwhile: one is held. */
	if (!atomic_compare_exchange_strong(&maps_fd, &none, fd)) {
		sys_close(fd);
		return none;
	}
	return fd;
}

/* Nothing is kept any more: close the held descriptor. */
void maps_release(void)
{
	int fd = maps_held();

	if (fd >= 0 && atomic_compare_exchange_strong(&maps_fd, &fd, -1))
		sys_close(fd);
}

/* In a fork() child: the held descriptor is of its parent's maps. */
void maps_after_fork(void)
{
	int fd = atomic_load(&maps_fd) < 0 ? -1 : atomic_exchange(&maps_fd, -1);

	if (fd >= 0)
		sys_close(fd);
}

/* The shim's descriptor of /proc/self/maps, or -1. */
int maps_fd_now(void)
{
	return maps_held();
}

/* The program closed the numbers FIRST to LAST. */
void maps_forget(unsigned int first, unsigned int last)
{
	int fd = maps_held();

	if (fd >= 0 && (unsigned int)fd >= first && (unsigned int)fd <= last)
		atomic_compare_exchange_strong(&maps_fd, &fd, -1);
}

static int maps_query(struct rfp_procmap_query *q)
{
	int fd = maps_held(), ret;

	if (fd >= 0) {
		if (!ioctl(fd, RFP_PROCMAP_QUERY, q))
			return 0;
		if (errno == ENOENT)
			return -ENOENT;
		/* Not (or no longer) ours: leave that number to the program. */
		atomic_compare_exchange_strong(&maps_fd, &fd, -1);
	}
	fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -ENOTTY;
	ret = ioctl(fd, RFP_PROCMAP_QUERY, q) ? (errno == ENOENT ? -ENOENT : -ENOTTY) : 0;
	sys_close(fd);
	return ret;
}

/*
 * The VMA that covers ADDR, without its VmFlags, and without its path
 * unless NAME (it costs a d_path()): 0, -ENOENT, -ENOTTY.
 */
int query_vma(unsigned long addr, struct vma *v, bool name)
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

/* Whether a VMA of the file DEV:INO starts below HI and ends above LO. */
bool file_mapped_in(dev_t dev, ino_t ino, unsigned long lo, unsigned long hi)
{
	struct rfp_procmap_query q;
	struct reader r;
	struct vma v;
	unsigned long addr = lo;
	char *line;
	bool found = false;
	int ret;

	while (addr < hi) {
		q = (struct rfp_procmap_query){
			.size = sizeof(q),
			.query_flags = RFP_QUERY_OR_NEXT | RFP_QUERY_FILE,
			.query_addr = addr,
		};
		ret = maps_query(&q);
		if (ret == -ENOENT || (!ret && q.vma_start >= hi))
			return false;
		if (ret)
			goto scan;	/* no PROCMAP_QUERY: before Linux 6.11 */
		if (q.inode == ino && makedev(q.dev_major, q.dev_minor) == dev)
			return true;
		addr = q.vma_end;
	}
	return false;
scan:
	r = (struct reader){ .fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC) };
	if (r.fd < 0)
		return true;	/* cannot tell: keep it */
	while (!found && (line = next_line(&r)))
		found = parse_header(line, &v) && v.start < hi && v.end > lo &&
			v.ino == ino && makedev(v.major, v.minor) == dev;
	sys_close(r.fd);
	return found;
}

/*
 * The VMAs over [start, end) as range_vmas() gives them, and whether the
 * first is VM_LOCKED.  The common case is answered by PROCMAP_QUERY and
 * the locked ranges the shim tracks (shim-lock.c): a range inside one
 * writable VMA (a writable shared VMA is VM_SHARED: mmap() clears
 * VM_SHARED only with VM_MAYWRITE) that is locked all through or not at
 * all.  Everything else reads /proc/self/smaps.
 */
int lookup(unsigned long start, unsigned long end, struct vma *v, bool *locked)
{
	int ret = query_vma(start, v, false), state;

	if (ret == -ENOENT || (!ret && v->perms[3] != 's'))
		return -EINVAL;
	if (!ret && end <= v->end && v->perms[1] == 'w') {
		state = locked_state(start, end);
		if (state >= 0) {
			*locked = state;
			return 0;
		}
	}
	ret = range_vmas(start, end, v);
	*locked = has_flag(v, "lo");
	return ret;
}
