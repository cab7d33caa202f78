# bench/backup.sh: section 5 of bench/run.sh (sourced by it, which see for
# row, say, median, ratio, secs, repo, mount_at, rounds, out and top).
#
# Backup tools and walks of every object, each beside its floor: floorfs
# serving a snapshot of the same directory (names, attributes, xattrs and
# bytes, taken from an odbfs mount of this build) from memory, with no
# work, and storing a directory's files in the page cache once one is read
# (--push), as odbfs reads walks ahead. Every round mounts afresh and
# drops the page cache before the measured command, for odbfs and the
# floor alike; the floor's bytes stay in its memory. Second backup runs are on a fresh mount too, with the
# page cache dropped: what a nightly backup of a long-lived mount meets
# after a reboot or a remount.
#
# Needs: borgbackup, restic, rsync, root (to drop the page cache).

say "## 5. Backup tools and walks, against the floor"
say ""
for tool in borg restic rsync tar; do
	if ! command -v $tool >/dev/null; then
		say "Not run: $tool is not installed (.ci/deps installs it)."
		say ""
		return 0
	fi
done
export top
floor=$out/floor
m=$out/mnt
scratch=/dev/shm/odbfs-bench.$$
mkdir -p "$floor" "$m" "$scratch"
trap 'cleanup; rm -rf "$scratch"' EXIT
if [ -w /proc/sys/vm/drop_caches ]; then
	drop() { sync; echo 3 >/proc/sys/vm/drop_caches; }
	dropped="the page cache dropped before each measured command"
else
	drop() { :; }
	dropped="the page cache NOT dropped (not root)"
fi
# Snapshots are kept for a build of odbfs and a repository: a change to
# odbfs's attributes makes a new one.
build=$(cksum <"$top/odbfs" | cut -d' ' -f1)

snapshot() {	# snapshot REPO SUBPATH NAME: the snapshot file's path
	local f=$out/$3-$build.snap
	if [ ! -f "$f" ]; then
		echo "snapshotting $3 through odbfs..." >&2
		rm -f "$out/$3"-*.snap
		mount_at "$1" "$m"
		"$top/bench/floorfs" --snapshot "$m/$2" "$f.tmp"
		fusermount3 -u "$m"
		mv "$f.tmp" "$f"
	fi
	echo "$f"
}
floor_at() {	# floor_at SNAPSHOT [--no-dir-cache]
	fusermount3 -u "$floor" 2>/dev/null || :
	"$top/bench/floorfs" --from "$@" --push -o ro,default_permissions "$floor"
	mnts+=("$floor")
}
counter() { awk -v k="$2" '$1 == k { print $2 }' "$1" 2>/dev/null || :; }
pct() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.0f", 100 * a / b; else print "-" }'; }
met() { awk -v a="$1" -v b="$2" 'BEGIN { print (a <= b) ? "yes" : "no" }'; }

# run FS WHAT OUT [nodrop]: mount FS (odbfs or floor) afresh, drop the
# page cache (unless nodrop), time WHAT (a shell command; $D is the directory) into $t, its stdout in
# OUT. For odbfs, the daemon's counters after it are in OUT.stats.
run() {
	local fs=$1 what=$2 o=$3 t0 t1 nodrop=${4:-}
	if [ "$fs" = odbfs ]; then
		mount_at "$repo" "$m"
		export D=$m/$sub
	else
		floor_at "$snap" $floorflags
		export D=$floor
	fi
	[ -n "$nodrop" ] || drop
	t0=$EPOCHREALTIME
	if ! sh -c "$what" >"$o" 2>"$o.err"; then
		echo "failed on $fs: $what" >&2
		cat "$o.err" >&2
		exit 1
	fi
	t1=$EPOCHREALTIME
	t=$(awk -v a="${t0/./}" -v b="${t1/./}" 'BEGIN { printf "%.4f\n", (b - a) / 1e6 }')
	if [ "$fs" = odbfs ]; then
		cat "$m/.odbfs/stats" >"$o.stats"
		fusermount3 -u "$m"
	else
		fusermount3 -u "$floor"
	fi
}

# row_of WHAT LABEL [SECOND]: rounds of WHAT on odbfs then the floor; one
# row of medians. With SECOND, WHAT prepares (a first backup, untimed
# beyond its own row) and SECOND is timed, on a new mount, as a % of the
# first.
row_of() {
	local what=$1 label=$2 fs i t
	local -a o=() f=() rb=() pu=()
	for ((i = 0; i < rounds; i++)); do
		for fs in odbfs floor; do
			[ -n "${reset:-}" ] && eval "$reset"
			run $fs "$what" "$scratch/out"
			if [ $fs = odbfs ]; then
				o+=("$t")
				rb+=("$(counter "$scratch/out.stats" rebuilds)")
				pu+=("$(counter "$scratch/out.stats" pushes)")
			else
				f+=("$t")
			fi
		done
	done
	local om fm
	om=$(printf '%s\n' "${o[@]}" | median)
	fm=$(printf '%s\n' "${f[@]}" | median)
	row "$label | $fm | $om | $(ratio "$om" "$fm") | 1.2 | $(met "$(ratio "$om" "$fm")" 1.2) | $(printf '%s\n' "${rb[@]}" | median) / $(printf '%s\n' "${pu[@]}" | median)"
}

# second_of LABEL FIRST SECOND COUNT: per round, on each fs: a fresh tool
# repository, FIRST on a fresh mount, then SECOND timed on another fresh
# mount; COUNT (a command reading SECOND's output in $1) says how many
# files the tool read again.
second_of() {
	local label=$1 what1=$2 what2=$3 count=$4 fs i t1 t2
	local -a o1=() f1=() o2=() f2=() oc=() fc=() rb=() pu=() rb2=() by2=()
	for ((i = 0; i < rounds; i++)); do
		for fs in odbfs floor; do
			eval "$reset"
			run $fs "$what1" "$scratch/out"
			t1=$t
			run $fs "$what2" "$scratch/out2" nodrop
			t2=$t
			if [ $fs = odbfs ]; then
				o1+=("$t1") o2+=("$t2")
				oc+=("$($count "$scratch/out2")")
				rb+=("$(counter "$scratch/out.stats" rebuilds)")
				pu+=("$(counter "$scratch/out.stats" pushes)")
				rb2+=("$(counter "$scratch/out2.stats" rebuilds)")
				by2+=("$(counter "$scratch/out2.stats" bytes_served)")
			else
				f1+=("$t1") f2+=("$t2")
				fc+=("$($count "$scratch/out2")")
			fi
		done
	done
	local om fm os fs2
	om=$(printf '%s\n' "${o1[@]}" | median)
	fm=$(printf '%s\n' "${f1[@]}" | median)
	os=$(printf '%s\n' "${o2[@]}" | median)
	fs2=$(printf '%s\n' "${f2[@]}" | median)
	row "$label, first run | $fm | $om | $(ratio "$om" "$fm") | 1.2 | $(met "$(ratio "$om" "$fm")" 1.2) | $(printf '%s\n' "${rb[@]}" | median) / $(printf '%s\n' "${pu[@]}" | median)"
	row "$label, second run (fresh mount): s (% of first) | $fs2 ($(pct "$fs2" "$fm") %) | $os ($(pct "$os" "$om") %) | $(ratio "$os" "$fs2") | 10 % | $(met "$(pct "$os" "$om")" 10) | $(printf '%s\n' "${rb2[@]}" | median) rebuilds, $(printf '%s\n' "${by2[@]}" | median) bytes served; files read again: odbfs $(printf '%s\n' "${oc[@]}" | median), floor $(printf '%s\n' "${fc[@]}" | median) (the tool's count)"
}

say "odbfs at $(git -C "$top" rev-parse --short HEAD)$(git -C "$top" diff --quiet HEAD -- fs store || echo ' (with changes)'); fresh mounts every round, $dropped (second backup runs: a fresh mount, the page cache kept). Floor: floorfs serving a snapshot of the same directory from memory. Ratio = odbfs / floor; target: each at most 1.2 × its floor, a second backup run under 10 % of the first. Counters: the odbfs daemon's .odbfs/stats after the run (median): rebuilds / pushes ahead."
say ""
row "what | floor, s | odbfs, s | ratio (odbfs/floor) | target | met | odbfs counters"
row "---|---|---|---|---|---|---"

# A walk of every object: objects/xx/<id>, as git cat-file prints each.
repo=$(repo 100k 100000 1 0)
sub=objects
snap=$(snapshot "$repo" objects objects-100k)
floorflags=--no-dir-cache	# odbfs caches no listing of objects/
reset=
row_of 'find "$D" -type f | wc -l' "find objects/ -type f, 100 000 objects"
row_of "find \"\$D\" -type f -printf '%s\\n' >/dev/null" "find objects/ -type f -printf '%s\\n' (a stat each), 100 000 objects"
row_of '"$top/bench/fsbench" walk 1 "$D" >/dev/null' "read every object walking objects/ (fsbench walk 1), 100 000 objects"

# A commit's tree of real files.
tree=$out/tree
if [ ! -f "$tree/.done" ]; then
	echo "generating a tree repository from /usr/include..." >&2
	"$top/bench/gentree.sh" "$tree" /usr/include
	touch "$tree/.done"
fi
repo=$tree
head=$(git -C "$tree" rev-parse HEAD)
sub=commits/$head/tree
snap=$(snapshot "$tree" "$sub" tree)
floorflags=
files=$(git -C "$tree" ls-tree -r "$head" | wc -l)
mb=$(git -C "$tree" ls-tree -r -l "$head" | awk '{ s += $4 } END { printf "%.0f", s / 1048576 }')
what="tree of $files files, $mb MiB"
row_of 'tar -cf - -C "$D" . | cat >/dev/null' "tar -cf - . | cat, $what"
reset='rm -rf "$scratch/dest"'
export scratch
row_of 'rsync -a "$D/" "$scratch/dest/"' "rsync -a to tmpfs, $what"

export BORG_BASE_DIR=$scratch/borgbase BORG_UNKNOWN_UNENCRYPTED_REPO_ACCESS_IS_OK=yes \
	BORG_RELOCATED_REPO_ACCESS_IS_OK=yes
reset='rm -rf "$scratch/borg" "$scratch/borgbase"; borg init --encryption=none "$scratch/borg"'
borg_count() { grep -c '^[AM] ' "$1" || :; }
second_of "borg create (lz4), $what" \
	'cd "$D" && borg create "$scratch/borg::one" .' \
	'cd "$D" && borg create --list --filter=AM "$scratch/borg::two" . 2>&1' borg_count

export RESTIC_PASSWORD=bench RESTIC_REPOSITORY=$scratch/restic XDG_CACHE_HOME=$scratch/cache
reset='rm -rf "$scratch/restic" "$scratch/cache"; restic init -q >/dev/null'
restic_count() { sed -n 's/.*"files_new":\([0-9]*\),"files_changed":\([0-9]*\).*/\1 \2/p' "$1" | awk '{ print $1 + $2 }'; }
second_of "restic backup, $what" \
	'cd "$D" && restic backup -q --host bench .' \
	'cd "$D" && restic backup --json --host bench . | grep summary' restic_count
say ""
