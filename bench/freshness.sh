#!/usr/bin/env bash
# freshness.sh [N]: how long after a writing git command exits its effect
# shows through the mount.
#  - objects: N writes (default 100), each timed from the exit of
#    `git hash-object -w` until a stat of the new id succeeds (the id was
#    stat'ed, and missed, before the write, so the kernel's negative entry
#    must be invalidated too);
#  - refs: N moves of a branch with `git update-ref`, each timed until
#    the branch's symlink points at the new commit.
# Prints p50, p90 and worst in milliseconds.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
n=${1:-100}
work=$(mktemp -d)
trap 'fusermount3 -u "$work/mnt" 2>/dev/null || :; rm -rf "$work"' EXIT
summary() {
	awk '{ print ($2 - $1) / 1000 }' | sort -n | awk -v what="$1" '
		{ v[NR] = $1 }
		END {
			printf "%s (%d writes): p50 %.3f ms, p90 %.3f ms, worst %.3f ms\n",
				what, NR, v[int(NR * 0.5) + 1], v[int(NR * 0.9) + 1], v[NR]
		}'
}

git init -q "$work/repo"
git -C "$work/repo" commit -q --allow-empty -m init
mkdir "$work/mnt"
"$top/odbfs" "$work/repo" "$work/mnt"
for ((i = 0; i < n; i++)); do
	id=$(echo "fresh $i $$" | git -C "$work/repo" hash-object --stdin)
	[ -e "$work/mnt/objects/$id" ] && { echo "visible too early" >&2; exit 1; }
	echo "fresh $i $$" | git -C "$work/repo" hash-object -w --stdin >/dev/null
	t0=$EPOCHREALTIME
	until [ -e "$work/mnt/objects/$id" ]; do :; done
	t1=$EPOCHREALTIME
	echo "${t0/./} ${t1/./}"
done | summary "objects visible after write"
git -C "$work/repo" commit -q --allow-empty -m second
a=$(git -C "$work/repo" rev-parse HEAD) b=$(git -C "$work/repo" rev-parse HEAD~1)
for ((i = 0; i < n; i++)); do
	[ $((i % 2)) -eq 0 ] && to=$b || to=$a
	git -C "$work/repo" update-ref refs/heads/moving "$to"
	t0=$EPOCHREALTIME
	until [ "$(readlink "$work/mnt/refs/heads/moving" 2>/dev/null)" = "../../commits/$to" ]; do :; done
	t1=$EPOCHREALTIME
	echo "${t0/./} ${t1/./}"
done | summary "refs moved"
