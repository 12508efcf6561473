// SPDX-License-Identifier: GPL-2.0
/*
 * rfp-stress: processes and threads mixing remap_file_pages() with the
 * other calls that change a shared file mapping, checked against a model.
 *
 * The file has MODEL pages, each starting with its own page number (never
 * written again), then one 8-byte slot per writer thread, and a TAIL of
 * pages past them that is truncated and grown under the windows.  Each of
 * PROCS processes maps its own window over the file and runs THREADS
 * threads that, at random:
 *
 *   - remap a range of the window (1 to 4 pages, with or without
 *     MAP_NONBLOCK) to random file pages, the tail included;
 *   - write the next value of their counter into their slot of a window
 *     page, keeping in the model which value each file page must hold;
 *   - read a window page and check that it shows the file page the
 *     process mapped there;
 *   - madvise(MADV_DONTNEED), mlock()/munlock() and mprotect() parts of
 *     the window (mprotect only to read-write again);
 *   - mmap, mremap and munmap a second mapping of the file;
 *   - ftruncate() the tail shorter or longer (window pages past EOF raise
 *     SIGBUS, which is expected there and nowhere else, and tail pages
 *     grown again read zeros);
 *   - fork() a child that remaps its copy of the window, checks it and
 *     exits, and then check that the parent's window did not change.
 *
 * Within a process a rwlock orders what the model must see in order
 * (remaps and their bookkeeping against writes and checks); the kernel
 * sees all processes and the other calls concurrently.  At the end the
 * file, read with pread() after fsync() and with the page cache dropped,
 * must hold every page's number and exactly the last value each writer
 * wrote there.  Exit status 0 when all held, 1 otherwise.
 *
 * Usage: rfp-stress [-d DIR] [-p PROCS] [-t THREADS] [-s SECONDS] [-n OPS]
 *        (OPS: per thread; the run ends at whichever limit comes first)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
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
#include "sigbus-read.h"

#define MODEL		64	/* pages whose content is modelled */
#define TAIL		16	/* pages past them, truncated and grown */
#define WIN		24	/* window pages */
#define MAX_PROCS	8
#define MAX_THREADS	8

static long page;
static int procs = 3, threads = 3;
static int seconds = 10;
static long ops = 100000;
static const char *dir = "/dev/shm";

static int fd;
static uint64_t deadline_ns;

/* Shared by all processes: each writer's model, and failures. */
struct shared {
	uint64_t model[MAX_PROCS * MAX_THREADS][MODEL];
	long failures;
	long counts[16];
};
static struct shared *sh;

enum { OP_REMAP, OP_REMAP_FAIL, OP_WRITE, OP_READ, OP_SIGBUS, OP_MADVISE,
       OP_MLOCK, OP_MPROTECT, OP_SIDE, OP_TRUNCATE, OP_FORK, NR_OPS };
static const char *const op_names[NR_OPS] = {
	"remap", "remap-failed", "write", "read", "sigbus-past-eof",
	"madvise", "mlock", "mprotect", "side-mapping", "truncate", "fork",
};

/* One process's window and what it maps. */
static char *win;
static unsigned long shown[WIN];	/* file page at each window page */
static pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;
static pthread_mutex_t side_lock = PTHREAD_MUTEX_INITIALIZER;
static char *side;
static size_t side_len;

#define fail(...) rfp_fail(&sh->failures, __VA_ARGS__)

static void count(int op)
{
	__atomic_add_fetch(&sh->counts[op], 1, __ATOMIC_RELAXED);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static unsigned long rnd(uint64_t *x, unsigned long n)
{
	*x = *x * 6364136223846793005ull + 1442695040888963407ull;
	return (*x >> 33) % n;
}

/*
 * Read the page number at the start of window page w; -1 if the access
 * raised SIGBUS (the page is past EOF).
 */
static long header(unsigned long w)
{
	return sigbus_read(win + w * page);
}

/* The file's size now, in pages: at least MODEL. */
static unsigned long file_pages(void)
{
	off_t end = lseek(fd, 0, SEEK_END);

	return end < 0 ? MODEL : end / page;
}

/* Window page w must show shown[w]; past EOF it must raise SIGBUS. */
static void check_page(unsigned long w, const char *when)
{
	long h = header(w);

	if (h == -1) {
		if (shown[w] < MODEL)
			fail("%s: window page %lu (file page %lu) raised SIGBUS\n",
			     when, w, shown[w]);
		else
			count(OP_SIGBUS);
		return;
	}
	/* A tail page that was truncated away and grown again reads zeros. */
	if (h == 0 && shown[w] >= MODEL)
		return;
	if ((unsigned long)h != shown[w])
		fail("%s: window page %lu shows file page %ld, not %lu\n",
		     when, w, h, shown[w]);
}

static void do_remap(uint64_t *x)
{
	unsigned long w = rnd(x, WIN), n = 1 + rnd(x, 4), pg, i;
	int flags = rnd(x, 2) ? MAP_NONBLOCK : 0;

	if (w + n > WIN)
		n = WIN - w;
	pg = rnd(x, MODEL + TAIL - n + 1);

	pthread_rwlock_wrlock(&lock);
	if (rfp_remap(win + w * page, n, pg, flags) == 0) {
		for (i = 0; i < n; i++)
			shown[w + i] = pg + i;
		count(OP_REMAP);
	} else {
		/* -EINVAL (mlock or mprotect split the range), -ENOMEM. */
		if (errno != EINVAL && errno != ENOMEM)
			fail("remap: unexpected error %s\n", strerror(errno));
		count(OP_REMAP_FAIL);
	}
	for (i = 0; i < n; i++)
		check_page(w + i, "after remap");
	pthread_rwlock_unlock(&lock);
}

static void do_write(uint64_t *x, int slot, uint64_t *counter)
{
	unsigned long w = rnd(x, WIN);
	uint64_t *p;

	pthread_rwlock_rdlock(&lock);
	if (shown[w] < MODEL) {
		p = (uint64_t *)(win + w * page) + 1 + slot;
		*p = ++*counter;
		sh->model[slot][shown[w]] = *counter;
		count(OP_WRITE);
	}
	pthread_rwlock_unlock(&lock);
}

static void do_read(uint64_t *x)
{
	unsigned long w = rnd(x, WIN);

	pthread_rwlock_rdlock(&lock);
	check_page(w, "read");
	count(OP_READ);
	pthread_rwlock_unlock(&lock);
}

static void do_madvise(uint64_t *x)
{
	unsigned long w = rnd(x, WIN), n = 1 + rnd(x, WIN - w);

	/* EINVAL: part of the range is mlocked. */
	if (madvise(win + w * page, n * page, MADV_DONTNEED) && errno != EINVAL)
		fail("madvise: %s\n", strerror(errno));
	count(OP_MADVISE);
}

static void do_mlock(uint64_t *x)
{
	unsigned long w = rnd(x, WIN), n = 1 + rnd(x, WIN - w);

	/* mlock() faults the range in: keep SIGBUS out of it. */
	pthread_rwlock_rdlock(&lock);
	if (rnd(x, 2)) {
		unsigned long i, eof = file_pages();

		for (i = w; i < w + n; i++)
			if (shown[i] >= eof)
				break;
		if (i == w + n && mlock(win + w * page, n * page) &&
		    errno != ENOMEM && errno != EFAULT)
			fail("mlock: %s\n", strerror(errno));
	} else if (munlock(win + w * page, n * page)) {
		fail("munlock: %s\n", strerror(errno));
	}
	pthread_rwlock_unlock(&lock);
	count(OP_MLOCK);
}

static void do_mprotect(uint64_t *x)
{
	unsigned long w = rnd(x, WIN), n = 1 + rnd(x, WIN - w);

	if (mprotect(win + w * page, n * page, PROT_READ | PROT_WRITE))
		fail("mprotect: %s\n", strerror(errno));
	count(OP_MPROTECT);
}

/* A second mapping of the file: mapped, remapped, moved, grown, unmapped. */
static void do_side(uint64_t *x)
{
	char *p;

	pthread_mutex_lock(&side_lock);
	switch (rnd(x, 3)) {
	case 0:
		if (side)
			munmap(side, side_len);
		side_len = (1 + rnd(x, 8)) * page;
		side = mmap(NULL, side_len, PROT_READ, MAP_SHARED, fd,
			    rnd(x, MODEL - 8) * page);
		if (side == MAP_FAILED) {
			fail("mmap: %s\n", strerror(errno));
			side = NULL;
		}
		break;
	case 1:
		if (!side)
			break;
		if (rfp_remap(side, 1, rnd(x, MODEL), MAP_NONBLOCK) &&
		    errno != EINVAL && errno != ENOMEM)
			fail("remap of the side mapping: %s\n", strerror(errno));
		break;
	case 2:
		if (!side)
			break;
		p = mremap(side, side_len, side_len + page, MREMAP_MAYMOVE);
		if (p == MAP_FAILED) {
			/* EFAULT: a remap split the mapping into several VMAs. */
			if (errno != ENOMEM && errno != EFAULT)
				fail("mremap: %s\n", strerror(errno));
			break;
		}
		side = p;
		side_len += page;
		break;
	}
	pthread_mutex_unlock(&side_lock);
	count(OP_SIDE);
}

static void do_truncate(uint64_t *x)
{
	if (ftruncate(fd, (MODEL + rnd(x, TAIL + 1)) * page))
		fail("ftruncate: %s\n", strerror(errno));
	count(OP_TRUNCATE);
}

/*
 * A child remaps its copy of the window to a layout of its own and checks
 * it; the parent's window must not see any of that.
 */
static void do_fork(uint64_t *x)
{
	unsigned long w;
	pid_t pid;
	int status;

	pthread_rwlock_wrlock(&lock);
	pid = fork();
	if (pid < 0) {
		fail("fork: %s\n", strerror(errno));
		pthread_rwlock_unlock(&lock);
		return;
	}
	if (pid == 0) {
		for (w = 0; w < WIN; w++) {
			if (rfp_remap(win + w * page, 1, MODEL - 1 - w, 0))
				_exit(2);
			shown[w] = MODEL - 1 - w;
		}
		for (w = 0; w < WIN; w++)
			if (header(w) != (long)shown[w])
				_exit(3);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		fail("fork: the child's own remaps failed (status 0x%x)\n",
		     status);
	for (w = 0; w < WIN; w++)
		check_page(w, "parent after the child's remaps");
	pthread_rwlock_unlock(&lock);
	(void)x;
	count(OP_FORK);
}

struct thread_arg {
	int slot;
	uint64_t seed;
};

static void *worker(void *p)
{
	struct thread_arg *a = p;
	uint64_t x = a->seed, counter = 0;
	long i;

	for (i = 0; i < ops && now_ns() < deadline_ns; i++) {
		unsigned long r = rnd(&x, 100);

		if (r < 30)
			do_remap(&x);
		else if (r < 55)
			do_write(&x, a->slot, &counter);
		else if (r < 75)
			do_read(&x);
		else if (r < 80)
			do_madvise(&x);
		else if (r < 85)
			do_mlock(&x);
		else if (r < 89)
			do_mprotect(&x);
		else if (r < 95)
			do_side(&x);
		else if (r < 99)
			do_truncate(&x);
		else
			do_fork(&x);
	}
	return NULL;
}

static void run_process(int proc)
{
	pthread_t tid[MAX_THREADS];
	struct thread_arg args[MAX_THREADS];
	unsigned long w;
	int t;

	win = mmap(NULL, WIN * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (win == MAP_FAILED) {
		fail("mmap window: %s\n", strerror(errno));
		_exit(1);
	}
	for (w = 0; w < WIN; w++)
		shown[w] = w;
	for (t = 0; t < threads; t++) {
		args[t].slot = proc * threads + t;
		args[t].seed = 0x9e3779b97f4a7c15ull * (args[t].slot + 1);
		pthread_create(&tid[t], NULL, worker, &args[t]);
	}
	for (t = 0; t < threads; t++)
		pthread_join(tid[t], NULL);
	for (w = 0; w < WIN; w++)
		check_page(w, "end");
	munmap(win, WIN * page);
	_exit(0);
}

/* The file against the model, read with pread(). */
static void verify_file(const char *when)
{
	uint64_t *buf = malloc(page);
	unsigned long pg;
	int s, bad = 0;

	for (pg = 0; pg < MODEL; pg++) {
		if (pread(fd, buf, page, pg * page) != page) {
			fail("%s: pread of page %lu: %s\n", when, pg,
			     strerror(errno));
			break;
		}
		if (buf[0] != pg && bad++ < 10)
			fail("%s: file page %lu starts with %llu\n", when, pg,
			     (unsigned long long)buf[0]);
		for (s = 0; s < procs * threads; s++)
			if (buf[1 + s] != sh->model[s][pg] && bad++ < 10)
				fail("%s: file page %lu, writer %d: %llu, the model says %llu\n",
				     when, pg, s, (unsigned long long)buf[1 + s],
				     (unsigned long long)sh->model[s][pg]);
	}
	free(buf);
}

int main(int argc, char **argv)
{
	char path[256];
	int c, p, status, i;
	pid_t pids[MAX_PROCS];
	struct sigaction sa = { .sa_handler = on_sigbus };

	page = sysconf(_SC_PAGESIZE);
	while ((c = getopt(argc, argv, "d:p:t:s:n:")) != -1) {
		switch (c) {
		case 'd': dir = optarg; break;
		case 'p': procs = atoi(optarg); break;
		case 't': threads = atoi(optarg); break;
		case 's': seconds = atoi(optarg); break;
		case 'n': ops = atol(optarg); break;
		default:
			fprintf(stderr, "usage: rfp-stress [-d DIR] [-p PROCS] [-t THREADS] [-s SECONDS] [-n OPS]\n");
			return 2;
		}
	}
	if (procs < 1 || procs > MAX_PROCS || threads < 1 ||
	    threads > MAX_THREADS || seconds < 1 || ops < 1 ||
	    (unsigned long)page < 8 * (1 + MAX_PROCS * MAX_THREADS)) {
		fprintf(stderr, "rfp-stress: -p 1..%d, -t 1..%d, -s and -n at least 1\n",
			MAX_PROCS, MAX_THREADS);
		return 2;
	}
	sigaction(SIGBUS, &sa, NULL);

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return perror("mmap"), 1;
	fd = rfp_make_file(dir, "rfp-stress", MODEL + TAIL, 0, path,
			   sizeof(path));
	if (fd < 0)
		return perror(dir), 1;

	printf("rfp-stress: %s, %d processes x %d threads, %d s or %ld operations a thread\n",
	       dir, procs, threads, seconds, ops);
	fflush(stdout);
	deadline_ns = now_ns() + seconds * 1000000000ull;
	for (p = 0; p < procs; p++) {
		pids[p] = fork();
		if (pids[p] == 0)
			run_process(p);
	}
	for (p = 0; p < procs; p++)
		if (waitpid(pids[p], &status, 0) != pids[p] ||
		    !WIFEXITED(status) || WEXITSTATUS(status))
			fail("process %d ended with status 0x%x\n", p, status);

	verify_file("page cache");
	/* And once more from the disk, with the page cache dropped. */
	if (fsync(fd))
		fail("fsync: %s\n", strerror(errno));
	i = open("/proc/sys/vm/drop_caches", O_WRONLY);
	if (i >= 0) {
		if (write(i, "3", 1) != 1)
			fail("drop_caches: %s\n", strerror(errno));
		close(i);
		verify_file("after drop_caches");
	}
	close(fd);
	unlink(path);

	for (i = 0; i < NR_OPS; i++)
		printf("rfp-stress: %-16s %ld\n", op_names[i], sh->counts[i]);
	printf("rfp-stress: %s: %ld failures\n", sh->failures ? "FAIL" : "ok",
	       sh->failures);
	return sh->failures ? 1 : 0;
}
