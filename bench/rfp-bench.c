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
 * Usage: rfp-bench [-r REPEATS] [-d DISK_DIR] [-s SCENARIO] [-x PREFIX] [-p]
 *        rfp-bench [-r REPEATS] -s exec
 *
 * -s runs only the scenario named SCENARIO, -x none whose name starts
 * with PREFIX.  -p (make profile): ftrace records only the timed calls,
 * tracing_on is 1 around them and 0 elsewhere.
 *
 * -s exec makes no remap: the cost of fork(), exec() of this program,
 * which exits at once, and wait(), as a shell's loop of /bin/true pays
 * it (what a library preloaded into every program, as rfp-compat's is,
 * adds to each).  It runs only when named.
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
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rfp-tool.h"

#define WINDOW		4096		/* pages of the reverse/identity window */
#define POOL_SLOTS	1024		/* buffer pool: window slots ... */
#define POOL_FILE	(64 * 1024)	/* ... over a file of this many pages */
#define POOL_OPS	4096
#define SCALE_WINDOW	256

static long page;
static int repeats = 5;
static const char *disk_dir;
static const char *only;
static const char *except;
static int tracing_fd = -1;
static int ran;			/* scenarios run, the warmup not counted */

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

static void must_rfp(void *addr, unsigned long npages, unsigned long pgoff,
		     int flags)
{
	if (rfp_remap(addr, npages, pgoff, flags))
		die("remap_file_pages");
}

/* With -p, start or stop ftrace's recording. */
static void tracing(const char *on)
{
	if (tracing_fd >= 0 && write(tracing_fd, on, 1) != 1)
		die("tracing_on");
}

/* VMAs overlapping [lo, lo + len). */
static int vma_count(void *lo, size_t len)
{
	int n = rfp_vma_count(lo, len);

	if (n < 0)
		die("/proc/self/maps");
	return n;
}

/* A file of npages pages, in dir; each page starts with its number. */
static int make_file(const char *dir, unsigned long npages, int fill)
{
	int fd = rfp_make_file(dir, "rfp-bench", npages, fill ? 0 : -1, NULL, 0);

	if (fd < 0)
		die(dir);
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
static unsigned long page_shows(char *w, unsigned long i)
{
	return *(volatile unsigned long *)(w + i * page);
}

/*
 * A scenario: a window of win_pages over a file of file_pages in dir;
 * setup() (untimed) prepares each fresh window, call() is the timed step
 * i of calls, and shows(), if there is one, says which file page window
 * page i must show afterwards (checked on a sample of the pages).
 */
struct scenario {
	const char *name;
	const char *dir;
	unsigned long file_pages, win_pages, calls;
	unsigned long chunk;	/* pages a remap */
	void (*setup)(struct scenario *sc, char *w);
	void (*call)(struct scenario *sc, char *w, unsigned long i);
	unsigned long (*shows)(struct scenario *sc, unsigned long i);
	int fd;
	uint64_t rng;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* A scenario's line: the median cost per call, VMAs, every run. */
static void report(const char *name, const uint64_t *runs, unsigned long calls,
		   int before, int after)
{
	uint64_t sorted[32];
	int rep;

	memcpy(sorted, runs, sizeof(sorted[0]) * repeats);
	qsort(sorted, repeats, sizeof(sorted[0]), cmp_u64);
	printf("rfp-bench: name=%s per_call=%llu calls=%lu vmas_before=%d vmas_after=%d runs=",
	       name, (unsigned long long)sorted[repeats / 2], calls,
	       before, after);
	for (rep = 0; rep < repeats; rep++)
		printf("%s%llu", rep ? "," : "", (unsigned long long)runs[rep]);
	printf("\n");
	fflush(stdout);
}

/*
 * Run sc repeats times, each from a fresh window, and print its line: the
 * median cost per call, the window's VMAs before and after, every run.
 */
static void run(struct scenario *sc)
{
	size_t len = sc->win_pages * page;
	uint64_t runs[32];
	int rep, before = 0, after = 0;
	unsigned long i;

	sc->fd = make_file(sc->dir, sc->file_pages, !!sc->shows);
	ran += strcmp(sc->name, "warmup") != 0;
	for (rep = 0; rep < repeats; rep++) {
		char *w = map_window(sc->fd, sc->win_pages);
		uint64_t t;

		sc->rng = 12345 + rep;
		if (sc->setup)
			sc->setup(sc, w);
		before = vma_count(w, len);
		tracing("1");
		t = now();
		for (i = 0; i < sc->calls; i++)
			sc->call(sc, w, i);
		runs[rep] = (now() - t) / sc->calls;
		tracing("0");
		after = vma_count(w, len);
		/* A sample: reading every page would change what is timed next. */
		for (i = 0; sc->shows && i < sc->win_pages; i += 511) {
			if (page_shows(w, i) == sc->shows(sc, i))
				continue;
			fprintf(stderr, "rfp-bench: %s: window page %lu shows file page %lu, not %lu\n",
				sc->name, i, page_shows(w, i), sc->shows(sc, i));
			exit(1);
		}
		munmap(w, len);
		/*
		 * Let the kernel settle before the next run: VMAs and maple
		 * nodes are freed after an RCU grace period, and a run that
		 * starts while thousands are waiting allocates from fresh
		 * slabs and costs more.
		 */
		usleep(100000);
	}
	close(sc->fd);
	report(sc->name, runs, sc->calls, before, after);
}

/* The exec scenario: fork(), exec() of this program with -e, wait(). */
#define EXECS	64

static void run_exec(void)
{
	uint64_t runs[32], t;
	int rep, i, status;
	pid_t pid;

	for (rep = 0; rep < repeats; rep++) {
		t = now();
		for (i = 0; i < EXECS; i++) {
			pid = fork();
			if (pid < 0)
				die("fork");
			if (!pid) {
				execl("/proc/self/exe", "rfp-bench", "-e", (char *)NULL);
				_exit(127);
			}
			if (waitpid(pid, &status, 0) != pid || status)
				die("exec of /proc/self/exe -e");
		}
		runs[rep] = (now() - t) / EXECS;
	}
	report("exec", runs, EXECS, 0, 0);
}

/* Chunk i of the window remapped to the offset it already shows. */
static void identity_call(struct scenario *sc, char *w, unsigned long i)
{
	must_rfp(w + i * sc->chunk * page, sc->chunk, i * sc->chunk,
		 MAP_NONBLOCK);
}

static unsigned long linear_shows(struct scenario *sc, unsigned long i)
{
	(void)sc;
	return i;
}

/* The order of the window's chunks reversed, a chunk a call. */
static unsigned long reversed_pgoff(struct scenario *sc, unsigned long c)
{
	return (sc->win_pages / sc->chunk - 1 - c) * sc->chunk;
}

static void reverse_call(struct scenario *sc, char *w, unsigned long i)
{
	must_rfp(w + i * sc->chunk * page, sc->chunk, reversed_pgoff(sc, i),
		 MAP_NONBLOCK);
}

static unsigned long reverse_shows(struct scenario *sc, unsigned long i)
{
	return reversed_pgoff(sc, i / sc->chunk) + i % sc->chunk;
}

/* The same with mmap(MAP_FIXED), as an application could do instead. */
static void reverse_mmap_call(struct scenario *sc, char *w, unsigned long i)
{
	if (mmap(w + i * page, page, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_FIXED, sc->fd,
		 reversed_pgoff(sc, i) * page) == MAP_FAILED)
		die("mmap(MAP_FIXED)");
}

/* A reversed window put back to linear, page by page, with populate. */
static void reverse_setup(struct scenario *sc, char *w)
{
	unsigned long i;

	for (i = 0; i < sc->win_pages; i++)
		reverse_call(sc, w, i);
}

static void restore_call(struct scenario *sc, char *w, unsigned long i)
{
	(void)sc;
	must_rfp(w + i * page, 1, i, 0);
}

/* A buffer pool: a random page of the file into a random slot, read. */
static void pool_call(struct scenario *sc, char *w, unsigned long i)
{
	unsigned long slot, pg;

	(void)i;
	sc->rng = sc->rng * 6364136223846793005ull + 1442695040888963407ull;
	slot = (sc->rng >> 33) % sc->win_pages;
	pg = (sc->rng >> 13) % sc->file_pages;
	must_rfp(w + slot * page, 1, pg, MAP_NONBLOCK);
	(void)page_shows(w, slot);
}

/*
 * The mprotect() floor of the reverse scenario: the same VMAs carved out of
 * the window, a page a call, each split off the rest of the window (every
 * other page given another protection, so that none merges with the one
 * before it).  A remap that carves cannot cost less than this.
 */
static void carve_mprotect_call(struct scenario *sc, char *w, unsigned long i)
{
	(void)sc;
	if (mprotect(w + i * page, page, i & 1 ? PROT_NONE : PROT_READ))
		die("mprotect");
}

/*
 * The steady state of a buffer pool or an emulator's page table: each
 * window page is a VMA of its own already (the window reversed), and its
 * pages are in the page tables.  Each call then moves one such page to
 * another file page, in the second half of a file of twice the window,
 * which merges with no neighbour: no VMA boundary changes.
 */
static void whole_setup(struct scenario *sc, char *w)
{
	unsigned long i;

	for (i = 0; i < sc->win_pages; i++)
		reverse_call(sc, w, i);
	for (i = 0; i < sc->win_pages; i++)
		(void)page_shows(w, i);
}

static unsigned long whole_pgoff(struct scenario *sc, unsigned long i)
{
	return 2 * sc->win_pages - 1 - i;
}

static void whole_call(struct scenario *sc, char *w, unsigned long i)
{
	must_rfp(w + i * page, 1, whole_pgoff(sc, i), MAP_NONBLOCK);
}

/* The same with populate (flags 0), as most callers do. */
static void whole_populate_call(struct scenario *sc, char *w, unsigned long i)
{
	must_rfp(w + i * page, 1, whole_pgoff(sc, i), 0);
}

/*
 * The floor of populate: the remap without it, then one read fault of the
 * page.  A remap with populate should cost about this.
 */
static void whole_read_call(struct scenario *sc, char *w, unsigned long i)
{
	whole_call(sc, w, i);
	(void)page_shows(w, i);
}

/*
 * The mprotect() floor of the whole scenarios: a one-page VMA changes its
 * protection, which changes no VMA boundary either (its offset differs from
 * its neighbours').
 */
static void whole_mprotect_call(struct scenario *sc, char *w, unsigned long i)
{
	(void)sc;
	if (mprotect(w + i * page, page, PROT_READ))
		die("mprotect");
}

static unsigned long whole_shows(struct scenario *sc, unsigned long i)
{
	return whole_pgoff(sc, i);
}

/*
 * Mlocked windows, as database buffer caches lock theirs: remaps keep
 * VM_LOCKED, so each call munlocks the old page and locks and populates
 * the new one, MAP_NONBLOCK or not.
 */
static void mlock_window(struct scenario *sc, char *w)
{
	if (mlock(w, sc->win_pages * page))
		die("mlock");
}

/*
 * A program that locks each page just before it remaps it: the mlock()
 * splits the page off as a VMA of its own, which the remap then moves.
 */
static void mlock_each_call(struct scenario *sc, char *w, unsigned long i)
{
	if (mlock(w + i * page, page))
		die("mlock");
	reverse_call(sc, w, i);
}

static void mlock_whole_setup(struct scenario *sc, char *w)
{
	whole_setup(sc, w);
	mlock_window(sc, w);
}

/*
 * A process with about nvmas VMAs: anonymous pages, every other one made
 * read-only, each mprotect() adding two VMAs.  Returns the mapping.
 */
static char *make_vmas(unsigned long nvmas, size_t *len)
{
	unsigned long i;
	char *anon;

	*len = (nvmas + 1) * page;
	anon = mmap(NULL, *len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (anon == MAP_FAILED)
		die("mmap anon");
	for (i = 1; i < nvmas; i += 2)
		if (mprotect(anon + i * page, page, PROT_READ))
			die("mprotect (vm.max_map_count?)");
	return anon;
}

static int selected(const char *name)
{
	if (except && !strncmp(name, except, strlen(except)))
		return 0;
	return !only || !strcmp(only, name);
}

static void run_selected(struct scenario *sc)
{
	if (selected(sc->name))
		run(sc);
}

/* The reverse and restore scenarios, on a file in dir. */
static void run_reverse(const char *dir, const char *prefix)
{
	char name[2][64];
	struct scenario rev = {
		.name = name[0], .dir = dir, .chunk = 1,
		.file_pages = WINDOW, .win_pages = WINDOW, .calls = WINDOW,
		.call = reverse_call, .shows = reverse_shows,
	};
	struct scenario restore = {
		.name = name[1], .dir = dir, .chunk = 1,
		.file_pages = WINDOW, .win_pages = WINDOW, .calls = WINDOW,
		.setup = reverse_setup, .call = restore_call,
		.shows = linear_shows,
	};

	snprintf(name[0], sizeof(name[0]), "%sreverse", prefix);
	snprintf(name[1], sizeof(name[1]), "%sreverse-restore", prefix);
	run_selected(&rev);
	run_selected(&restore);
}

int main(int argc, char **argv)
{
	static const unsigned long scale[] = { 1, 1024, 16384, 61440 };
	static const unsigned long multi[] = { 16, 256 };
	int c, profile_fd = -1;
	char name[64];
	unsigned int i;

	/* The exec scenario's child: nothing to do. */
	if (argc == 2 && !strcmp(argv[1], "-e"))
		return 0;
	page = sysconf(_SC_PAGESIZE);
	while ((c = getopt(argc, argv, "r:d:s:x:p")) != -1) {
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
		case 'x':
			except = optarg;
			break;
		case 'p':
			profile_fd = open("/sys/kernel/tracing/tracing_on",
					  O_WRONLY);
			if (profile_fd < 0)
				die("/sys/kernel/tracing/tracing_on");
			break;
		default:
			fprintf(stderr, "usage: rfp-bench [-r REPEATS] [-d DISK_DIR] [-s SCENARIO] [-x PREFIX] [-p]\n       rfp-bench [-r REPEATS] -s exec\n");
			return 2;
		}
	}
	if (repeats < 1 || repeats > 32) {
		fprintf(stderr, "rfp-bench: -r takes 1 to 32\n");
		return 2;
	}

	/* No remap: before the warmup, which needs the syscall or the shim. */
	if (only && !strcmp(only, "exec")) {
		run_exec();
		return 0;
	}
	/* One run first, so that the once-per-process warning is not timed. */
	run(&(struct scenario){
		.name = "warmup", .dir = "/dev/shm", .chunk = 1,
		.file_pages = 16, .win_pages = 16, .calls = 16,
		.call = identity_call,
	});
	/* With -p, ftrace records the scenarios' calls from here on. */
	tracing_fd = profile_fd;

	run_selected(&(struct scenario){
		.name = "identity", .dir = "/dev/shm", .chunk = 1,
		.file_pages = WINDOW, .win_pages = WINDOW, .calls = WINDOW,
		.call = identity_call, .shows = linear_shows,
	});
	run_reverse("/dev/shm", "");
	run_selected(&(struct scenario){
		.name = "reverse-mmap", .dir = "/dev/shm", .chunk = 1,
		.file_pages = WINDOW, .win_pages = WINDOW, .calls = WINDOW,
		.call = reverse_mmap_call, .shows = reverse_shows,
	});
	run_selected(&(struct scenario){
		.name = "pool", .dir = "/dev/shm", .chunk = 1,
		.file_pages = POOL_FILE, .win_pages = POOL_SLOTS,
		.calls = POOL_OPS, .call = pool_call,
	});
	run_selected(&(struct scenario){
		.name = "carve-mprotect", .dir = "/dev/shm", .chunk = 1,
		.file_pages = WINDOW, .win_pages = WINDOW, .calls = WINDOW,
		.call = carve_mprotect_call,
	});
	run_selected(&(struct scenario){
		.name = "whole", .dir = "/dev/shm", .chunk = 1,
		.file_pages = 2 * WINDOW, .win_pages = WINDOW, .calls = WINDOW,
		.setup = whole_setup, .call = whole_call, .shows = whole_shows,
	});
	run_selected(&(struct scenario){
		.name = "whole-populate", .dir = "/dev/shm", .chunk = 1,
		.file_pages = 2 * WINDOW, .win_pages = WINDOW, .calls = WINDOW,
		.setup = whole_setup, .call = whole_populate_call,
		.shows = whole_shows,
	});
	run_selected(&(struct scenario){
		.name = "whole-read", .dir = "/dev/shm", .chunk = 1,
		.file_pages = 2 * WINDOW, .win_pages = WINDOW, .calls = WINDOW,
		.setup = whole_setup, .call = whole_read_call,
		.shows = whole_shows,
	});
	run_selected(&(struct scenario){
		.name = "whole-mprotect", .dir = "/dev/shm", .chunk = 1,
		.file_pages = 2 * WINDOW, .win_pages = WINDOW, .calls = WINDOW,
		.setup = whole_setup, .call = whole_mprotect_call,
	});
	run_selected(&(struct scenario){
		.name = "mlock-reverse", .dir = "/dev/shm", .chunk = 1,
		.file_pages = WINDOW, .win_pages = WINDOW, .calls = WINDOW,
		.setup = mlock_window, .call = reverse_call,
		.shows = reverse_shows,
	});
	run_selected(&(struct scenario){
		.name = "mlock-each", .dir = "/dev/shm", .chunk = 1,
		.file_pages = WINDOW, .win_pages = WINDOW, .calls = WINDOW,
		.call = mlock_each_call, .shows = reverse_shows,
	});
	run_selected(&(struct scenario){
		.name = "mlock-whole", .dir = "/dev/shm", .chunk = 1,
		.file_pages = 2 * WINDOW, .win_pages = WINDOW, .calls = WINDOW,
		.setup = mlock_whole_setup, .call = whole_call,
		.shows = whole_shows,
	});
	for (i = 0; i < sizeof(multi) / sizeof(multi[0]); i++) {
		snprintf(name, sizeof(name), "multi%lu", multi[i]);
		run_selected(&(struct scenario){
			.name = name, .dir = "/dev/shm", .chunk = multi[i],
			.file_pages = WINDOW, .win_pages = WINDOW,
			.calls = WINDOW / multi[i],
			.call = reverse_call, .shows = reverse_shows,
		});
	}
	for (i = 0; i < sizeof(scale) / sizeof(scale[0]); i++) {
		char *anon = NULL;
		size_t len;

		snprintf(name, sizeof(name), "scale-%lu", scale[i]);
		if (!selected(name) && !selected("scale"))
			continue;
		if (scale[i] > 1)
			anon = make_vmas(scale[i], &len);
		run(&(struct scenario){
			.name = name, .dir = "/dev/shm", .chunk = 1,
			.file_pages = SCALE_WINDOW, .win_pages = SCALE_WINDOW,
			.calls = SCALE_WINDOW,
			.call = reverse_call, .shows = reverse_shows,
		});
		if (anon)
			munmap(anon, len);
	}
	if (disk_dir)
		run_reverse(disk_dir, "ext4-");
	if (!ran) {
		fprintf(stderr, "rfp-bench: no scenario selected\n");
		return 2;
	}
	return 0;
}
