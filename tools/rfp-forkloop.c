// SPDX-License-Identifier: GPL-2.0
/*
 * rfp-forkloop: what an unprivileged fork loop makes the kernel log.
 *
 * As user nobody, fork children for SECONDS seconds; each calls
 * remap_file_pages() once on a shared page and exits.  Then print how
 * many children there were and how many kernel log lines (from
 * /dev/kmsg, opened as root before dropping privileges) name a caller
 * of remap_file_pages(), and how many say "callbacks suppressed".
 *
 *   rfp-forkloop SECONDS
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 20, end;
	long children = 0, named = 0, suppressed = 0;
	char rec[8192];
	char *win;
	ssize_t len;
	int kmsg;

	kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	if (kmsg < 0 || lseek(kmsg, 0, SEEK_END) < 0) {
		perror("/dev/kmsg");
		return 1;
	}
	win = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (win == MAP_FAILED || setgid(65534) || setuid(65534)) {
		perror("setup");
		return 1;
	}
	end = now() + seconds;
	while (now() < end) {
		pid_t pid = fork();

		if (pid == 0) {
			syscall(__NR_remap_file_pages, win, 4096, 0, 1, 0);
			_exit(0);
		}
		if (pid < 0 || waitpid(pid, NULL, 0) != pid) {
			perror("fork");
			return 1;
		}
		children++;
	}
	for (;;) {
		len = read(kmsg, rec, sizeof(rec) - 1);
		if (len < 0 && errno == EPIPE)
			continue;
		if (len <= 0)
			break;
		rec[len] = '\0';
		if (strstr(rec, "remap_file_pages()"))
			named++;
		if (strstr(rec, "callbacks suppressed"))
			suppressed++;
	}
	printf("%.0f s: %ld children, %ld lines naming a caller, %ld 'callbacks suppressed' lines\n",
	       seconds, children, named, suppressed);
	return 0;
}
