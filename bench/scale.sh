#!/usr/bin/env bash
# bench/scale.sh [--scale S] [--clones N] [--timeout SEC] [--mem-cap MIB]
#
# Issue 28's rows, "real scale": section 7 of bench/run.sh (sourced by it,
# --only scale) or run alone (the table then in bench/out/scale.md).
# Every figure beside git's (or a floor's) in the same run:
#
#   a. ls commits/, trees/, tags/ of a repository of git.git's size
#      (bench/genscale.sh, SCALE S, default 1), without and with a
#      commit-graph, against git rev-list --all; git log --all
#      --format=%T | sort -u; the annotated tags' ids from
#      git for-each-ref; and a floor: floorfs serving a directory of the
#      same names (empty files) from memory.
#   b. find MNT/objects, find MNT and du -s MNT on that repository and
#      on a 2 000-commit one (bench/gencontent.sh 2000 200, 302 entries
#      a tree, as the issue's 600 000 entries for a walk); on the
#      latter a floor: find over floorfs serving a snapshot of objects/.
#   c. a walk of every commit's tree of the 2 000-commit repository
#      (find MNT/commits/<id>/tree for each), against git diff-tree -r
#      -t of each against the empty tree; the daemon's nodes after it and once the kernel forgot.
#   d. restic backup of the root of odbfs --root over N clones (10) of a
#      gencontent.sh 2000 3000 repository (genscale.sh --forge): the bytes
#      the daemon served against the clones' object bytes, then after a
#      remount. No floor: a snapshot of what the root shows is the
#      problem measured.
#
# Each odbfs row on a fresh mount: the daemon's RssAnon sampled every
# 100 ms (peak), after the command, and after echo 2 >drop_caches.
# Every command runs under timeout SEC (300); a daemon whose RssAnon
# passes MIB (8192) has its command stopped, the row saying so.
#
# Needs: restic, python3, root (drop_caches).
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	set -euo pipefail
	top=$(cd "$(dirname "$0")/.." && pwd)
	out=$top/bench/out
	while [ $# -gt 0 ]; do
		case $1 in
		--scale) scale=$2; shift 2 ;;
		--clones) clones=$2; shift 2 ;;
		--timeout) tmo=$2; shift 2 ;;
		--mem-cap) cap_mib=$2; shift 2 ;;
		*) echo "usage: $0 [--scale S] [--clones N] [--timeout SEC] [--mem-cap MIB]" >&2; exit 2 ;;
		esac
	done
	mkdir -p "$out"
	mnts=()
	table=$out/scale.md
	: >"$table"
	. "$top/bench/lib.sh"
	trap cleanup EXIT
	standalone=1
fi
scale=${scale:-1} clones=${clones:-10} tmo=${tmo:-300} cap_mib=${cap_mib:-8192}
cap_kb=$((cap_mib * 1024))

say "## 7. Real scale (issue 28)"
say ""
if ! command -v restic >/dev/null || [ ! -w /proc/sys/vm/drop_caches ]; then
	say "Not run: needs restic and root (drop_caches)."
	say ""
	return 0 2>/dev/null || exit 0
fi
sscratch=/dev/shm/odbfs-scale.$$
sm=$sscratch/mnt
sfl=$sscratch/floor
mkdir -p "$sm" "$sfl"
trap 'cleanup; rm -rf "$sscratch"' EXIT
mnts+=("$sm" "$sfl")

big=$out/scale-$scale
made "$big" "a repository at scale $scale" "$top/bench/genscale.sh" "$big" "$scale"
hist=$out/history-2000
made "$hist" "a 2 000-commit repository" "$top/bench/gencontent.sh" "$hist" 2000 200
sforge=$out/scale-forge-$clones
made "$sforge" "a forge of $clones clones" "$top/bench/genscale.sh" --forge "$sforge" "$clones"

s_since() { awk -v a="$1" -v b="${EPOCHREALTIME/./}" 'BEGIN { printf "%.3f", (b - a) / 1e6 }'; }
mib() { awk -v a="$1" 'BEGIN { printf "%.0f", a / 1024 }'; }
drop() { sync; echo "$1" >/proc/sys/vm/drop_caches; }
# timed OUT CMD...: CMD under timeout $tmo, its stdout in OUT; seconds in
# $t, and in $stop why it ended early ("" if it did not).
timed() {
	local o=$1 t0=${EPOCHREALTIME/./} rc=0
	shift
	timeout "$tmo" "$@" >"$o" 2>"$o.err" || rc=$?
	t=$(s_since "$t0")
	stop=
	[ $rc -eq 0 ] || stop="exit $rc"
	[ $rc -eq 124 ] && stop="> $tmo s"
	return 0
}
# measure MNT OUT CMD...: as timed, the daemon serving MNT watched
# (watch_rss, capped at $cap_kb); then its RssAnon in kB: $idle_kb
# (before), $peak_kb, $after_kb, $dropped_kb (after echo 2 >drop_caches),
# and its nodes, $nodes and $nodes2.
measure() {
	local m=$1 o=$2 dpid cpid t0 rc=0
	shift 2
	dpid=$(daemon_pid "$m")
	kb_of "$dpid" RssAnon
	idle_kb=$kb
	t0=${EPOCHREALTIME/./}
	timeout "$tmo" "$@" >"$o" 2>"$o.err" &
	cpid=$!
	watch_rss "$cpid" "$dpid" "$cap_kb"
	wait "$cpid" || rc=$?
	t=$(s_since "$t0")
	stop=
	[ $rc -eq 0 ] || stop="exit $rc"
	[ $rc -eq 124 ] && stop="> $tmo s"
	[ -z "$capped" ] || stop="stopped, RssAnon past $cap_mib MiB"
	kb_of "$dpid" RssAnon
	after_kb=$kb
	nodes=$(stat_of "$m" nodes)
	drop 2
	sleep 1
	kb_of "$dpid" RssAnon
	dropped_kb=$kb
	nodes2=$(stat_of "$m" nodes)
}
mem() { echo "$(mib "$idle_kb") / $(mib "$peak_kb") / $(mib "$after_kb") / $(mib "$dropped_kb")"; }
# stopped T: T, or what stopped the command after T seconds.
stopped() { if [ -n "$stop" ]; then echo "$stop ($1 s)"; else echo "$1"; fi; }
lines() { wc -l <"$1" | tr -d ' '; }

say "odbfs at $(git -C "$top" rev-parse --short HEAD)$(git -C "$top" diff --quiet HEAD -- fs store || echo ' (with changes)'); load average at the start $(cut -d' ' -f1-3 /proc/loadavg). Repository: genscale.sh at scale $scale ($(git -C "$big" rev-list --all | wc -l) commits, $(git -C "$big" count-objects -v | awk '$1 == "in-pack:" { print $2 }') objects, one pack; made in $(cat "$big/.done") s), and its twin with a commit-graph (clone --mirror --shared). Each odbfs row on a fresh mount; RssAnon of the daemon, MiB: idle (mounted, before the command) / peak (sampled every 100 ms) / after / after echo 2 >drop_caches. Every command under timeout $tmo s; a daemon past $cap_mib MiB RssAnon has its command stopped."
say ""

# a. Listings.
row "listing | git, s | floor, s | odbfs, s | odbfs/git | odbfs/floor | entries: git / odbfs | RssAnon MiB: idle / peak / after / dropped"
row "---|---|---|---|---|---|---|---"
# floor_ls IDS: s of ls over floorfs serving a directory of IDS's names
# (empty files), in $fls; the snapshot kept for the twin's row.
floor_ls() {
	local d=$sscratch/names snap=$1.snap
	if [ ! -f "$snap" ]; then
		rm -rf "$d"
		mkdir -p "$d"
		(cd "$d" && xargs touch) <"$1"
		"$top/bench/floorfs" --snapshot "$d" "$snap"
		rm -rf "$d"
	fi
	"$top/bench/floorfs" --from "$snap" -o ro,default_permissions "$sfl"
	timed "$sscratch/fout" ls "$sfl"
	fls=$t
	fusermount3 -u "$sfl"
}
for r in "$big" "$big-cg"; do
	if [ "$r" = "$big" ]; then cg="no commit-graph"; else cg="commit-graph"; fi
	for what in commits trees tags; do
		case $what in
		commits) gcmd="git -C '$r' rev-list --all" ;;
		trees) gcmd="git -C '$r' log --all --format=%T | sort -u" ;;
		tags) gcmd="git -C '$r' for-each-ref --format='%(objecttype) %(objectname)' refs/tags | awk '\$1 == \"tag\" { print \$2 }'" ;;
		esac
		timed "$sscratch/$what.ids" sh -c "$gcmd"
		gt=$(stopped "$t")
		floor_ls "$sscratch/$what.ids"
		mount_at "$r" "$sm"
		measure "$sm" "$sscratch/ls" ls "$sm/$what"
		row "\`ls $what\`, $cg (git: \`$(echo "$gcmd" | sed "s|-C '[^']*' ||; s/|/\\\\|/g")\`) | $gt | $fls | $(stopped "$t") | $(ratio "$t" "$gt") | $(ratio "$t" "$fls") | $(lines "$sscratch/$what.ids") / $(lines "$sscratch/ls") | $(mem)"
		fusermount3 -u "$sm"
	done
done
say ""

# b. Walks from the root.
row "walk | reference, s | floor, s | odbfs, s | odbfs/reference | entries: reference / odbfs | RssAnon MiB: idle / peak / after / dropped; nodes after / dropped"
row "---|---|---|---|---|---|---"
for r in "$big" "$hist"; do
	name="$(basename "$r"), $(git -C "$r" rev-list --all | wc -l) commits"
	fl=-
	if [ "$r" = "$hist" ]; then
		# The floor: what a walk of the objects alone costs.
		mount_at "$r" "$sm"
		"$top/bench/floorfs" --snapshot "$sm/objects" "$sscratch/objects.snap"
		fusermount3 -u "$sm"
		"$top/bench/floorfs" --from "$sscratch/objects.snap" --no-dir-cache -o ro,default_permissions "$sfl"
		drop 3
		timed "$sscratch/fout" find "$sfl" -printf .
		fl=$t
		fusermount3 -u "$sfl"
	fi
	mount_at "$r" "$sm"
	drop 3
	measure "$sm" "$sscratch/objs" find "$sm/objects" -printf .
	ot=$t
	oe=$(stat -c %s "$sscratch/objs")
	row "\`find MNT/objects\`, $name (reference: itself) | $ot | $fl | $(stopped "$t") | 1.00 | $oe / $oe | $(mem); $nodes / $nodes2"
	fusermount3 -u "$sm"
	mount_at "$r" "$sm"
	drop 3
	measure "$sm" "$sscratch/all" find "$sm" -printf .
	row "\`find MNT\`, $name (reference: \`find MNT/objects\`) | $ot | $fl | $(stopped "$t") | $(ratio "$t" "$ot") | $oe / $(stat -c %s "$sscratch/all") | $(mem); $nodes / $nodes2"
	fusermount3 -u "$sm"
	mount_at "$r" "$sm"
	drop 3
	measure "$sm" "$sscratch/du" du -s "$sm"
	row "\`du -s MNT\`, $name (reference: \`find MNT/objects\`) | $ot | $fl | $(stopped "$t") | $(ratio "$t" "$ot") | - / $(cut -f1 "$sscratch/du" | grep . || echo -) KiB | $(mem); $nodes / $nodes2"
	fusermount3 -u "$sm"
done

# c. Every commit's tree.
git -C "$hist" rev-list --all >"$sscratch/commits"
sed "s|^|$sm/commits/|; s|\$|/tree|" "$sscratch/commits" >"$sscratch/trees"
# One git process: each tree against the empty tree, a line each entry
# and a line each tree (find's line for the tree/ itself).
empty=$(git hash-object -t tree /dev/null)
timed "$sscratch/git-walk" sh -c "git -C '$hist' log --all --format=%T | sed 's/^/$empty /' | git -C '$hist' diff-tree --stdin -r -t"
gt=$(stopped "$t")
mount_at "$hist" "$sm"
drop 3
measure "$sm" "$sscratch/walk" xargs -a "$sscratch/trees" sh -c 'find "$@" -printf .' find
row "\`find MNT/commits/<id>/tree\` for each of $(lines "$sscratch/commits") commits, $(basename "$hist") (reference: \`git diff-tree -r -t\` of each against the empty tree) | $gt | - | $(stopped "$t") | $(ratio "$t" "$gt") | $(lines "$sscratch/git-walk") / $(stat -c %s "$sscratch/walk") | $(mem); $nodes / $nodes2"
row "the same: RssAnon per node the kernel held (after less idle, over nodes), bytes; of it given back once the kernel forgot (after less dropped), % | - | - | - | - | - | $(awk -v i="$idle_kb" -v a="$after_kb" -v d="$dropped_kb" -v n="$nodes" 'BEGIN { if (n > 0 && a > i) { g = 100 * (a - d) / (a - i); printf "%.0f; %.0f %%", (a - i) * 1024 / n, (g > -0.5 && g < 0.5) ? 0 : g } else print "-" }')"
fusermount3 -u "$sm"
say ""

# d. restic over a forge's root.
# served MNT: the bytes each repository of the forge at MNT served, by
# reads and pushed ahead into the page cache, summed (the root's own
# stats count what was asked of the root and its groups).
served() {
	local r n=0
	for r in "$1"/*.git; do
		n=$((n + $(stat_of "$r" bytes_served) + $(stat_of "$r" bytes_pushed)))
	done
	echo "$n"
}
objbytes=0
for r in "$sforge"/*.git; do
	b=$(git -C "$r" cat-file --batch-all-objects --batch-check='%(objectsize)' | awk '{ s += $1 } END { printf "%d", s }')
	objbytes=$((objbytes + b))
done
export RESTIC_PASSWORD=bench RESTIC_REPOSITORY=$sscratch/restic XDG_CACHE_HOME=$sscratch/cache
restic init -q >/dev/null
row "restic backup of MNT (odbfs --root, $clones clones of a gencontent.sh 2000 3000 repository, $(mib $((objbytes / 1024))) MiB of objects) | - | - | odbfs, s | bytes served / object bytes | bytes served, MiB | RssAnon MiB: idle / peak / after / dropped"
row "---|---|---|---|---|---|---"
for run in first "second, after a remount"; do
	mount_at "$sforge" "$sm" --root
	drop 3
	b0=$(served "$sm")
	measure "$sm" "$sscratch/restic.out" sh -c "cd '$sm' && restic backup --no-cache --json --host bench . | grep summary"
	b1=$(served "$sm")
	row "$run | - | - | $(stopped "$t") | $(ratio $((b1 - b0)) "$objbytes") | $(mib $(((b1 - b0) / 1024))) | $(mem)"
	fusermount3 -u "$sm"
done
say ""
rm -rf "$sscratch"
trap 'cleanup; [ -z "${scratch:-}" ] || rm -rf "$scratch"' EXIT
if [ -n "${standalone:-}" ]; then
	echo
	echo "table written to $table"
fi
