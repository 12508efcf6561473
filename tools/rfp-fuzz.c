// SPDX-License-Identifier: GPL-2.0
/*
 * rfp-fuzz: remap_file_pages() with random arguments around real mappings,
 * each result checked against a model of the syscall's rules (README,
 * "What the kernel does").
 *
 * The mappings, in one reserved stretch of address space:
 *
 *   A  16 pages  shared, read-write, file 1     E  4 pages  shared, file 2
 *   -   4 pages  hole                           G  4 pages  shared, read-only, file 1
 *   B   4 pages  private, file 1                C  4 pages  private anonymous
 *   D   8 pages  shared anonymous               -  4 pages  hole
 *
 * A call's start, size, prot, pgoff and flags are drawn at random: mostly
 * near these mappings, sometimes anywhere, with sizes and offsets that
 * wrap or overflow.  The model says what the call must return (0, or
 * -EINVAL, -EOVERFLOW as do_mmap() gives for an offset past the file's
 * limit) and, when it succeeds, which file page each page then shows.
 * After every call every page is read (file pages past EOF must raise
 * SIGBUS), and every 64 calls /proc/self/maps is checked too: offsets and
 * permissions.  Exit status 0 when the kernel agreed with the model every
 * time, 1 otherwise.
 *
 * Usage: rfp-fuzz [-n CALLS] [-s SEED]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "rfp-tool.h"
#include "sigbus-read.h"
#include "xorshift.h"

#define SPAN		52	/* pages of the stretch */
#define FILE1_PAGES	32
#define FILE2_PAGES	8
#define ANON_PAGES	8

enum kind { HOLE, SHARED, PRIVATE };

struct region {
	const char *name;
	unsigned long first, pages;	/* in the stretch */
	enum kind kind;
	int prot;
	int obj;			/* which object: 1, 2 (files), 3 (anon) */
	unsigned long obj_pages;
	unsigned long shows[16];	/* the model: object page at each page */
};

static struct region regions[] = {
	{ .name = "A", .first = 0, .pages = 16, .kind = SHARED,
	  .prot = PROT_READ | PROT_WRITE, .obj = 1, .obj_pages = FILE1_PAGES },
	{ .name = "E", .first = 16, .pages = 4, .kind = SHARED,
	  .prot = PROT_READ | PROT_WRITE, .obj = 2, .obj_pages = FILE2_PAGES },
	{ .name = "-", .first = 20, .pages = 4, .kind = HOLE },
	{ .name = "G", .first = 24, .pages = 4, .kind = SHARED,
	  .prot = PROT_READ, .obj = 1, .obj_pages = FILE1_PAGES },
	{ .name = "B", .first = 28, .pages = 4, .kind = PRIVATE,
	  .prot = PROT_READ | PROT_WRITE, .obj = 1, .obj_pages = FILE1_PAGES },
	{ .name = "C", .first = 32, .pages = 4, .kind = PRIVATE,
	  .prot = PROT_READ | PROT_WRITE, .obj = 0 },
	{ .name = "D", .first = 36, .pages = 8, .kind = SHARED,
	  .prot = PROT_READ | PROT_WRITE, .obj = 3, .obj_pages = ANON_PAGES },
	{ .name = "-", .first = 44, .pages = 8, .kind = HOLE },
};
#define NR_REGIONS (sizeof(regions) / sizeof(regions[0]))

static long page;
/* The file size limit of tmpfs, MAX_LFS_FILESIZE of the running kernel. */
static unsigned long long max_lfs_filesize;
static char *base;
static int failures;


static struct region *region_at(unsigned long addr)
{
	unsigned long a = (unsigned long)base;
	unsigned int i;

	if (addr < a || addr >= a + SPAN * page)
		return NULL;
	for (i = 0; i < NR_REGIONS; i++)
		if ((addr - a) / page >= regions[i].first &&
		    (addr - a) / page < regions[i].first + regions[i].pages)
			return &regions[i];
	return NULL;
}

/* What remap_file_pages() must return: 0 or -errno. */
static long model(unsigned long start, unsigned long size, unsigned long prot,
		  unsigned long pgoff)
{
	unsigned long s = start & ~(page - 1), sz = size & ~(page - 1);
	unsigned long end_page;
	struct region *r;

	if (prot)
		return -EINVAL;
	if (s + sz <= s)
		return -EINVAL;
	if (pgoff + sz / page < pgoff)
		return -EINVAL;
	r = region_at(s);
	if (!r || r->kind != SHARED)
		return -EINVAL;
	/* Its neighbours map another object, with other flags, or nothing. */
	end_page = (s - (unsigned long)base) / page + sz / page;
	if (end_page > r->first + r->pages || sz / page > r->pages)
		return -EINVAL;
	/* do_mmap(): the offset must stay below the file's size limit. */
	if (pgoff > (max_lfs_filesize - sz) / page)
		return -EOVERFLOW;
	return 0;
}

static void apply(unsigned long start, unsigned long size, unsigned long pgoff)
{
	unsigned long s = start & ~(page - 1), n = (size & ~(page - 1)) / page;
	struct region *r = region_at(s);
	unsigned long i, first = (s - (unsigned long)base) / page - r->first;

	for (i = 0; i < n; i++)
		r->shows[first + i] = pgoff + i;
}

/* Every page reads what the model says. */
static void check_pages(const char *when)
{
	unsigned int i;
	unsigned long p;

	for (i = 0; i < NR_REGIONS; i++) {
		struct region *r = &regions[i];

		if (r->kind == HOLE)
			continue;
		for (p = 0; p < r->pages; p++) {
			long v = sigbus_read(base + (r->first + p) * page);
			long want;

			if (r->kind == PRIVATE)
				want = r->obj ? 1000 + (long)p : 4000 + (long)p;
			else if (r->shows[p] >= r->obj_pages)
				want = -1;
			else
				want = r->obj * 1000 + (long)r->shows[p];
			if (v != want) {
				fprintf(stderr, "rfp-fuzz: %s: %s page %lu reads %ld, the model says %ld\n",
					when, r->name, p, v, want);
				failures++;
			}
		}
	}
}

/* /proc/self/maps agrees: offsets and permissions of the shared pages. */
static void check_maps(const char *when)
{
	unsigned long s, e, a;
	/* A byte offset: past 4 GiB also for a 32-bit process. */
	unsigned long long off;
	char line[512], perms[5];
	struct region *r;
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %4s %llx", &s, &e, perms, &off) != 4)
			continue;
		for (a = s; a < e; a += page) {
			r = region_at(a);
			if (!r || r->kind != SHARED)
				continue;
			unsigned long p = (a - (unsigned long)base) / page - r->first;
			unsigned long pg = (off + (a - s)) / page;

			if (pg != r->shows[p] ||
			    perms[1] != (r->prot & PROT_WRITE ? 'w' : '-') ||
			    perms[2] != '-' || perms[3] != 's') {
				fprintf(stderr, "rfp-fuzz: %s: maps: %s page %lu at offset %lu %s, the model says %lu %s\n",
					when, r->name, p, pg, perms, r->shows[p],
					r->prot & PROT_WRITE ? "rw-s" : "r--s");
				failures++;
			}
		}
	}
	if (f)
		fclose(f);
}

static int object_fd(int obj, unsigned long pages)
{
	int fd = rfp_make_file("/dev/shm", "rfp-fuzz", pages, obj * 1000, NULL, 0);

	if (fd < 0) {
		perror("rfp-fuzz: /dev/shm");
		exit(1);
	}
	return fd;
}

static void map_regions(void)
{
	int fd1 = object_fd(1, FILE1_PAGES), fd2 = object_fd(2, FILE2_PAGES);
	unsigned int i;
	unsigned long p;

	base = mmap(NULL, SPAN * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
		    -1, 0);
	munmap(base, SPAN * page);
	for (i = 0; i < NR_REGIONS; i++) {
		struct region *r = &regions[i];
		char *at = base + r->first * page;
		size_t len = r->pages * page;
		void *m;

		if (r->kind == HOLE)
			continue;
		if (r->obj == 3)
			m = mmap(at, ANON_PAGES * page, r->prot,
				 MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		else if (r->obj == 0)
			m = mmap(at, len, r->prot,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		else
			m = mmap(at, len, r->prot,
				 (r->kind == SHARED ? MAP_SHARED : MAP_PRIVATE) |
				 MAP_FIXED, r->obj == 1 ? fd1 : fd2, 0);
		if (m != at) {
			perror("rfp-fuzz: mmap");
			exit(1);
		}
		for (p = 0; p < r->pages; p++)
			r->shows[p] = p;
		if (r->obj == 3)
			for (p = 0; p < r->pages; p++)
				*(long *)(at + p * page) = 3000 + p;
		if (r->obj == 0)
			for (p = 0; p < r->pages; p++)
				*(long *)(at + p * page) = 4000 + p;
	}
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_sigbus };
	long calls = 20000, n, results[3] = { 0 };
	unsigned long seed = 1;
	int c;

	page = sysconf(_SC_PAGESIZE);
	/*
	 * A 64-bit kernel's is LLONG_MAX, also for a 32-bit process; a 32-bit
	 * kernel's is the last byte its 32-bit page index reaches.
	 */
	{
		struct utsname u;

		max_lfs_filesize = LLONG_MAX;
		if (!uname(&u) && !strstr(u.machine, "64"))
			max_lfs_filesize = (unsigned long long)UINT32_MAX * page;
	}
	while ((c = getopt(argc, argv, "n:s:")) != -1) {
		switch (c) {
		case 'n': calls = atol(optarg); break;
		case 's': seed = strtoul(optarg, NULL, 0); break;
		default:
			fprintf(stderr, "usage: rfp-fuzz [-n CALLS] [-s SEED]\n");
			return 2;
		}
	}
	rnd_state = seed * 0x9e3779b97f4a7c15ull + 1;
	sigaction(SIGBUS, &sa, NULL);
	map_regions();
	check_pages("start");

	for (n = 0; n < calls && failures < 20; n++) {
		unsigned long start, size, prot = 0, pgoff, flags;
		long want, ret;

		start = (unsigned long)base + rnd(SPAN) * page;
		if (!rnd(8))
			start += rnd(page);
		if (!rnd(50))
			start = rnd64();
		size = rnd(18) * page;
		if (!rnd(8))
			size += rnd(page);
		if (!rnd(40))
			size = -rnd(4 * page);
		if (!rnd(20))
			prot = 1 + rnd(7);
		switch (rnd(4)) {
		case 0: pgoff = rnd(40); break;
		case 1: pgoff = -1UL - rnd(20); break;
		case 2: pgoff = 1UL << rnd(64); break;
		default: pgoff = rnd(FILE1_PAGES + 8); break;
		}
		flags = rnd64() & 0xffffffff;
		if (rnd(2))
			flags |= MAP_NONBLOCK;

		want = model(start, size, prot, pgoff);
		ret = rfp_syscall((void *)start, size, prot, pgoff, flags);
		if (ret)
			ret = -errno;
		if (ret != want) {
			fprintf(stderr, "rfp-fuzz: call %ld: remap_file_pages(%#lx, %#lx, %#lx, %#lx, %#lx) = %ld, the model says %ld\n",
				n, start, size, prot, pgoff, flags, ret, want);
			failures++;
			continue;	/* the model cannot follow */
		}
		if (!ret)
			apply(start, size, pgoff);
		results[!ret ? 0 : ret == -EINVAL ? 1 : 2]++;
		check_pages("after a call");
		if (n % 64 == 0)
			check_maps("after a call");
	}
	check_maps("end");
	printf("rfp-fuzz: seed %lu, %ld calls: %ld succeeded, %ld -EINVAL, %ld -EOVERFLOW\n",
	       seed, n, results[0], results[1], results[2]);
	printf("rfp-fuzz: %s: %d failures\n", failures ? "FAIL" : "ok", failures);
	return failures ? 1 : 0;
}
