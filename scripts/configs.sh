#!/bin/bash
# make configs: the series built the way the kernel test robot tries a
# series: the objects it touches, with W=1, under configurations that turn
# off its options and the features it calls into; sparse (C=1) on them;
# 32-bit and arm64 builds; and a whole no-MMU kernel, where the syscall
# must fall back to sys_ni_syscall.  One TAP line a configuration, each
# with its time; a configuration fails on a build error and on a warning
# in a file the series touches that the stock tree's same build does not
# print (compared by file and message).
#
# Usage: configs.sh [NAME...]   (default: all; NAME as in the list below)
. "$(dirname "$0")/lib.sh"

# NAME ARCH CROSS BASE FRAGMENT TARGETS: BASE is a make target that makes
# a config (tinyconfig gets config/base.config merged, the guests' own);
# FRAGMENT is one line, or "-"; TARGETS the objects to build, or an image.
# A CONFIG_REMAP_FILE_PAGES=n kernel is linked whole by make check (its
# norfp guest); here its objects.
OBJS="mm/mmap.o mm/remap_file_pages.o kernel/fork.o"
# ipc/shm.o where the configuration has SYSVIPC (defconfig, and tinyconfig
# with config/base.config).
IPC="$OBJS ipc/shm.o"
# The warnings that count: those in what the series touches (a whole
# kernel's W=1 build warns about much else).
SERIES_FILES='(ipc/shm\.c|mm/mmap\.c|mm/remap_file_pages\.c|kernel/fork\.c|kernel/sys_ni\.c|include/linux/mm_types\.h|include/trace/events/mmap\.h)'
CONFIGS=(
	"allnoconfig x86_64 - allnoconfig - $OBJS"
	"defconfig x86_64 - defconfig - $IPC"
	"sysctl-n x86_64 - tinyconfig # CONFIG_SYSCTL is not set: $OBJS"
	"proc-sysctl-n x86_64 - tinyconfig # CONFIG_PROC_SYSCTL is not set: $OBJS"
	"tracing-n x86_64 - tinyconfig # CONFIG_FTRACE is not set: $OBJS"
	"vm-event-counters-n x86_64 - tinyconfig # CONFIG_VM_EVENT_COUNTERS is not set: $OBJS"
	"remap-file-pages-n x86_64 - tinyconfig # CONFIG_REMAP_FILE_PAGES is not set: mm/mmap.o kernel/fork.o kernel/sys_ni.o"
	"userfaultfd-n x86_64 - tinyconfig # CONFIG_USERFAULTFD is not set: $IPC"
	"fanotify-n x86_64 - tinyconfig # CONFIG_FANOTIFY is not set: $OBJS"
	"sparse x86_64 - defconfig - C=1 $IPC"
	"i386 i386 - tinyconfig - $IPC"
	"arm64 arm64 aarch64-linux-gnu- defconfig - $IPC"
	"nommu riscv riscv64-linux-gnu- nommu_virt_defconfig - Image"
)

want=("$@")
selected() {
	[ ${#want[@]} = 0 ] && return 0
	local w
	for w in "${want[@]}"; do [ "$w" = "$1" ] && return 0; done
	return 1
}
for w in "${want[@]}"; do
	printf '%s\n' "${CONFIGS[@]}" | grep -q "^$w " ||
		die "configs.sh: no configuration '$w' (one of: $(printf '%s\n' "${CONFIGS[@]}" | cut -d' ' -f1 | paste -sd' '))"
done

# Whether CONFIG_SYM is declared without a prompt ("bool" alone).
no_prompt() {
	local f
	f=$(grep -rlsE --include='Kconfig*' "^(menu)?config ${1#CONFIG_}[[:space:]]*\$" "$KTREE" | head -n 1)
	[ -n "$f" ] && awk -v s="${1#CONFIG_}" '
		$0 ~ "^(menu)?config " s "[[:space:]]*$" { getline; exit !($0 ~ /^[[:space:]]*(bool|tristate)[[:space:]]*$/) }
	' "$f"
}

series_warnings() { # LOG: the warnings in files the series touches
	grep -E '(warning|error):' "$1" | grep -E "$SERIES_FILES" || true
}

# The stock tree's build of the same targets, with the same .config.
stock_build() { # NAME ARCH CROSS OBJ TARGETS
	local sobj=$OUT/$1-stock
	bash "$TOP/scripts/tree.sh" stock >/dev/null
	mkdir -p "$sobj"
	cp "$4/.config" "$sobj/.config"
	for o in $OBJS kernel/sys_ni.o; do rm -f "$sobj/$o"; done
	# shellcheck disable=SC2086 # targets and C=1 are words
	make -C "$STOCK" O="$sobj" ARCH="$2" ${3:+CROSS_COMPILE=$3} olddefconfig >"$sobj/build.log" 2>&1 &&
		make -C "$STOCK" O="$sobj" ARCH="$2" ${3:+CROSS_COMPILE=$3} -j"$JOBS" W=1 $5 >>"$sobj/build.log" 2>&1 || true
}

# The warnings of PATCHED that STOCK has fewer of: compared by file and
# message, without the line and column, which the series moves.
new_warnings() { # PATCHED STOCK
	local key=':[0-9]+:[0-9]+:|^.*/linux/|^.*/stock/'
	comm -23 <(printf '%s\n' "$1" | sed -E "s#$key##g" | sort) \
		<(printf '%s\n' "$2" | sed -E "s#$key##g" | sort) | grep -v '^$' || true
}

bash "$TOP/scripts/tree.sh" patched >/dev/null
# The stock tree too, now: tree.sh would wait for the lock below.
bash "$TOP/scripts/tree.sh" stock >/dev/null
OUT=$TC/build/configs
# One make configs at a time in its build directories; the trees read
# under their shared lock (scripts/tree.sh).
lock "$(obj_lock "$OUT")" "building make configs' objects ($OUT)"
lock "$TREE_LOCK" "building make configs' objects" -s
n=0
for c in "${CONFIGS[@]}"; do selected "${c%% *}" && n=$((n + 1)); done
echo "1..$n"
rc=0
for c in "${CONFIGS[@]}"; do
	read -r name arch cross base rest <<<"$c"
	selected "$name" || continue
	frag=${rest%%:*}
	targets=${rest#*: }
	[ "$frag" != "$rest" ] || { frag=-; targets=${rest#- }; }
	# A configuration of an option this tree does not have is a skip.
	sym=$(sed -n 's/^# \(CONFIG_[A-Z0-9_]*\) is not set$/\1/p' <<<"$frag")
	if [ -n "$sym" ] && ! grep -rqsE --include='Kconfig*' "^(menu)?config ${sym#CONFIG_}[[:space:]]*\$" "$KTREE"; then
		echo "ok - $name # SKIP this tree has no $sym"
		continue
	fi
	obj=$OUT/$name
	log=$obj/build.log
	mkdir -p "$obj"
	[ "$cross" = - ] && cross=
	start=$SECONDS
	kmake() { make -C "$KTREE" O="$obj" ARCH="$arch" ${cross:+CROSS_COMPILE=$cross} "$@"; }
	{
		kmake -s "$base" &&
			if [ "$base" = tinyconfig ]; then
				(cd "$obj" && "$KTREE/scripts/kconfig/merge_config.sh" -m -O "$obj" \
					"$obj/.config" "$TOP/config/base.config" \
					"$TOP/config/tree/$TREE.config")
			fi &&
			if [ "$frag" != - ]; then
				echo "$frag" >"$obj/fragment.config" &&
					(cd "$obj" && "$KTREE/scripts/kconfig/merge_config.sh" -m -O "$obj" \
						"$obj/.config" "$obj/fragment.config")
			fi &&
			kmake -s olddefconfig
	} >"$log" 2>&1
	cfg_ok=$?
	# The fragment must have stuck, or the configuration tests nothing;
	# an option without a prompt is not the user's to turn off here.
	if [ "$cfg_ok" = 0 ] && [ "$frag" != - ] && ! grep -qx -- "$frag" "$obj/.config"; then
		if no_prompt "$sym"; then
			echo "ok - $name # SKIP $sym has no prompt on this tree: what selects it decides"
			continue
		fi
		echo "not ok - $name: '$frag' did not stick (something selects it)"
		rc=1
		continue
	fi
	# Compiled anew each run, or a rerun would see no warning.
	for o in $OBJS kernel/sys_ni.o; do rm -f "$obj/$o"; done
	# shellcheck disable=SC2086 # targets and C=1 are words
	if [ "$cfg_ok" = 0 ] && kmake -j"$JOBS" W=1 $targets >>"$log" 2>&1; then
		warnings=$(series_warnings "$log")
		# Warnings the stock tree has too are not the series': count
		# only what the same build of the stock tree does not print.
		if [ -n "$warnings" ]; then
			stock_build "$name" "$arch" "$cross" "$obj" "$targets"
			warnings=$(new_warnings "$warnings" "$(series_warnings "$OUT/$name-stock/build.log")")
		fi
		# C=1 that checked nothing: the tree refused the host's sparse.
		if [[ " $targets " == *" C=1 "* ]] && ! grep -q '^  CHECK ' "$log"; then
			if grep -q 'sparse is not available or not up to date' "$log"; then
				echo "ok - $name # SKIP the tree refuses this host's sparse ($(sparse --version 2>/dev/null || echo none)) as not up to date"
				continue
			fi
			echo "not ok - $name: C=1 checked nothing (log: $log)"
			rc=1
			continue
		fi
		if [ -z "$warnings" ]; then
			echo "ok - $name: $targets, W=1, no new warning ($((SECONDS - start)) s)"
			continue
		fi
		echo "not ok - $name: warnings ($((SECONDS - start)) s)"
		echo "$warnings" | head -n 20 | sed 's/^/    /'
	else
		echo "not ok - $name: the build failed (log: $log)"
		grep -E -A3 'error:|Error [0-9]|\*\*\*' "$log" | head -n 20 | sed 's/^/    /'
	fi
	rc=1
done
exit "$rc"
