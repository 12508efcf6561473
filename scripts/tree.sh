#!/bin/bash
# Prepare the kernel trees outside the checkout:
#   $RFP_CACHE/TREE/linux  git tree: Debian's linux-source-TREE as commit
#                          "rfp-base"; branch "rfp-fixes" = rfp-base +
#                          patches/TREE/fixes/, branch "rfp" (checked out) =
#                          rfp-fixes + patches/TREE/decommission/
#   $RFP_CACHE/TREE/stock  git worktree of rfp-base (only for KERNEL=stock)
# Usage: tree.sh [patched|stock]
#        tree.sh --record   the tree is what patches/TREE/ says (make patches)
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

# The series as they are in patches/TREE/: every series file and patch.
series_hash() {
	local s p
	for s in $SERIES_NAMES; do
		echo "series $s"
		cat "$PATCHES/$s/series" 2>/dev/null || true
		for p in $(series_patches "$s"); do
			[ -f "$PATCHES/$s/$p" ] ||
				die "patches/$TREE/$s/series names $p, which is not in patches/$TREE/$s/"
			cat "$PATCHES/$s/$p"
		done
	done | sha256sum | cut -d' ' -f1
}

# The tree's state: HEAD, then the branch of each series ("none" where
# there is none yet).
tree_heads() {
	local s
	printf '%s' "$(git -C "$KTREE" rev-parse -q --verify HEAD || echo none)"
	for s in $SERIES_NAMES; do
		printf ' %s' "$(git -C "$KTREE" rev-parse -q --verify "refs/heads/$(series_branch "$s")" || echo none)"
	done
	echo
}

# After applying or exporting, the state file says which series the tree
# holds and where its branches were: "HASH HEADS" (series_hash, tree_heads).
STATE=$KTREE/.git/rfp-applied

record_state() {
	echo "$(series_hash) $(tree_heads)" >"$STATE"
}

# Whether the tree holds commits or edits not exported since the state
# file was written: a branch moved, HEAD moved, or the work tree changed.
# A state file of the single series held HEAD alone.
not_exported() { # RECORDED-HEADS
	local now
	now=$(tree_heads)
	[ "${1#* }" != "$1" ] || now=${now%% *}
	[ "$now" != "$1" ] || ! git -C "$KTREE" diff --quiet HEAD
}

# The cover letter's text lives in the description of the series'
# branch, so that 'make patches' can write it back with git format-patch.
set_description_from_cover() { # NAME
	local cover=$PATCHES/$1/0000-cover-letter.patch
	[ -f "$cover" ] || return 0
	# The subject (unfolded, without its [PATCH...]), a blank line, and
	# the body down to the shortlog ("Author (N):").
	git -C "$KTREE" config "branch.$(series_branch "$1").description" "$(awk '
		body && /^[^ ].* \([0-9]+\):$/ { exit }
		body { print; next }
		/^$/ && subj != "" { print subj; print ""; body = 1; next }
		/^Subject: / { subj = $0; sub(/^Subject: (\[[^]]*\] )?/, "", subj); insubj = 1; next }
		insubj && /^[ \t]/ { subj = subj $0; next }
		{ insubj = 0 }
	' "$cover" | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}')"
}

apply_series() {
	local want_hash rec_hash="" rec_heads=""
	want_hash=$(series_hash)
	[ -f "$STATE" ] && read -r rec_hash rec_heads <"$STATE"

	if [ "$want_hash" = "$rec_hash" ]; then
		if not_exported "$rec_heads"; then
			note "the tree has changes not exported to patches/$TREE/: building them as they are ('make patches' exports them)"
		fi
		return 0
	fi

	if [ -n "$rec_heads" ] && [ "$FORCE" != 1 ] && not_exported "$rec_heads"; then
		die "patches/$TREE/ changed, and $KTREE has commits or edits not exported with 'make patches'.
       Export them first ('make patches'), or throw them away with FORCE=1."
	fi

	local s p out n
	n=$(all_patches | wc -l)
	step "applying patches/$TREE/{${SERIES_NAMES// /,}}/ ($n patches) to $KTREE with git am"
	git -C "$KTREE" am --abort >/dev/null 2>&1 || true
	# What the tree held is dropped: if a patch does not apply, the next
	# run applies the series again, whatever patches/TREE/ then holds.
	rm -f "$STATE"
	git -C "$KTREE" checkout -q -f -B "$BRANCH" "$BASE_TAG"
	for s in $SERIES_NAMES; do
		for p in $(series_patches "$s"); do
			note "$s/$p"
			if ! out=$(tree_git am -q --keep-cr "$PATCHES/$s/$p" 2>&1); then
				git -C "$KTREE" am --abort >/dev/null 2>&1 || true
				echo "$out" >&2
				die "patches/$TREE/$s/$p does not apply to $(series_base "$s") and the patches before it (see above); the tree is left at the patches before it"
			fi
		done
		# The series ends on its branch; the last one's is BRANCH.
		[ "$(series_branch "$s")" = "$BRANCH" ] ||
			git -C "$KTREE" branch -f "$(series_branch "$s")" HEAD
		set_description_from_cover "$s"
	done
	record_state
	step_done
}

if [ "$want" = --record ]; then
	record_state
	exit 0
fi

# Is there anything to do: unpack, apply the series again, add the stock
# worktree?
tree_work() {
	[ -d "$KTREE/.git" ] && git -C "$KTREE" rev-parse -q --verify "$BASE_TAG" >/dev/null ||
		return 0
	case "$want" in
	patched) [ "$(series_hash 2>/dev/null)" != "$(cut -d' ' -f1 "$STATE" 2>/dev/null)" ] ;;
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
