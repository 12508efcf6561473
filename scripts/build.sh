#!/bin/bash
# Configure and build the kernel image of ARCH (config/arch/ARCH.sh).
# Usage: build.sh KERNEL CONFIG       patched|stock, base|debug|norfp; objects
#                                     in $RFP_CACHE/TREE/build/ARCH/KERNEL-CONFIG
#        build.sh --bisect DIR        a scratch tree of make bisect, base
#                                     config; objects in $RFP_CACHE/TREE/build/ARCH/bisect
# An unchanged tree and config rebuild nothing.
. "$(dirname "$0")/lib.sh"

# LENIENT: a symbol the tree does not know is fine (the stock tree and the
# first steps of make bisect lack the series' own options).
if [ "${1:-}" = --bisect ]; then
	KERNEL=bisect CONFIG=base SRC=${2:?usage: build.sh --bisect DIR}
	OBJ=$TC/build/$ARCH/bisect
	KERNEL_IMAGE=$OBJ/$KIMAGE
	LENIENT=1
else
	kernel_vars "${1:?usage: build.sh KERNEL CONFIG}" "${2:?usage: build.sh KERNEL CONFIG}"
	bash "$TOP/scripts/tree.sh" "$KERNEL"
	LENIENT=0
	[ "$KERNEL" != stock ] || LENIENT=1
fi

# One build a build directory at a time; a boot copies the kernel out
# under the same lock (scripts/boot.sh), so that it never reads a
# half-written image, and a build of another directory keeps no boot
# waiting.  The tree is read under its shared lock: scripts/tree.sh
# changes it only when no build reads it.
lock "$(obj_lock "$OBJ")" "building kernel $KERNEL-$CONFIG ($OBJ)"
[ "$KERNEL" = bisect ] || lock "$TREE_LOCK" "building kernel $KERNEL-$CONFIG from $SRC" -s

fragments=("$TOP/config/base.config" "$TOP/config/tree/$TREE.config" "$TOP/config/arch/$ARCH.config")
[ "$CONFIG" = base ] || fragments+=("$TOP/config/$CONFIG.config")

kmake() {
	make -C "$SRC" O="$OBJ" ARCH="$KARCH" CROSS_COMPILE="$CROSS_COMPILE" "$@"
}

configure() {
	mkdir -p "$OBJ"
	local cfg=$OBJ/.config prev=$OBJ/.config.rfp-prev
	[ -f "$cfg" ] && cp -p "$cfg" "$prev"
	if ! kmake -s tinyconfig >"$OBJ/config.log" 2>&1 ||
		! (cd "$OBJ" && "$SRC/scripts/kconfig/merge_config.sh" -m -O "$OBJ" \
			"$OBJ/.config" "${fragments[@]}") >>"$OBJ/config.log" 2>&1 ||
		! kmake -s olddefconfig >>"$OBJ/config.log" 2>&1; then
		tail -n 30 "$OBJ/config.log" >&2
		die "configuring the kernel failed (log: $OBJ/config.log)"
	fi

	# Every option a fragment asks for must be in the result (a later
	# fragment overrides an earlier one).  A symbol the tree does not
	# know is only an error for the patched tree (the stock tree and the
	# first steps of make bisect lack the series' own options).
	local bad=0 f line sym
	local -A want=()
	local -a order=()
	for f in "${fragments[@]}"; do
		while IFS= read -r line; do
			case "$line" in
			CONFIG_*=*) sym=${line%%=*} ;;
			"# CONFIG_"*" is not set") sym=${line#\# }; sym=${sym%% *} ;;
			*) continue ;;
			esac
			[ -n "${want[$sym]+set}" ] || order+=("$sym")
			want[$sym]="$(basename "$f"): $line"
		done <"$f"
	done
	for sym in "${order[@]}"; do
		f=${want[$sym]%%: *}
		line=${want[$sym]#*: }
		grep -qx -- "$line" "$cfg" && continue
		# "not set" is met by a symbol whose dependencies are off.
		case "$line" in
		"# "*) grep -q "^$sym=" "$cfg" || continue ;;
		esac
		# Absent from .config: unknown to the tree, or its dependencies
		# are off.  Only the first is lenient's to forgive.
		if [ "$LENIENT" = 1 ] && ! grep -q -e "^$sym=" -e "^# $sym is not set" "$cfg" &&
			! grep -rqsx --include='Kconfig*' "config ${sym#CONFIG_}" "$SRC"; then
			continue
		fi
		echo "    $f: '$line' did not stick (.config has: $(grep -e "^$sym=" -e "^# $sym is not set" "$cfg" || echo nothing))" >&2
		bad=1
	done
	[ "$bad" = 0 ] || die "the config fragments above did not stick; check their dependencies"

	# Keep the old .config (and its time stamp) when nothing changed, so
	# that kbuild has nothing to redo.
	if [ -f "$prev" ] && cmp -s "$cfg" "$prev"; then
		mv "$prev" "$cfg"
	else
		rm -f "$prev"
		note "new kernel configuration: $OBJ/.config"
	fi
}

# Configuring takes kconfig three runs (20 s): skip it when neither the
# fragments nor any Kconfig file of the tree changed since last time.
config_key=$( {
	cat "${fragments[@]}"
	git -C "$SRC" rev-parse HEAD
	git -C "$SRC" diff HEAD -- ':(glob)**/Kconfig*'
} | sha256sum | cut -d' ' -f1)
if [ -f "$OBJ/.config" ] && [ "$(cat "$OBJ/.rfp-config-key" 2>/dev/null)" = "$config_key" ]; then
	:
else
	step "configuring $KERNEL kernel, CONFIG=$CONFIG ($SRC -> $OBJ)"
	configure
	echo "$config_key" >"$OBJ/.rfp-config-key"
	step_done
fi

step "building $KERNEL ${KIMAGE##*/} for $ARCH (make -j$JOBS; log: $OBJ/build.log)"
if ! run_logged "$OBJ/build.log" kmake -j"$JOBS" "${KIMAGE##*/}"; then
	echo "---- compiler output (from $OBJ/build.log) ----" >&2
	grep -E -A4 'error:|Error [0-9]|undefined reference|\*\*\*' "$OBJ/build.log" | head -n 60 >&2 ||
		tail -n 40 "$OBJ/build.log" >&2
	die "building the $KERNEL kernel failed"
fi
[ -f "$KERNEL_IMAGE" ] || die "build finished but $KERNEL_IMAGE is missing"
note "$(grep -m1 -o 'Kernel: .*' "$OBJ/build.log" || echo "$KERNEL_IMAGE")"
step_done
