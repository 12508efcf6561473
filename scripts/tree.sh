#!/bin/bash
# Prepare the kernel trees outside the checkout:
#   $RFP_CACHE/TREE/linux  git tree: Debian's linux-source-TREE as commit
#                          "rfp-base", branch "rfp" = rfp-base + patches/TREE/series
#   $RFP_CACHE/TREE/stock  git worktree of rfp-base (only for KERNEL=stock)
# Usage: tree.sh [patched|stock]
. "$(dirname "$0")/lib.sh"

want=${1:-patched}

unpack_tree() {
	[ -f "$TARBALL" ] || die "$TARBALL is missing: run 'make deps TREE=$TREE' (it $([ -n "$SOURCE_SUITE" ] && echo "downloads $SOURCE_PKG from $SOURCE_SUITE" || echo "installs $SOURCE_PKG"))"
	step "unpacking $(basename "$TARBALL") into $KTREE"
	local tmp=$TC/unpack.$$
	rm -rf "$tmp" && mkdir -p "$tmp"
	tar -xf "$TARBALL" -C "$tmp"
	local dir
	dir=$(find "$tmp" -mindepth 1 -maxdepth 1 -type d | head -n 1)
	[ -f "$dir/Makefile" ] || die "no kernel tree in $TARBALL"
	rm -rf "$KTREE"
	mv "$dir" "$KTREE"
	rm -rf "$tmp"
	step_done

	step "making a git tree of it (commit $BASE_TAG)"
	git -C "$KTREE" init -q -b "$BRANCH"
	# Kernel trees are big: keep git from doing needless work.
	git -C "$KTREE" config core.preloadIndex true
	git -C "$KTREE" config gc.auto 0
	# Debian's .gitignore ignores every top-level entry ("/*": the
	# packaging repository keeps only debian/); drop that block so that
	# git sees the kernel tree and the files a patch adds to it.
	sed -i '/^# Debian packaging: ignore everything/,$d' "$KTREE/.gitignore"
	git -C "$KTREE" add -A
	local ver
	if [ -n "$SOURCE_SUITE" ]; then
		ver=$(cat "$RFP_CACHE/src/$SOURCE_PKG/version" 2>/dev/null || echo unknown)
	else
		ver=$(dpkg-query -W -f='${Version}' "$SOURCE_PKG" 2>/dev/null || echo unknown)
	fi
	tree_git commit -q -m "Debian $SOURCE_PKG $ver" \
		-m "Unpacked from $TARBALL; only the Debian packaging block of the
top-level .gitignore (which ignores every top-level entry) is removed."
	git -C "$KTREE" tag "$BASE_TAG"
	step_done
}

series_files() {
	[ -f "$PATCHES/series" ] || return 0
	grep -v -e '^#' -e '^[[:space:]]*$' "$PATCHES/series" || true
}

series_hash() {
	(
		cd "$PATCHES"
		cat series 2>/dev/null
		series_files | while read -r p; do
			[ -f "$p" ] || die "patches/$TREE/series names $p, which is not in patches/$TREE/"
			cat "$p"
		done
	) | sha256sum | cut -d' ' -f1
}

# The cover letter's text lives in the branch description, so that
# 'make patches' can write it back with git format-patch.
set_description_from_cover() {
	local cover=$PATCHES/0000-cover-letter.patch
	[ -f "$cover" ] || return 0
	# The subject (unfolded, without its [PATCH...]), a blank line, and
	# the body down to the shortlog ("Author (N):").
	awk '
		body && /^[^ ].* \([0-9]+\):$/ { exit }
		body { print; next }
		/^$/ && subj != "" { print subj; print ""; body = 1; next }
		/^Subject: / { subj = $0; sub(/^Subject: (\[[^]]*\] )?/, "", subj); insubj = 1; next }
		insubj && /^[ \t]/ { subj = subj $0; next }
		{ insubj = 0 }
	' "$cover" | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}' >"$KTREE/.git/rfp-description"
	git -C "$KTREE" config "branch.${BRANCH}.description" "$(cat "$KTREE/.git/rfp-description")"
}

apply_series() {
	local state=$KTREE/.git/rfp-applied
	local want_hash head rec_hash="" rec_head=""
	want_hash=$(series_hash)
	head=$(git -C "$KTREE" rev-parse HEAD)
	[ -f "$state" ] && read -r rec_hash rec_head <"$state"

	if [ "$want_hash" = "$rec_hash" ]; then
		if [ "$head" != "$rec_head" ] || ! git -C "$KTREE" diff --quiet HEAD; then
			note "the tree has changes not exported to patches/$TREE/: building them as they are ('make patches' exports them)"
		fi
		return 0
	fi

	if [ -n "$rec_head" ] && [ "$FORCE" != 1 ]; then
		if [ "$head" != "$rec_head" ] || ! git -C "$KTREE" diff --quiet HEAD; then
			die "patches/$TREE/ changed, and $KTREE has commits or edits not exported with 'make patches'.
       Export them first ('make patches'), or throw them away with FORCE=1."
		fi
	fi

	local n
	n=$(series_files | wc -l)
	step "applying patches/$TREE/series ($n patches) to $KTREE with git am"
	git -C "$KTREE" am --abort >/dev/null 2>&1 || true
	git -C "$KTREE" checkout -q -f -B "$BRANCH" "$BASE_TAG"
	local p out
	for p in $(series_files); do
		note "$p"
		if ! out=$(tree_git am -q --keep-cr "$PATCHES/$p" 2>&1); then
			git -C "$KTREE" am --abort >/dev/null 2>&1 || true
			echo "$out" >&2
			die "patches/$TREE/$p does not apply to $BASE_TAG (see above); the tree is left at the patches before it"
		fi
	done
	set_description_from_cover
	echo "$want_hash $(git -C "$KTREE" rev-parse HEAD)" >"$state"
	step_done
}

if [ "$want" = --series-hash ]; then
	series_hash
	exit 0
fi

# Is there anything to do: unpack, apply the series again, add the stock
# worktree?
tree_work() {
	[ -d "$KTREE/.git" ] && git -C "$KTREE" rev-parse -q --verify "$BASE_TAG" >/dev/null ||
		return 0
	case "$want" in
	patched) [ "$(series_hash)" != "$(cut -d' ' -f1 "$KTREE/.git/rfp-applied" 2>/dev/null)" ] ;;
	*) [ ! -f "$STOCK/Makefile" ] ;;
	esac
}

# The trees are looked at with the kernel builds and user-space builds
# that read them (shared), and changed by one command alone: a command
# that must change them waits for those builds, and they for it.
mkdir -p "$TC"
lock "$TREE_LOCK" "looking at the kernel tree" -s
if tree_work; then
	unlock "$TREE_LOCK"
	lock "$TREE_LOCK" "preparing the kernel tree $KTREE ($want)"
fi
[ -d "$KTREE/.git" ] && git -C "$KTREE" rev-parse -q --verify "$BASE_TAG" >/dev/null || unpack_tree

case "$want" in
patched)
	apply_series
	;;
stock)
	if [ ! -f "$STOCK/Makefile" ]; then
		step "checking out $BASE_TAG as a worktree in $STOCK"
		rm -rf "$STOCK"
		git -C "$KTREE" worktree prune
		git -C "$KTREE" worktree add -q --detach "$STOCK" "$BASE_TAG"
		step_done
	fi
	;;
*)
	die "tree.sh: unknown tree '$want'"
	;;
esac
