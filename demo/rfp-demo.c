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
#include <unistd.h>

#include "rfp-tool.h"

#define NPAGES 8

static long page;

static void show(const char *what, char *win)
{
	int i;

	printf("%-26s", what);
	for (i = 0; i < NPAGES; i++)
		printf(" %2d", atoi(win + i * page + strlen("file page ")));
	printf("   (%d VMAs)\n", rfp_vma_count(win, NPAGES * page));
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "/dev/shm";
	char *win;
	int fd, i;

	page = sysconf(_SC_PAGESIZE);
	fd = rfp_make_file(dir, "rfp-demo", NPAGES, -1, NULL, 0);
	if (fd < 0) {
		perror(dir);
		return 1;
	}
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
		if (rfp_remap(win + i * page, 1, NPAGES - 1 - i, 0)) {
			printf("remap_file_pages: %s\n", strerror(errno));
			return 1;
		}
	}
	show("after reversing:", win);
	if (rfp_remap(win, NPAGES, 0, 0)) {
		printf("remap_file_pages: %s\n", strerror(errno));
		return 1;
	}
	show("after one linear remap:", win);
	return 0;
}
