// SPDX-License-Identifier: GPL-2.0
/*
 * librfp-compat-early.so: a library whose constructor runs before the
 * shim's (preloaded after it, so initialised first), and calls what the
 * shim interposes.  rfp-compat-test's constructor_before_the_shim case
 * loads it; the case passes when the process gets to main() and then
 * remaps the memory this constructor mapped.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

char *rfp_early_window;

__attribute__((constructor))
static void early(void)
{
	struct sigaction sa = { .sa_handler = SIG_IGN };
	long page = sysconf(_SC_PAGESIZE);
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	rfp_early_window = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
				MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (rfp_early_window != MAP_FAILED)
		sprintf(rfp_early_window + page, "page 1");
	sigaction(SIGUSR1, &sa, NULL);
	sigprocmask(SIG_BLOCK, &set, NULL);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	signal(SIGUSR1, SIG_DFL);
}
