// SPDX-License-Identifier: GPL-2.0
/*
 * librfp-compat.so: the calls that do not go through glibc's wrapper.
 *
 * A seccomp filter traps remap_file_pages alone (SECCOMP_RET_TRAP, with
 * RFP_TRAP_DATA as its data) into a SIGSYS handler, which answers in the
 * interrupted syscall's return register.  The shim's own call carries a
 * marker in the unused sixth argument, which the filter lets through.
 *
 * SIGSYS belongs to the shim.  The program's handler for it is kept aside
 * and called for every SIGSYS that is not the shim's filter's: the data
 * of a trap tells the filters apart, because the kernel delivers the data
 * of the newest filter among those that trap, so a filter the program
 * installs itself is heard first, for the shim's own call too.  SIGSYS is
 * never blocked, because a blocked SIGSYS from seccomp kills the process:
 * the constructor unblocks it (a posix_spawn()ed program may start with
 * every signal blocked), and every function that blocks signals or sets
 * a disposition leaves it alone.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include "shim.h"

#ifndef SYS_SECCOMP
#define SYS_SECCOMP 1
#endif

/* Per architecture: the audit arch, and the trapped call's registers. */
#if defined(__x86_64__)
#define RFP_AUDIT_ARCH	AUDIT_ARCH_X86_64
#define UC_ARG(uc, n)	((unsigned long)(uc)->uc_mcontext.gregs[(int[]){ \
		REG_RDI, REG_RSI, REG_RDX, REG_R10, REG_R8 }[n]])
#define UC_RET(uc)	((uc)->uc_mcontext.gregs[REG_RAX])
#elif defined(__i386__)
#define RFP_AUDIT_ARCH	AUDIT_ARCH_I386
#define UC_ARG(uc, n)	((unsigned long)(uc)->uc_mcontext.gregs[(int[]){ \
		REG_EBX, REG_ECX, REG_EDX, REG_ESI, REG_EDI }[n]])
#define UC_RET(uc)	((uc)->uc_mcontext.gregs[REG_EAX])
#elif defined(__aarch64__)
#define RFP_AUDIT_ARCH	AUDIT_ARCH_AARCH64
#define UC_ARG(uc, n)	((unsigned long)(uc)->uc_mcontext.regs[n])
#define UC_RET(uc)	((uc)->uc_mcontext.regs[0])
#elif defined(__arm__) && defined(__ARM_EABI__)
#define RFP_AUDIT_ARCH	AUDIT_ARCH_ARM
/* arm_r0 to arm_r10 follow one another in struct sigcontext. */
#define UC_ARG(uc, n)	((&(uc)->uc_mcontext.arm_r0)[n])
#define UC_RET(uc)	((uc)->uc_mcontext.arm_r0)
#else
#error "rfp-compat: add the audit arch and the syscall registers of this architecture"
#endif

/* The marker the shim's own call carries (shim-map.c), as the filter reads it. */
#define RFP_MARKER_HALF	0x52667043U
/* The data of the shim's trap, "Rf": si_errno of its SIGSYS. */
#define RFP_TRAP_DATA	0x5266

bool always, quiet;

/* What the program set for SIGSYS, while the shim's handler is in. */
static struct sigaction program_sigsys;
static _Atomic bool own_sigsys;

/*
 * libc's own signal functions, looked up at first use: a constructor that
 * runs before the shim's may call them.
 */
static int real_sigaction(int sig, const struct sigaction *act,
			  struct sigaction *old)
{
	static int (*fn)(int, const struct sigaction *, struct sigaction *);

	if (!fn)
		fn = dlsym(RTLD_NEXT, "sigaction");
	return fn(sig, act, old);
}

static int real_sigmask(bool thread, int how, const sigset_t *set,
			sigset_t *old)
{
	static int (*procmask)(int, const sigset_t *, sigset_t *);
	static int (*threadmask)(int, const sigset_t *, sigset_t *);

	if (thread) {
		if (!threadmask)
			threadmask = dlsym(RTLD_NEXT, "pthread_sigmask");
		return threadmask(how, set, old);
	}
	if (!procmask)
		procmask = dlsym(RTLD_NEXT, "sigprocmask");
	return procmask(how, set, old);
}

static void chain_sigsys(int sig, siginfo_t *info, void *uc)
{
	struct sigaction sa = program_sigsys;

	if (sa.sa_flags & SA_SIGINFO) {
		sa.sa_sigaction(sig, info, uc);
	} else if (sa.sa_handler == SIG_IGN) {
		return;
	} else if (sa.sa_handler != SIG_DFL) {
		sa.sa_handler(sig);
	} else {
		/* The default action: die of it, as without the shim. */
		sa.sa_flags = 0;
		sigemptyset(&sa.sa_mask);
		real_sigaction(SIGSYS, &sa, NULL);
		raise(SIGSYS);
	}
}

static void on_sigsys(int sig, siginfo_t *info, void *ctx)
{
	ucontext_t *uc = ctx;
	int saved = errno;

	if (info->si_code != SYS_SECCOMP || info->si_errno != RFP_TRAP_DATA ||
	    info->si_syscall != SYS_remap_file_pages ||
	    info->si_arch != RFP_AUDIT_ARCH) {
		chain_sigsys(sig, info, ctx);
		return;
	}
	UC_RET(uc) = rfp_call(UC_ARG(uc, 0), UC_ARG(uc, 1), UC_ARG(uc, 2),
			      UC_ARG(uc, 3), UC_ARG(uc, 4));
	errno = saved;
}

/* ---- the signal functions: SIGSYS's disposition is kept aside ---- */

int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	struct sigaction copy;

	if (sig == SIGSYS && atomic_load(&own_sigsys)) {
		if (old)
			*old = program_sigsys;
		if (act)
			program_sigsys = *act;
		return 0;
	}
	if (act && atomic_load(&own_sigsys)) {
		copy = *act;
		sigdelset(&copy.sa_mask, SIGSYS);
		act = &copy;
	}
	return real_sigaction(sig, act, old);
}

/* glibc's signal(): BSD semantics. */
sighandler_t signal(int sig, sighandler_t handler)
{
	struct sigaction sa = { .sa_handler = handler, .sa_flags = SA_RESTART };
	struct sigaction old;

	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, sig);
	if (sigaction(sig, &sa, &old))
		return SIG_ERR;
	return old.sa_handler;
}

/* System V: SIG_HOLD blocks SIG, anything else sets it and unblocks SIG. */
sighandler_t sigset(int sig, sighandler_t disp)
{
	struct sigaction sa = { .sa_handler = disp }, old;
	sigset_t set, was;

	sigemptyset(&set);
	sigaddset(&set, sig);
	if (sigprocmask(disp == SIG_HOLD ? SIG_BLOCK : SIG_UNBLOCK, &set, &was) ||
	    sigaction(sig, NULL, &old))
		return SIG_ERR;
	if (disp != SIG_HOLD) {
		sigemptyset(&sa.sa_mask);
		if (sigaction(sig, &sa, NULL))
			return SIG_ERR;
	}
	return sigismember(&was, sig) ? SIG_HOLD : old.sa_handler;
}

int sighold(int sig)
{
	sigset_t set;

	sigemptyset(&set);
	return sigaddset(&set, sig) ?: sigprocmask(SIG_BLOCK, &set, NULL);
}

int sigignore(int sig)
{
	struct sigaction sa = { .sa_handler = SIG_IGN };

	sigemptyset(&sa.sa_mask);
	return sigaction(sig, &sa, NULL);
}

static const sigset_t *without_sigsys(int how, const sigset_t *set,
				      sigset_t *copy)
{
	if (!set || how == SIG_UNBLOCK || !atomic_load(&own_sigsys))
		return set;
	*copy = *set;
	sigdelset(copy, SIGSYS);
	return copy;
}

int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	sigset_t copy;

	return real_sigmask(false, how, without_sigsys(how, set, &copy), old);
}

int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	sigset_t copy;

	return real_sigmask(true, how, without_sigsys(how, set, &copy), old);
}

/* BSD's masks, one bit a signal. */
static int bsd_mask(int how, int mask)
{
	sigset_t set, old;
	int sig, ret = 0;

	sigemptyset(&set);
	for (sig = 1; sig < 32; sig++)
		if (mask & (1U << (sig - 1)))
			sigaddset(&set, sig);
	if (sigprocmask(how, &set, &old))
		return -1;
	for (sig = 1; sig < 32; sig++)
		if (sigismember(&old, sig))
			ret |= 1U << (sig - 1);
	return ret;
}

int sigblock(int mask)
{
	return bsd_mask(SIG_BLOCK, mask);
}

int sigsetmask(int mask)
{
	return bsd_mask(SIG_SETMASK, mask);
}

/* ---- setup ---- */

/* args[5]'s halves, little-endian; a 32-bit call's high half is 0. */
#define ARG5_LO		offsetof(struct seccomp_data, args[5])
#define ARG5_HI		(ARG5_LO + 4)
#ifdef __LP64__
#define ARG5_HI_MARKER	RFP_MARKER_HALF
#else
#define ARG5_HI_MARKER	0
#endif

static int install_filter(void)
{
	struct sock_filter insns[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, RFP_AUDIT_ARCH, 0, 7),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_remap_file_pages, 0, 5),
		/* The shim's own call, marked in args[5], goes through. */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG5_LO),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, RFP_MARKER_HALF, 0, 2),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG5_HI),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARG5_HI_MARKER, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP | RFP_TRAP_DATA),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {
		.len = sizeof(insns) / sizeof(insns[0]),
		.filter = insns,
	};

	/* Without CAP_SYS_ADMIN a filter needs no_new_privs (inherited). */
	if (!syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
		     SECCOMP_FILTER_FLAG_TSYNC, &prog))
		return 0;
	if (errno != EACCES || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
		       SECCOMP_FILTER_FLAG_TSYNC, &prog) ? -1 : 0;
}

static bool env_is(const char *name, const char *value)
{
	const char *v = getenv(name);

	return v && !strcmp(v, value);
}

/*
 * Knobs (environment, rfp-compat sets them): RFP_COMPAT_QUIET=1 keeps the
 * one line a process prints when it first emulates a call;
 * RFP_COMPAT_SECCOMP=0 catches only glibc's wrapper (no filter);
 * RFP_COMPAT_ALWAYS=1 emulates where the kernel would do the remap.
 */
__attribute__((constructor))
static void rfp_compat_init(void)
{
	struct sigaction sa = { .sa_sigaction = on_sigsys,
				.sa_flags = SA_SIGINFO | SA_NODEFER };
	sigset_t sigsys;

	quiet = env_is("RFP_COMPAT_QUIET", "1");
	always = env_is("RFP_COMPAT_ALWAYS", "1");
	if (!dlsym(RTLD_NEXT, "sigaction") || !dlsym(RTLD_NEXT, "sigprocmask") ||
	    !dlsym(RTLD_NEXT, "pthread_sigmask")) {
		say("rfp-compat: cannot find libc's signal functions: not active\n", NULL);
		return;
	}
	if (env_is("RFP_COMPAT_SECCOMP", "0"))
		return;
	sigemptyset(&sa.sa_mask);
	real_sigaction(SIGSYS, &sa, &program_sigsys);
	atomic_store(&own_sigsys, true);
	sigemptyset(&sigsys);
	sigaddset(&sigsys, SIGSYS);
	real_sigmask(false, SIG_UNBLOCK, &sigsys, NULL);
	if (install_filter()) {
		say("rfp-compat: cannot install the seccomp filter: only glibc's remap_file_pages() is emulated, not raw syscall()s\n",
		    NULL);
		atomic_store(&own_sigsys, false);
		real_sigaction(SIGSYS, &program_sigsys, NULL);
	}
}
