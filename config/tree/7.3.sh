# shellcheck shell=bash
# TREE=7.3 (the default), the series' home: Debian's linux-source-7.3 from
# trixie-backports.  A Debian 12 host has no such suite in its sources: the
# package is downloaded with an apt configuration of its own under
# $RFP_CACHE/apt (scripts/source.sh), never installed, and the host's
# /etc/apt is left alone.  Read by scripts/lib.sh, like config/arch/.

SOURCE_PKG=linux-source-7.3	# the Debian package of the kernel tree
SOURCE_SUITE=trixie-backports	# empty: installed from the host's own sources
SUBJECT_PREFIX="PATCH"		# the series' version, and its tree if not the home
