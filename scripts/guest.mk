# Builds the user space of the guest that is not a kselftest: the demo, the
# benchmark, the stress and fault-injection tools, and the base initramfs
# (busybox, /init, the test binaries).  Called by scripts/userspace.sh, with
# TOP, US (output directory), KTREE, SELFTESTS (the kselftests of the
# first word size, in base.cpio) and SELFTESTS32 (the second's, in
# base32.cpio, when a mode needs them), and from config/arch/: CC64
# and CC32, the compilers of the guest's 64- and 32-bit programs (either
# may be empty), and BUSYBOX.

HOSTCC := gcc
CC := $(or $(CC64),$(CC32))
CFLAGS := -O2 -Wall -Wextra -static -I$(TOP)/lib
TOOL_H := $(TOP)/lib/rfp-tool.h
# kselftest's runner and KTAP helpers, from the kernel tree.
KSFT_DIR := $(KTREE)/tools/testing/selftests/kselftest

all: $(US)/base.cpio $(US)/compat.cpio $(US)/base32.cpio $(US)/compat32.cpio

$(US)/bin/gen_init_cpio: $(KTREE)/usr/gen_init_cpio.c
	$(HOSTCC) -O2 -o $@ $<

$(US)/bin/%: $(TOP)/demo/%.c $(TOOL_H)
	@echo "    CC $(notdir $@)"
	$(CC) $(CFLAGS) -o $@ $<

$(US)/bin/%: $(TOP)/bench/%.c $(TOOL_H)
	@echo "    CC $(notdir $@)"
	$(CC) $(CFLAGS) -o $@ $<

$(US)/bin/%: $(TOP)/tools/%.c $(TOP)/tools/sigbus-read.h \
		$(TOP)/tools/xorshift.h $(TOOL_H)
	@echo "    CC $(notdir $@)"
	$(CC) $(CFLAGS) -pthread -o $@ $<

# rfp-checks: a kselftest_harness program like the tree's kselftest, with
# the tree's harness.
$(US)/bin/rfp-checks: $(TOP)/tools/rfp-checks.c \
		$(KTREE)/tools/testing/selftests/kselftest_harness.h
	@echo "    CC $(notdir $@)"
	$(CC) $(CFLAGS) -I$(KTREE)/tools/testing/selftests -pthread -o $@ $<

# rfp-compat (shim/) as its package installs it (PKGROOT: the .deb
# unpacked with dpkg -x, or where ARCH is not this machine's, shim/'s
# make install; scripts/userspace.sh), at its own paths (/usr/bin/
# rfp-compat...), and what runs under it in /compat, all dynamically
# linked (PEERS: the host's programs of COMPAT_PEERS, by their names),
# with the libraries they load, in compat.cpio; the guests that refuse
# the syscall add it.  Where the kernel runs programs of both word sizes,
# the 32-bit library (PKGROOT's usr/lib32) serves the 32-bit ones (the
# launcher picks one by the program's ELF class); it and the 32-bit
# programs are in compat32.cpio, built when a mode needs them.
COMPAT := $(US)/compat
SHIM_CFLAGS := -O2 -Wall -Wextra -fPIC -shared -pthread
PKG_FILES := $(if $(PKGROOT),$(shell cd $(PKGROOT) && find usr -type f ! -path 'usr/lib32/*' | sort))
PKG_LINKS := $(if $(PKGROOT),$(shell cd $(PKGROOT) && find usr -type l | sort))
PKG32_FILES := $(if $(PKGROOT),$(shell cd $(PKGROOT) && find usr -type f -path 'usr/lib32/*' | sort))
COMPAT_BINS := $(COMPAT)/rfp-compat-test $(COMPAT)/librfp-compat-early.so \
	$(COMPAT)/rfp-stress $(COMPAT)/rfp-bench $(COMPAT)/librfp-empty.so \
	$(PEERS) $(DYN_SELFTESTS)
COMPAT32_BINS := $(DYN_SELFTESTS32)

# A library whose constructor runs before the shim's (rfp-compat-test).
$(COMPAT)/librfp-compat-early.so: $(TOP)/shim/rfp-compat-early.c
	@mkdir -p $(@D)
	@echo "    CC $(notdir $@)"
	$(CC) $(SHIM_CFLAGS) -o $@ $<

$(COMPAT)/rfp-compat-test: $(TOP)/shim/rfp-compat-test.c $(TOOL_H) \
		$(KTREE)/tools/testing/selftests/kselftest_harness.h
	@mkdir -p $(@D)
	@echo "    CC $(notdir $@)"
	$(CC) -O2 -Wall -pthread -I$(KTREE)/tools/testing/selftests -I$(TOP)/lib -o $@ $<

$(COMPAT)/rfp-stress: $(TOP)/tools/rfp-stress.c $(TOP)/tools/sigbus-read.h \
		$(TOP)/tools/xorshift.h $(TOOL_H)
	@mkdir -p $(@D)
	@echo "    CC $(notdir $@) (dynamic)"
	$(CC) -O2 -Wall -Wextra -I$(TOP)/lib -pthread -o $@ $<

$(COMPAT)/rfp-bench: $(TOP)/bench/rfp-bench.c $(TOOL_H)
	@mkdir -p $(@D)
	@echo "    CC $(notdir $@) (dynamic)"
	$(CC) -O2 -Wall -Wextra -I$(TOP)/lib -o $@ $<

# What preloading any library costs an exec (make bench), built as the shim.
$(COMPAT)/librfp-empty.so: $(TOP)/bench/rfp-empty.c
	@mkdir -p $(@D)
	@echo "    CC $(notdir $@)"
	$(CC) $(SHIM_CFLAGS) -o $@ $<

# An archive of programs under /compat and the package's files at their
# paths, with every library they load at its own path (its list first):
# compat.cpio of COMPAT_BINS and the package but its usr/lib32, and
# compat32.cpio of COMPAT32_BINS and the package's usr/lib32.
define compat_archive # NAME, PROGRAMS, PACKAGE FILES, PACKAGE LINKS
$(US)/$(1).list: $(2) $(3:%=$(PKGROOT)/%) $(TOP)/scripts/elf-libs.sh FORCE
	@{ \
	  for f in $(2); do echo "/compat/$$$${f##*/} $$$$f"; done; \
	  for f in $(3); do echo "/$$$$f $(PKGROOT)/$$$$f"; done; \
	  for f in $(4); do echo "slink /$$$$f $$$$(readlink $(PKGROOT)/$$$$f) 0777 0 0"; done; \
	  bash $(TOP)/scripts/elf-libs.sh $(2) $(filter $(PKGROOT)/usr/lib/rfp-compat/% $(PKGROOT)/usr/lib32/%,$(3:%=$(PKGROOT)/%)) || exit 1; \
	} >$$@.new
	@if cmp -s $$@.new $$@; then rm $$@.new; else mv $$@.new $$@; fi

$(US)/$(1).cpio: $(US)/$(1).list $(2) $(3:%=$(PKGROOT)/%) $(TOP)/scripts/cpio.sh
	@echo "    CPIO $$(notdir $$@)"
	RFP_CACHE=$(RFP_CACHE) bash $(TOP)/scripts/cpio.sh $$@ <$$<
endef
$(eval $(call compat_archive,compat,$(COMPAT_BINS),$(PKG_FILES),$(PKG_LINKS)))
$(eval $(call compat_archive,compat32,$(COMPAT32_BINS),$(if $(and $(CC64),$(CC32)),$(PKG32_FILES)),))

GUEST_BINS := $(US)/bin/rfp-demo $(US)/bin/rfp-bench $(US)/bin/rfp-stress \
	$(US)/bin/rfp-faults $(US)/bin/rfp-fuzz $(US)/bin/rfp-diff \
	$(US)/bin/rfp-checks
TEST_BINS := $(SELFTESTS:%=$(US)/mm/%)
# The kselftest's own runner script, where the tree has it: it runs the
# binaries next to it, and sets the sysctl around them with -d.
TEST_SCRIPTS := $(wildcard $(KTREE)/tools/testing/selftests/mm/remap_file_pages.sh)
TEST_BINS32 := $(SELFTESTS32:%=$(US)/mm/%)

# The archive's list for scripts/cpio.sh: written on every run, replaced
# only when it changes; it names this checkout's files, which a Makefile
# dependency cannot see move.
$(US)/base.list: FORCE
	@{ \
	  for d in /bin /sbin /dev /proc /sys /tmp /mnt /root /tests; do \
	    echo "dir $$d 0755 0 0"; \
	  done; \
	  echo "nod /dev/console 0600 0 0 c 5 1"; \
	  echo "/bin/busybox $(BUSYBOX)"; \
	  echo "/init $(TOP)/guest/init"; \
	  echo "/bin/rfp-ktap $(TOP)/guest/rfp-ktap"; \
	  for f in runner.sh ktap_helpers.sh; do \
	    echo "/rfp/kselftest/$$f $(KSFT_DIR)/$$f"; \
	  done; \
	  for f in $(GUEST_BINS); do echo "/bin/$${f##*/} $$f"; done; \
	  for f in $(TEST_BINS) $(TEST_SCRIPTS); do echo "/tests/$${f##*/} $$f"; done; \
	} >$@.new
	@if cmp -s $@.new $@; then rm $@.new; else mv $@.new $@; fi

FORCE:

$(US)/base.cpio: $(US)/base.list $(US)/bin/gen_init_cpio $(BUSYBOX) \
		$(TOP)/guest/init $(TOP)/guest/rfp-ktap $(GUEST_BINS) $(TEST_BINS) \
		$(TEST_SCRIPTS) \
		$(KSFT_DIR)/runner.sh $(KSFT_DIR)/ktap_helpers.sh \
		$(TOP)/scripts/cpio.sh
	@echo "    CPIO $(notdir $@)"
	RFP_CACHE=$(RFP_CACHE) bash $(TOP)/scripts/cpio.sh $@ <$<

# The kselftests of the second word size, added to base.cpio's guests by
# scripts/boot.sh when the mode needs them.
$(US)/base32.list: FORCE
	@for f in $(TEST_BINS32); do echo "/tests/$${f##*/} $$f"; done >$@.new
	@if cmp -s $@.new $@; then rm $@.new; else mv $@.new $@; fi

$(US)/base32.cpio: $(US)/base32.list $(US)/bin/gen_init_cpio $(TEST_BINS32) \
		$(TOP)/scripts/cpio.sh
	@echo "    CPIO $(notdir $@)"
	RFP_CACHE=$(RFP_CACHE) bash $(TOP)/scripts/cpio.sh $@ <$<

.PHONY: all FORCE
