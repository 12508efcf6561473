# shellcheck shell=bash
# TREE=6.12, the backport: Debian's linux-source-6.12, the LTS kernel of
# Debian 12 (bookworm-security) and Debian 13; installed from the host's
# own apt sources.  Read by scripts/lib.sh, like config/arch/.

SOURCE_PKG=linux-source-6.12	# the Debian package of the kernel tree
SOURCE_SUITE=			# empty: installed from the host's own sources
SUBJECT_PREFIX="PATCH 6.12"	# the series' version, and its tree if not the home
