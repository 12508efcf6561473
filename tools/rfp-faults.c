// SPDX-License-Identifier: GPL-2.0
/*
 * rfp-faults: make remap_file_pages() fail at every allocation it makes,
 * one after the other, and check that a failed call changed nothing.
 *
 * It uses the kernel's fault injection (failslab and fail_page_alloc,
 * CONFIG_FAULT_INJECTION) through /proc/thread-self/fail-nth: writing N
 * there makes the N-th fault-injection point this thread passes fail.
 * For N = 1, 2, ... a remap runs with that armed, until a call passes all
 * its points without the fault being injected.  After every call:
 *
 *   - a failed call returned -ENOMEM or -EINTR, nothing else;
 *   - every page of the window shows what it showed before the call (or,
 *     after a success, the new pages), by content;
 *   - but for one failure mode that a remap has because mmap(MAP_FIXED)
 *     has it: a call that fails after munmap()'s part of mmap() has
 *     zapped the range (allocating the new VMA, over one VMA or several)
 *     leaves the range unmapped (vms_abort_munmap_vmas()).  That is
 *     counted and printed, and the window mapped again; a hole outside
 *     the range the call remaps is a failure;
 *   - a write through every window page lands at the file offset it
 *     maps, checked at the end with pread();
 *
 * and at the end the process has as many VMAs as it started with, once
 * the window is unmapped (no VMA leaked), and /proc/meminfo's Slab has
 * not grown by more than a margin.
 *
 * Usage: rfp-faults [DIR]... (default: /dev/shm); exit status 0 when all
 * held, 1 when something did not or fault injection could not be set up,
 * 4 (kselftest's skip) when the kernel has no fault injection.
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
#include <unistd.h>

#include "rfp-tool.h"

#define FILE_PAGES	32
#define WIN		8
#define MAX_NTH		2000

static long page;
static int failures;
static int fail_nth_fd = -1;

#define fail(...) rfp_fail(&failures, __VA_ARGS__)

/*
 * Let failslab and fail_page_alloc fail sleeping allocations, quietly.
 * Returns 4 (skip) when the kernel has no fault injection at all, 1 when
 * it has but it cannot be set up (debugfs not mounted, a knob missing):
 * that is a failure, a run that injected nothing must not pass.
 */
static int setup_injection(void)
{
	static const char *const knobs[][2] = {
		{ "/sys/kernel/debug/failslab/ignore-gfp-wait", "N" },
		{ "/sys/kernel/debug/failslab/verbose", "0" },
		{ "/sys/kernel/debug/fail_page_alloc/ignore-gfp-wait", "N" },
		{ "/sys/kernel/debug/fail_page_alloc/ignore-gfp-highmem", "N" },
		{ "/sys/kernel/debug/fail_page_alloc/min-order", "0" },
		{ "/sys/kernel/debug/fail_page_alloc/verbose", "0" },
	};
	unsigned int i;

	fail_nth_fd = open("/proc/thread-self/fail-nth", O_RDWR);
	if (fail_nth_fd < 0 && errno == ENOENT) {
		printf("rfp-faults: SKIP: no /proc/thread-self/fail-nth: this kernel has no CONFIG_FAULT_INJECTION\n");
		return 4;
	}
	if (fail_nth_fd < 0) {
		fprintf(stderr, "rfp-faults: cannot set up: /proc/thread-self/fail-nth: %s\n",
			strerror(errno));
		return 1;
	}
	for (i = 0; i < sizeof(knobs) / sizeof(knobs[0]); i++)
		if (rfp_write_str(knobs[i][0], knobs[i][1])) {
			fprintf(stderr, "rfp-faults: cannot set up: %s: %s\n",
				knobs[i][0], strerror(errno));
			return 1;
		}
	return 0;
}

static void arm(int nth)
{
	char s[16];
	int n = snprintf(s, sizeof(s), "%d", nth);

	if (pwrite(fail_nth_fd, s, n, 0) != n)
		fail("arming fail-nth: %s\n", strerror(errno));
}

/* Disarm; true if the fault was injected (the count had run down). */
static int disarm(void)
{
	char s[16] = "";
	int left;

	if (pread(fail_nth_fd, s, sizeof(s) - 1, 0) < 0)
		fail("reading fail-nth: %s\n", strerror(errno));
	left = atoi(s);
	if (pwrite(fail_nth_fd, "0", 1, 0) != 1)
		fail("disarming fail-nth: %s\n", strerror(errno));
	return left == 0;
}

static long slab_kb(void)
{
	char line[256];
	FILE *f = fopen("/proc/meminfo", "r");
	long kb = -1;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "Slab: %ld kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}


/* How many pages of [@addr, @addr + @len) no VMA maps, by /proc/self/maps. */
static unsigned long unmapped_pages(const char *addr, unsigned long len)
{
	unsigned long a = (unsigned long)addr, b = a + len, s, e, mapped = 0;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx", &s, &e) == 2 && e > a && s < b)
			mapped += (e < b ? e : b) - (s > a ? s : a);
	if (f)
		fclose(f);
	return (len - mapped) / page;
}

static void check_window(const char *dir, char *win, const unsigned long *shown,
			 int nth, const char *when)
{
	unsigned long w;

	for (w = 0; w < WIN; w++) {
		uint64_t h = *(volatile uint64_t *)(win + w * page);

		if (h != shown[w])
			fail("%s: nth %d, %s: window page %lu shows file page %llu, not %lu\n",
			     dir, nth, when, w, (unsigned long long)h, shown[w]);
	}
}

/* Remap, with no fault armed, the window pages that differ from want. */
static void set_layout(const char *dir, char *win, unsigned long *shown,
		       const unsigned long *want)
{
	unsigned long w;

	for (w = 0; w < WIN; w++) {
		if (shown[w] == want[w])
			continue;
		if (rfp_remap(win + w * page, 1, want[w], MAP_NONBLOCK))
			fail("%s: putting the layout back: %s\n", dir,
			     strerror(errno));
		else
			shown[w] = want[w];
	}
}

/*
 * The remaps that are tried: one page into the middle of the window, a
 * range spanning earlier remaps, one back to linear (a merge), with and
 * without populate.
 */
static const struct {
	unsigned long w, n, pgoff;
	int flags;
} remaps[] = {
	{ 3, 1, 20, MAP_NONBLOCK },
	{ 4, 1, 21, 0 },
	{ 2, 4, 10, 0 },
	{ 3, 1, 3, MAP_NONBLOCK },
	{ 0, WIN, 0, 0 },
	{ 0, 1, 31, 0 },
};

/*
 * The reference: mmap(MAP_FIXED) of the file over one page of the window,
 * one VMA, with each of its allocations failed in turn.  How many of its
 * failed calls left a hole; -1 if the window could not be mapped again.
 */
static int mmap_holes(int fd, char *win)
{
	int nth, injected, holes = 0;
	void *m;

	for (nth = 1; nth <= MAX_NTH; nth++) {
		if (mmap(win, WIN * page, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED, fd, 0) != win)
			return -1;
		arm(nth);
		m = mmap(win + 3 * page, page, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED, fd, 9 * page);
		injected = disarm();
		if (m == MAP_FAILED && unmapped_pages(win, WIN * page))
			holes++;
		if (!injected)
			break;
	}
	return mmap(win, WIN * page, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_FIXED, fd, 0) == win ? holes : -1;
}

static void run(const char *dir)
{
	unsigned long shown[WIN], w, i;
	uint64_t stamp = 0, expect[FILE_PAGES] = { 0 };
	int fd, nth, maps_before, injected_points = 0, enomem = 0, eintr = 0;
	int holes = 0, holes_in_one = 0, mmap_one;
	uint64_t *buf;
	char path[256];
	char *win;

	/* File page i starts with i; its next 8 bytes get stamps later. */
	fd = rfp_make_file(dir, "rfp-faults", FILE_PAGES, 0, path, sizeof(path));
	if (fd < 0) {
		fail("%s: %s\n", dir, strerror(errno));
		return;
	}
	maps_before = rfp_vma_count(NULL, 0);
	win = mmap(NULL, WIN * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (win == MAP_FAILED) {
		fail("mmap: %s\n", strerror(errno));
		return;
	}
	for (w = 0; w < WIN; w++)
		shown[w] = w;
	mmap_one = mmap_holes(fd, win);
	if (mmap_one < 0) {
		fail("%s: mapping the window again: %s\n", dir, strerror(errno));
		return;
	}

	for (i = 0; i < sizeof(remaps) / sizeof(remaps[0]); i++) {
		unsigned long before[WIN];

		memcpy(before, shown, sizeof(before));
		for (nth = 1; nth <= MAX_NTH; nth++) {
			long ret;
			int injected, err;

			char *range = win + remaps[i].w * page;
			int vmas;

			/* Every attempt starts from the same layout. */
			set_layout(dir, win, shown, before);
			vmas = rfp_vma_count(range, remaps[i].n * page);
			arm(nth);
			ret = rfp_remap(win + remaps[i].w * page, remaps[i].n,
					remaps[i].pgoff, remaps[i].flags);
			err = errno;
			injected = disarm();

			if (ret == 0) {
				for (w = 0; w < remaps[i].n; w++)
					shown[remaps[i].w + w] = remaps[i].pgoff + w;
			} else if (err == ENOMEM) {
				enomem++;
			} else if (err == EINTR) {
				eintr++;
			} else {
				fail("%s: remap %lu, nth %d: %s\n", dir, i, nth,
				     strerror(err));
			}
			if (injected)
				injected_points++;
			if (ret && unmapped_pages(win, WIN * page)) {
				if (unmapped_pages(win, WIN * page) !=
				    unmapped_pages(range, remaps[i].n * page))
					fail("%s: remap %lu, nth %d: a failed remap left a hole outside its range\n",
					     dir, i, nth);
				holes++;
				holes_in_one += vmas == 1;
				if (mmap(win, WIN * page, PROT_READ | PROT_WRITE,
					 MAP_SHARED | MAP_FIXED, fd, 0) != win) {
					fail("%s: mapping the window again: %s\n",
					     dir, strerror(errno));
					break;
				}
				for (w = 0; w < WIN; w++)
					shown[w] = w;
			}
			check_window(dir, win, shown, nth,
				     ret ? "after a failed remap" : "after a remap");

			/* A write through every page, to be found by pread(). */
			for (w = 0; w < WIN; w++) {
				((uint64_t *)(win + w * page))[1] = ++stamp;
				expect[shown[w]] = stamp;
			}

			if (!injected) {
				if (ret)
					fail("%s: remap %lu failed with no fault injected: %s\n",
					     dir, i, strerror(err));
				break;
			}
		}
		if (nth > MAX_NTH)
			fail("%s: remap %lu still hit faults after %d points\n",
			     dir, i, MAX_NTH);
	}

	munmap(win, WIN * page);
	if (rfp_vma_count(NULL, 0) != maps_before)
		fail("%s: %d VMAs after unmapping the window, %d before\n", dir,
		     rfp_vma_count(NULL, 0), maps_before);

	buf = malloc(page);
	for (i = 0; i < FILE_PAGES; i++) {
		if (pread(fd, buf, page, i * page) != page) {
			fail("pread: %s\n", strerror(errno));
			break;
		}
		if (buf[0] != i || buf[1] != expect[i])
			fail("%s: file page %lu holds page %llu, stamp %llu; want page %lu, stamp %llu\n",
			     dir, i, (unsigned long long)buf[0],
			     (unsigned long long)buf[1], i,
			     (unsigned long long)expect[i]);
	}
	free(buf);
	close(fd);
	unlink(path);
	printf("rfp-faults: %s: %d calls had a fault injected (%d -ENOMEM, %d -EINTR, the others succeeded around it)\n",
	       dir, injected_points, enomem, eintr);
	if (holes)
		printf("rfp-faults: %s: %d failed calls (%d of them over one VMA) left their range unmapped; mmap(MAP_FIXED) over one VMA did in %d of its failed calls\n",
		       dir, holes, holes_in_one, mmap_one);
	if (holes_in_one && !mmap_one)
		fail("%s: a failed remap of one VMA left a hole, where mmap(MAP_FIXED) leaves none\n",
		     dir);
	if (!injected_points)
		fail("%s: no fault was injected: fault injection does not work\n",
		     dir);
}

int main(int argc, char **argv)
{
	long slab_before, slab_after;
	int i;

	page = sysconf(_SC_PAGESIZE);
	i = setup_injection();
	if (i)
		return i;
	slab_before = slab_kb();
	if (argc < 2)
		run("/dev/shm");
	for (i = 1; i < argc; i++)
		run(argv[i]);
	slab_after = slab_kb();
	printf("rfp-faults: Slab %ld kB before, %ld kB after\n", slab_before,
	       slab_after);
	/* Caches come and go; a leak per injected failure would be far more. */
	if (slab_after > slab_before + 2048)
		fail("Slab grew by %ld kB\n", slab_after - slab_before);
	printf("rfp-faults: %s: %d failures\n", failures ? "FAIL" : "ok",
	       failures);
	return failures ? 1 : 0;
}
