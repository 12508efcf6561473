# Builds the user space of the guest that is not a kselftest: the demo, the
# benchmark, the stress and fault-injection tools, and the base initramfs
# (busybox, /init, the test binaries).  Called by scripts/userspace.sh, with
# TOP, US (output directory), TREE, SELFTESTS.

CC ?= gcc
CFLAGS := -O2 -Wall -Wextra -static -I$(TOP)/lib
TOOL_H := $(TOP)/lib/rfp-tool.h
BUSYBOX := /bin/busybox
# kselftest's runner and KTAP helpers, from the kernel tree.
KSFT_DIR := $(TREE)/tools/testing/selftests/kselftest

all: $(US)/base.cpio

$(US)/bin/gen_init_cpio: $(TREE)/usr/gen_init_cpio.c
	$(CC) -O2 -o $@ $<

$(US)/bin/%: $(TOP)/demo/%.c $(TOOL_H)
	@echo "    CC $(notdir $@)"
	$(CC) $(CFLAGS) -o $@ $<

$(US)/bin/%: $(TOP)/bench/%.c $(TOOL_H)
	@echo "    CC $(notdir $@)"
	$(CC) $(CFLAGS) -o $@ $<

$(US)/bin/%: $(TOP)/stress/%.c $(TOP)/stress/sigbus-read.h \
		$(TOP)/stress/xorshift.h $(TOOL_H)
	@echo "    CC $(notdir $@)"
	$(CC) $(CFLAGS) -pthread -o $@ $<

GUEST_BINS := $(US)/bin/rfp-demo $(US)/bin/rfp-bench $(US)/bin/rfp-stress \
	$(US)/bin/rfp-faults $(US)/bin/rfp-fuzz $(US)/bin/rfp-diff
TEST_BINS := $(SELFTESTS:%=$(US)/mm/%)

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
	  for f in $(TEST_BINS); do echo "/tests/$${f##*/} $$f"; done; \
	} >$@.new
	@if cmp -s $@.new $@; then rm $@.new; else mv $@.new $@; fi

FORCE:

$(US)/base.cpio: $(US)/base.list $(US)/bin/gen_init_cpio $(BUSYBOX) \
		$(TOP)/guest/init $(TOP)/guest/rfp-ktap $(GUEST_BINS) $(TEST_BINS) \
		$(KSFT_DIR)/runner.sh $(KSFT_DIR)/ktap_helpers.sh \
		$(TOP)/scripts/cpio.sh
	@echo "    CPIO $(notdir $@)"
	RFP_CACHE=$(RFP_CACHE) bash $(TOP)/scripts/cpio.sh $@ <$<

.PHONY: all FORCE
