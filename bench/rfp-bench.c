// SPDX-License-Identifier: GPL-2.0
/*
 * rfp-bench: the cost of remap_file_pages() in the guest, scenario by
 * scenario.
 *
 * Run in a guest booted with -icount shift=0,sleep=off (make bench), the
 * guest clock advances one nanosecond per guest instruction, so the
 * nanoseconds measured here are guest instructions.  Each scenario runs
 * REPEATS times from a fresh setup; the line it prints gives the median
 * cost per call and the window's VMA count before and after:
 *
 *   rfp-bench: name=reverse per_call=10712 calls=4096 vmas_before=1 vmas_after=4096 runs=10700,10712,...
 *
 * Usage: rfp-bench [-r REPEATS] [-d DISK_DIR] [-s SCENARIO]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define WINDOW		4096		/* pages of the reverse/identity window */
#define POOL_SLOTS	1024		/* buffer pool: window slots ... */
#define POOL_FILE	(64 * 1024)	/* ... over a file of this many pages */
#define POOL_OPS	4096
#define SCALE_WINDOW	256

static long page;
static int repeats = 5;
static const char *disk_dir;
static const char *only;

static void die(const char *what)
{
	fprintf(stderr, "rfp-bench: %s: %s\n", what, strerror(errno));
	exit(1);
}

static uint64_t now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int rfp(void *addr, unsigned long npages, unsigned long pgoff, int flags)
{
	return syscall(SYS_remap_file_pages, addr, npages * page, 0, pgoff, flags);
}

static void must_rfp(void *addr, unsigned long npages, unsigned long pgoff,
		     int flags)
{
	if (rfp(addr, npages, pgoff, flags))
		die("remap_file_pages");
}

/* VMAs overlapping [lo, lo + len), from /proc/self/maps. */
static int vma_count(void *lo, size_t len)
{
	unsigned long s, e, a = (unsigned long)lo, b = a + len;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	int n = 0;

	if (!f)
		die("/proc/self/maps");
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx", &s, &e) == 2 && e > a && s < b)
			n++;
	fclose(f);
	return n;
}

/* A file of npages pages, in dir; each page starts with its number. */
static int make_file(const char *dir, unsigned long npages, int fill)
{
	char path[256];
	unsigned long i;
	int fd;

	snprintf(path, sizeof(path), "%s/rfp-bench.XXXXXX", dir);
	fd = mkstemp(path);
	if (fd < 0)
		die(path);
	unlink(path);
	if (ftruncate(fd, npages * page))
		die("ftruncate");
	for (i = 0; fill && i < npages; i++)
		if (pwrite(fd, &i, sizeof(i), i * page) != sizeof(i))
			die("pwrite");
	return fd;
}

static char *map_window(int fd, unsigned long npages)
{
	char *w = mmap(NULL, npages * page, PROT_READ | PROT_WRITE, MAP_SHARED,
		       fd, 0);

	if (w == MAP_FAILED)
		die("mmap");
	return w;
}

/* Which file page does window page i show? */
static unsigned long shows(char *w, unsigned long i)
{
	return *(volatile unsigned long *)(w + i * page);
}

struct result {
	const char *name;
	unsigned long calls;
	int vmas_before, vmas_after;
	uint64_t runs[32];
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void report(struct result *r)
{
	uint64_t sorted[32];
	int i;

	memcpy(sorted, r->runs, sizeof(sorted));
	qsort(sorted, repeats, sizeof(sorted[0]), cmp_u64);
	printf("rfp-bench: name=%s per_call=%llu calls=%lu vmas_before=%d vmas_after=%d runs=",
	       r->name, (unsigned long long)sorted[repeats / 2], r->calls,
	       r->vmas_before, r->vmas_after);
	for (i = 0; i < repeats; i++)
		printf("%s%llu", i ? "," : "", (unsigned long long)r->runs[i]);
	printf("\n");
	fflush(stdout);
}

static int selected(const char *name)
{
	return !only || !strcmp(only, name);
}

/* Each page remapped to the offset it already shows. */
static void bench_identity(const char *dir, const char *name)
{
	struct result r = { .name = name, .calls = WINDOW };
	int fd = make_file(dir, WINDOW, 1);
	int rep;

	for (rep = 0; rep < repeats; rep++) {
		char *w = map_window(fd, WINDOW);
		uint64_t t;
		unsigned long i;

		r.vmas_before = vma_count(w, WINDOW * page);
		t = now();
		for (i = 0; i < WINDOW; i++)
			must_rfp(w + i * page, 1, i, MAP_NONBLOCK);
		r.runs[rep] = (now() - t) / WINDOW;
		r.vmas_after = vma_count(w, WINDOW * page);
		munmap(w, WINDOW * page);
	}
	close(fd);
	report(&r);
}

/*
 * The window reversed one page at a time with MAP_NONBLOCK, then put back
 * to linear one page at a time with populate; both reported.  With
 * use_mmap, the reversal is done with mmap(MAP_FIXED) instead, the way an
 * application could do it without remap_file_pages().
 */
static void bench_reverse(const char *dir, const char *name, int use_mmap)
{
	struct result rev = { .name = name, .calls = WINDOW };
	char restore_name[64];
	struct result res = { .name = restore_name, .calls = WINDOW };
	int fd = make_file(dir, WINDOW, 1);
	int rep;

	snprintf(restore_name, sizeof(restore_name), "%s-restore", name);
	for (rep = 0; rep < repeats; rep++) {
		char *w = map_window(fd, WINDOW);
		uint64_t t;
		unsigned long i;

		rev.vmas_before = vma_count(w, WINDOW * page);
		t = now();
		for (i = 0; i < WINDOW; i++) {
			unsigned long pg = WINDOW - 1 - i;

			if (!use_mmap)
				must_rfp(w + i * page, 1, pg, MAP_NONBLOCK);
			else if (mmap(w + i * page, page, PROT_READ | PROT_WRITE,
				      MAP_SHARED | MAP_FIXED, fd,
				      pg * page) == MAP_FAILED)
				die("mmap(MAP_FIXED)");
		}
		rev.runs[rep] = (now() - t) / WINDOW;
		rev.vmas_after = vma_count(w, WINDOW * page);
		for (i = 0; i < WINDOW; i += 511)
			if (shows(w, i) != WINDOW - 1 - i) {
				fprintf(stderr, "rfp-bench: %s: page %lu shows %lu\n",
					name, i, shows(w, i));
				exit(1);
			}

		res.vmas_before = rev.vmas_after;
		t = now();
		for (i = 0; i < WINDOW; i++)
			must_rfp(w + i * page, 1, i, 0);
		res.runs[rep] = (now() - t) / WINDOW;
		res.vmas_after = vma_count(w, WINDOW * page);
		for (i = 0; i < WINDOW; i += 511)
			if (shows(w, i) != i) {
				fprintf(stderr, "rfp-bench: %s: page %lu shows %lu\n",
					restore_name, i, shows(w, i));
				exit(1);
			}
		munmap(w, WINDOW * page);
	}
	close(fd);
	report(&rev);
	if (!use_mmap)
		report(&res);
}

/* Chunks of n pages, the chunk order reversed. */
static void bench_multi(const char *dir, const char *name, unsigned long n)
{
	unsigned long chunks = WINDOW / n;
	struct result r = { .name = name, .calls = chunks };
	int fd = make_file(dir, WINDOW, 1);
	int rep;

	for (rep = 0; rep < repeats; rep++) {
		char *w = map_window(fd, WINDOW);
		uint64_t t;
		unsigned long c;

		r.vmas_before = vma_count(w, WINDOW * page);
		t = now();
		for (c = 0; c < chunks; c++)
			must_rfp(w + c * n * page, n, (chunks - 1 - c) * n,
				 MAP_NONBLOCK);
		r.runs[rep] = (now() - t) / chunks;
		r.vmas_after = vma_count(w, WINDOW * page);
		munmap(w, WINDOW * page);
	}
	close(fd);
	report(&r);
}

/*
 * A buffer pool: a window of POOL_SLOTS slots over a file of POOL_FILE
 * pages; a random file page goes into a random slot, which is then read.
 */
static void bench_pool(const char *dir, const char *name)
{
	struct result r = { .name = name, .calls = POOL_OPS };
	int fd = make_file(dir, POOL_FILE, 0);
	int rep;

	for (rep = 0; rep < repeats; rep++) {
		char *w = map_window(fd, POOL_SLOTS);
		uint64_t t, x = 12345 + rep;
		volatile unsigned long sink = 0;
		unsigned long i;

		r.vmas_before = vma_count(w, POOL_SLOTS * page);
		t = now();
		for (i = 0; i < POOL_OPS; i++) {
			unsigned long slot, pg;

			x = x * 6364136223846793005ull + 1442695040888963407ull;
			slot = (x >> 33) % POOL_SLOTS;
			pg = (x >> 13) % POOL_FILE;
			must_rfp(w + slot * page, 1, pg, MAP_NONBLOCK);
			sink += shows(w, slot);
		}
		r.runs[rep] = (now() - t) / POOL_OPS;
		r.vmas_after = vma_count(w, POOL_SLOTS * page);
		munmap(w, POOL_SLOTS * page);
	}
	close(fd);
	report(&r);
}

/*
 * The cost of a one-page remap in a process that already has about nvmas
 * VMAs: anonymous pages with alternating protections, then a window of
 * SCALE_WINDOW pages reversed.
 */
static void bench_scale(const char *dir, const char *name, unsigned long nvmas)
{
	struct result r = { .name = name, .calls = SCALE_WINDOW };
	int fd = make_file(dir, SCALE_WINDOW, 1);
	size_t len = (nvmas + 1) * page;
	char *anon = NULL;
	unsigned long i;
	int rep;

	/* Every other page read-only: each mprotect() adds two VMAs. */
	if (nvmas > 1) {
		anon = mmap(NULL, len, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (anon == MAP_FAILED)
			die("mmap anon");
		for (i = 1; i < nvmas; i += 2)
			if (mprotect(anon + i * page, page, PROT_READ))
				die("mprotect (vm.max_map_count?)");
	}
	for (rep = 0; rep < repeats; rep++) {
		char *w = map_window(fd, SCALE_WINDOW);
		uint64_t t;

		r.vmas_before = vma_count(w, SCALE_WINDOW * page);
		t = now();
		for (i = 0; i < SCALE_WINDOW; i++)
			must_rfp(w + i * page, 1, SCALE_WINDOW - 1 - i,
				 MAP_NONBLOCK);
		r.runs[rep] = (now() - t) / SCALE_WINDOW;
		r.vmas_after = vma_count(w, SCALE_WINDOW * page);
		munmap(w, SCALE_WINDOW * page);
	}
	if (anon)
		munmap(anon, len);
	close(fd);
	report(&r);
}

int main(int argc, char **argv)
{
	static const unsigned long scale[] = { 1, 1024, 16384, 61440 };
	char name[64];
	unsigned int i;
	int c;

	page = sysconf(_SC_PAGESIZE);
	while ((c = getopt(argc, argv, "r:d:s:")) != -1) {
		switch (c) {
		case 'r':
			repeats = atoi(optarg);
			break;
		case 'd':
			disk_dir = optarg;
			break;
		case 's':
			only = optarg;
			break;
		default:
			fprintf(stderr, "usage: rfp-bench [-r REPEATS] [-d DISK_DIR] [-s SCENARIO]\n");
			return 2;
		}
	}
	if (repeats < 1 || repeats > 32) {
		fprintf(stderr, "rfp-bench: -r takes 1 to 32\n");
		return 2;
	}

	/* One call first, so that the once-per-process warning is not timed. */
	bench_identity("/dev/shm", "warmup");

	if (selected("identity"))
		bench_identity("/dev/shm", "identity");
	if (selected("reverse"))
		bench_reverse("/dev/shm", "reverse", 0);
	if (selected("reverse-mmap"))
		bench_reverse("/dev/shm", "reverse-mmap", 1);
	if (selected("pool"))
		bench_pool("/dev/shm", "pool");
	if (selected("multi16"))
		bench_multi("/dev/shm", "multi16", 16);
	if (selected("multi256"))
		bench_multi("/dev/shm", "multi256", 256);
	for (i = 0; i < sizeof(scale) / sizeof(scale[0]); i++) {
		snprintf(name, sizeof(name), "scale-%lu", scale[i]);
		if (selected(name) || selected("scale"))
			bench_scale("/dev/shm", name, scale[i]);
	}
	if (disk_dir && selected("ext4-reverse"))
		bench_reverse(disk_dir, "ext4-reverse", 0);
	return 0;
}
