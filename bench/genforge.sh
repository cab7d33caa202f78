#!/usr/bin/env bash
# genforge.sh N DIR: a forge of N small bare repositories under DIR, as
# odbfs --root would serve it (store/include/odbstore/scan.h), for the
# scan's speed and for mounts of many repositories.
#
#   DIR/gK/rI.git              100 repositories a group (K = I / 100)
#   DIR/gK/subK/rI.git         every odd group nested in the even one before
#   DIR/.../rI.git  (I%5==4)   a fork of r(I-1): no objects of its own but
#                              its commit, the rest through
#                              objects/info/alternates, as git clone --shared
#
# One template repository is made with git fast-import, then copied with
# cp -a; each copy gets a commit of its own (git commit-tree, on top of
# the template's) on refs/heads/main, so that no two repositories are
# alike. Two processes a repository, a group a job (as many jobs as
# CPUs): N=1000 in about 14 s, N=10000 in about 2 minutes on 2 CPUs.
# DIR is removed first.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 N DIR" >&2; exit 2; }
n=$1 dir=$2
case $n in '' | *[!0-9]*) echo "$0: N must be a number" >&2; exit 2 ;; esac
export GIT_AUTHOR_NAME=forge GIT_AUTHOR_EMAIL=forge@example.org \
	GIT_COMMITTER_NAME=forge GIT_COMMITTER_EMAIL=forge@example.org \
	GIT_AUTHOR_DATE='1700000000 +0000' GIT_COMMITTER_DATE='1700000000 +0000' \
	GIT_CONFIG_NOSYSTEM=1 HOME=/nonexistent
rm -rf "$dir"
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)	# alternates hold absolute paths
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The template: three files in one commit, packed; no hooks (--template=).
git init -q --bare --template= -b main "$work/t.git"
{
	printf 'commit refs/heads/main\ncommitter forge <forge@example.org> 1700000000 +0000\n'
	printf 'data 9\ntemplate\n\n'
	for f in README Makefile main.c; do
		printf 'M 100644 inline %s\ndata %d\n%s\n\n' "$f" $((${#f} + 1)) "$f"
	done
} | git -C "$work/t.git" fast-import --quiet
git -C "$work/t.git" repack -adq
git -C "$work/t.git" prune-packed
base=$(git -C "$work/t.git" rev-parse main)
tree=$(git -C "$work/t.git" rev-parse 'main^{tree}')
# A fork's skeleton: the template without its objects.
cp -a "$work/t.git" "$work/fork.git"
rm -rf "$work/fork.git/objects"
mkdir -p "$work/fork.git/objects/info" "$work/fork.git/objects/pack"

# Group K: gK, or gK-1/subK for odd K; repositories 100K to 100K+99.
make_group() {
	local k=$1 g i r p parent c
	if [ $((k % 2)) -eq 1 ]; then g="g$((k - 1))/sub$k"; else g="g$k"; fi
	mkdir -p "$dir/$g"
	for ((i = 100 * k; i < n && i < 100 * (k + 1); i++)); do
		r="$dir/$g/r$i.git"
		if [ $((i % 5)) -eq 4 ]; then
			p="$dir/$g/r$((i - 1)).git"
			cp -a "$work/fork.git" "$r"
			echo "$p/objects" >"$r/objects/info/alternates"
			read -r parent <"$p/refs/heads/main"
		else
			cp -a "$work/t.git" "$r"
			parent=$base
		fi
		c=$(git --git-dir="$r" commit-tree -p "$parent" \
			-m "repository $i" "$tree")
		# What git update-ref writes to a loose ref of the files backend.
		echo "$c" >"$r/refs/heads/main"
	done
}

# A group a job, as many at once as there are CPUs.
jobs=$(nproc 2>/dev/null || echo 2)
for ((k = 0; k * 100 < n; k++)); do
	make_group "$k" &
	[ $(((k + 1) % jobs)) -eq 0 ] && wait
done
wait
forks=$((n / 5))
nested=0
for ((k = 1; k * 100 < n; k += 2)); do
	nested=$((nested + (n - 100 * k < 100 ? n - 100 * k : 100)))
done
groups=$(find "$dir" -mindepth 1 -maxdepth 2 -type d -name 'g*' -o -type d -name 'sub*' |
	wc -l)
echo "$dir: $n repositories ($forks forks sharing objects through" \
	"alternates, $nested in nested groups) in $groups groups"
