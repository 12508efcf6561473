// SPDX-License-Identifier: GPL-2.0
/*
 * rfp-demo: reorder the pages of a shared tmpfs file mapping with
 * remap_file_pages() and show what each page of the window shows after it.
 *
 * Page i of the file starts with the text "file page i".  The window maps
 * the first NPAGES pages; the demo reverses them one page at a time, then
 * restores the linear layout with one call that spans all the VMAs the
 * reversal left behind.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NPAGES 8

static long page;

static int vma_count(char *win)
{
	unsigned long s, e, lo = (unsigned long)win, hi = lo + NPAGES * page;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx", &s, &e) == 2 && e > lo && s < hi)
			n++;
	fclose(f);
	return n;
}

static void show(const char *what, char *win)
{
	int i;

	printf("%-26s", what);
	for (i = 0; i < NPAGES; i++)
		printf(" %2d", atoi(win + i * page + strlen("file page ")));
	printf("   (%d VMAs)\n", vma_count(win));
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "/dev/shm";
	char path[256], *win;
	int fd, i;

	page = sysconf(_SC_PAGESIZE);
	snprintf(path, sizeof(path), "%s/rfp-demo.XXXXXX", dir);
	fd = mkstemp(path);
	if (fd < 0 || ftruncate(fd, NPAGES * page)) {
		perror(path);
		return 1;
	}
	unlink(path);
	win = mmap(NULL, NPAGES * page, PROT_READ | PROT_WRITE, MAP_SHARED,
		   fd, 0);
	if (win == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	for (i = 0; i < NPAGES; i++)
		sprintf(win + i * page, "file page %d", i);

	printf("window of %d pages of a file in %s; each column is a window page,\n"
	       "each number the file page it shows\n\n", NPAGES, dir);
	show("after mmap:", win);
	for (i = 0; i < NPAGES; i++) {
		if (syscall(SYS_remap_file_pages, win + i * page, page, 0,
			    NPAGES - 1 - i, 0)) {
			printf("remap_file_pages: %s\n", strerror(errno));
			return 1;
		}
	}
	show("after reversing:", win);
	if (syscall(SYS_remap_file_pages, win, NPAGES * page, 0, 0, 0)) {
		printf("remap_file_pages: %s\n", strerror(errno));
		return 1;
	}
	show("after one linear remap:", win);
	return 0;
}
