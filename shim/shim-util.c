// SPDX-License-Identifier: GPL-2.0
/*
 * librfp-compat.so: what every part uses.  All of it is async-signal-safe:
 * no allocation, no stdio, no lock.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "shim.h"

/*
 * Whether the process has something in the shim's tables for a fork()
 * child to take over (shim-files.c registers the fork() handler, not
 * async-signal-safe, at the next call it gets from the program):
 * 0: nothing; 1: the handler is wanted; 2: it is registered.
 */
static _Atomic int fork_handler;

void fork_handler_wanted(void)
{
	int none = 0;

	if (atomic_load_explicit(&fork_handler, memory_order_relaxed) == 0)
		atomic_compare_exchange_strong(&fork_handler, &none, 1);
}

/* Whether the caller is to register the handler now: once, if wanted. */
bool fork_handler_due(void)
{
	int wanted = 1;

	return atomic_load_explicit(&fork_handler, memory_order_relaxed) == 1 &&
	       atomic_compare_exchange_strong(&fork_handler, &wanted, 2);
}

/*
 * The process the caller runs in, which tells the process the shim's
 * tables are of from a vfork() child, which shares them: getpid() once
 * for a whole remap (call_begin()), rather than at each of its steps.
 * Initial-exec: the library is loaded at start, and no access allocates.
 */
static _Thread_local pid_t call_pid __attribute__((tls_model("initial-exec")));

pid_t self_pid(void)
{
	return call_pid ? call_pid : getpid();
}

/*
 * A call begins in this thread: what call_end() puts back, the value of
 * an outer call of this process's (a signal handler's call inside
 * another), else 0.  A vfork() child, which shares the thread's slot,
 * may have died inside a call and left its own pid there: that goes.
 */
pid_t call_begin(void)
{
	pid_t outer = call_pid, pid = getpid();

	call_pid = pid;
	return outer == pid ? outer : 0;
}

void call_end(pid_t outer)
{
	call_pid = outer;
}

/* A fork() child, inside a remap of its parent's (a signal handler's). */
void call_after_fork(void)
{
	if (call_pid)
		call_pid = 0;
}

static size_t cat(char *buf, size_t size, size_t n, va_list ap)
{
	const char *s;

	while ((s = va_arg(ap, const char *))) {
		size_t len = strlen(s);

		if (len > size - 1 - n)
			len = size - 1 - n;
		memcpy(buf + n, s, len);
		n += len;
	}
	buf[n] = '\0';
	return n;
}

/* Writes the strings up to NULL to stderr, in one write(). */
void say(const char *first, ...)
{
	char buf[512];
	size_t n;
	va_list ap;

	n = strlen(first) < sizeof(buf) ? strlen(first) : sizeof(buf) - 1;
	memcpy(buf, first, n);
	va_start(ap, first);
	n = cat(buf, sizeof(buf), n, ap);
	va_end(ap);
	if (write(2, buf, n) < 0)
		return;
}

/* V in BASE, written backwards into BUF (24 bytes): its first digit. */
const char *ul(char *buf, unsigned long v, int base)
{
	char *p = buf + 23;

	*p = '\0';
	do {
		*--p = "0123456789abcdef"[v % base];
		v /= base;
	} while (v);
	return p;
}

/* The strings up to NULL, joined into BUF of SIZE bytes. */
char *join(char *buf, size_t size, ...)
{
	va_list ap;

	va_start(ap, size);
	cat(buf, size, 0, ap);
	va_end(ap);
	return buf;
}

/* Next line of the file, without its newline; NULL at the end. */
char *next_line(struct reader *r)
{
	char *nl;

	for (;;) {
		nl = memchr(r->buf + r->pos, '\n', r->len - r->pos);
		if (nl) {
			char *line = r->buf + r->pos;

			*nl = '\0';
			r->pos = nl + 1 - r->buf;
			return line;
		}
		/* Keep the partial line, read more after it. */
		memmove(r->buf, r->buf + r->pos, r->len - r->pos);
		r->len -= r->pos;
		r->pos = 0;
		if (r->len == sizeof(r->buf))
			r->len = 0;	/* a line longer than the buffer: drop it */
		ssize_t n = read(r->fd, r->buf + r->len, sizeof(r->buf) - r->len);

		if (n <= 0)
			return NULL;
		r->len += n;
	}
}

unsigned long parse_hex(const char **p)
{
	unsigned long v = 0;

	for (;; (*p)++) {
		char c = **p;

		if (c >= '0' && c <= '9')
			v = v * 16 + c - '0';
		else if (c >= 'a' && c <= 'f')
			v = v * 16 + c - 'a' + 10;
		else
			return v;
	}
}

unsigned long parse_dec(const char **p)
{
	unsigned long v = 0;

	for (; **p >= '0' && **p <= '9'; (*p)++)
		v = v * 10 + **p - '0';
	return v;
}

void skip_spaces(const char **p)
{
	while (**p == ' ' || **p == '\t')
		(*p)++;
}
