# bench/forge.sh: section 6 of bench/run.sh (sourced by it, which see for
# row, say, median, ratio, secs, rss_mb, stat_of, rounds, out, top, mnts
# and cleanup: bench/lib.sh).
#
# One daemon for a forge (odbfs --root, issue 17), on forges made by
# bench/genforge.sh and kept in bench/out/forge-N:
#
#   a. a forge of --forge N repositories (10 000): odbfs started to `ls
#      MNT` answering (the scan), beside floorfs started to `ls` answering;
#      the daemon's VmRSS and threads right after mounting, after reading
#      HEAD/tree/README of 100 repositories with -o max_repos=100, of
#      1 000, of the same 1 000 again (every one reopened), of all N, and
#      once the kernel has forgotten its entries (echo 2 >drop_caches):
#      what memory follows, max_repos or the repositories touched.
#   b. on that daemon (before it reads all N), the first read of a
#      repository never opened beside a second read and beside another
#      file of the now open repository, by cat and by the shell's own
#      read (no process); the floor: floorfs serving a snapshot of a
#      single mount of one of them at the same depth
#      (gK/rI.git/HEAD/tree/README), mounted afresh for every first read,
#      without --push (one read is no walk: nothing is read ahead).
#   c. restic backup of a whole 1 000-repository forge: one daemon
#      (--root) against one daemon per repository (odbfs GITDIR
#      MNT2/<path>, mounted one after the other; restic crosses mount
#      points), beside floorfs serving a snapshot of the forge mount
#      (--push, as bench/backup.sh's floors). The page cache dropped
#      before each backup; the daemons' memory summed over their pids.
#
# Every single odbfs daemon holds an inotify instance (a forge's open
# repositories share one): 1 000 daemons need fs.inotify.max_user_instances
# above its default of 128, which the section raises for its run (root)
# and sets back after.
#
# Needs: restic, root (to drop the page cache and raise the inotify limit).

say "## 6. One daemon for a forge (odbfs --root)"
say ""
if ! command -v restic >/dev/null; then
	say "Not run: restic is not installed (.ci/deps installs it)."
	say ""
	return 0
fi
inotify_max=/proc/sys/fs/inotify/max_user_instances
inotify_was=$(cat "$inotify_max")
inotify_want=4096
if [ "$inotify_was" -lt "$inotify_want" ] && [ ! -w "$inotify_max" ]; then
	say "Not run: one daemon per repository needs $inotify_want inotify instances" \
		"(fs.inotify.max_user_instances is $inotify_was), and raising it needs root."
	say ""
	return 0
fi
if [ -w /proc/sys/vm/drop_caches ]; then
	fdrop() { sync; echo 3 >/proc/sys/vm/drop_caches; }
	fdropped="the page cache dropped"
else
	fdrop() { :; }
	fdropped="the page cache NOT dropped (not root)"
fi
fscratch=/dev/shm/odbfs-forge.$$
fpids=()
forge_cleanup() {
	local m p
	# Whatever is still mounted under the scratch directory: the
	# per-repository mounts, if the run stopped among them.
	for m in $(awk -v s="$fscratch/" 'index($2, s) == 1 { print $2 }' /proc/mounts 2>/dev/null); do
		fusermount3 -u "$m" 2>/dev/null || :
	done
	for p in "${fpids[@]}"; do kill "$p" 2>/dev/null || :; done
	[ "$(cat "$inotify_max")" = "$inotify_was" ] || echo "$inotify_was" >"$inotify_max"
	rm -rf "$fscratch"
}
trap 'cleanup; [ -z "${scratch:-}" ] || rm -rf "$scratch"; forge_cleanup' EXIT
mkdir -p "$fscratch"
[ "$inotify_was" -ge "$inotify_want" ] || echo "$inotify_want" >"$inotify_max"

forge() {	# forge N: a forge of N repositories (bench/genforge.sh), kept
	local dir=$out/forge-$1
	if [ ! -f "$dir/.done" ]; then
		echo "generating a forge of $1 repositories..." >&2
		"$top/bench/genforge.sh" "$1" "$dir" >&2
		touch "$dir/.done"
	fi
	echo "$dir"
}
# rpath I: repository I's path in a genforge.sh forge, in $rp.
rpath() {
	local k=$(($1 / 100))
	if ((k % 2)); then rp=g$((k - 1))/sub$k/r$1.git; else rp=g$k/r$1.git; fi
}
ms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b - a) / 1000 }'; }
s_of() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b - a) / 1e6 }'; }
threads() { awk '$1 == "Threads:" { print $2 }' "/proc/$1/status"; }
# fg_start LOG MNT ARGS...: odbfs -f ARGS MNT in the background, its
# stderr appended to LOG; returns once MNT is mounted, the pid in $fpid.
fg_start() {
	local log=$1 m=$2 i
	shift 2
	mkdir -p "$m"
	"$top/odbfs" -f "$@" "$m" 2>>"$log" &
	fpid=$!
	fpids+=("$fpid")
	mnts+=("$m")
	for ((i = 0; i < 12000; i++)); do
		mountpoint -q "$m" && return 0
		kill -0 "$fpid" 2>/dev/null || break
		sleep 0.005
	done
	echo "odbfs $* $m did not mount:" >&2
	cat "$log" >&2
	exit 1
}
# fg_stop MNT: unmount; the daemon's exit status in $fstatus.
fg_stop() {
	fusermount3 -u "$1"
	fstatus=0
	wait "$fpid" || fstatus=$?
}
# sum_kb FIELD FILE PIDS...: the sum of FIELD (kB) in /proc/PID/FILE.
sum_kb() {
	local k=$1 f=$2 p
	shift 2
	for p; do cat "/proc/$p/$f" 2>/dev/null; done |
		awk -v k="$k:" '$1 == k { s += $2 } END { printf "%d", s }'
}
mib() { awk -v a="$1" 'BEGIN { printf "%.1f", a / 1024 }'; }
# sampler OUT PIDS...: every second, the sum of the pids' VmRSS; the
# largest in OUT (kB). Stopped by killing it.
sampler() {
	local o=$1 max=0 v
	shift
	while :; do
		v=$(sum_kb VmRSS status "$@")
		((v > max)) && max=$v && echo "$max" >"$o"
		sleep 1
	done
}

load0=$(cut -d' ' -f1-3 /proc/loadavg)
build0=$(cksum <"$top/odbfs")
say "odbfs at $(git -C "$top" rev-parse --short HEAD)$(git -C "$top" diff --quiet HEAD -- fs store || echo ' (with changes)'). Load average at the start: $load0 ($(nproc) cores). Forges made by bench/genforge.sh (100 repositories a group, half the groups nested, a fifth of the repositories forks through alternates). fs.inotify.max_user_instances $inotify_was$([ "$inotify_was" -ge "$inotify_want" ] || echo ", raised to $inotify_want for the section"). Ratio = odbfs / floor (above 1: odbfs slower)."
say ""

# a. The scan and the daemon's memory.
nforge=${forge_n:-10000}
if [ "$nforge" -lt 1200 ]; then
	say "Not run: --forge $nforge: the section reads 1 000 repositories, and 20 more never read."
	say ""
	forge_cleanup
	return 0
fi
big_forge=$(forge "$nforge")
fm=$fscratch/mnt
flm=$fscratch/floor
mkdir -p "$fm" "$flm"
mnts+=("$fm" "$flm")
log=$fscratch/odbfs.log
: >"$log"
say "### 6a. A forge of $nforge repositories: the scan and the daemon's memory"
say ""
row "what | floor | odbfs | ratio (odbfs/floor)"
row "---|---|---|---"
# scan_round FORGE DROP: start to `ls` answering, odbfs then floorfs
# (serving an empty directory), s, in $so and $sf.
mkdir -p "$fscratch/empty"
"$top/bench/floorfs" --snapshot "$fscratch/empty" "$fscratch/empty.snap"
scan_round() {
	local t0 t1
	[ "$2" = drop ] && fdrop
	t0=${EPOCHREALTIME/./}
	"$top/odbfs" --root "$1" "$fm"
	ls "$fm" >/dev/null
	t1=${EPOCHREALTIME/./}
	so=$(s_of "$t0" "$t1")
	fusermount3 -u "$fm"
	[ "$2" = drop ] && fdrop
	t0=${EPOCHREALTIME/./}
	"$top/bench/floorfs" --from "$fscratch/empty.snap" -o ro,default_permissions "$flm"
	ls "$flm" >/dev/null
	t1=${EPOCHREALTIME/./}
	sf=$(s_of "$t0" "$t1")
	fusermount3 -u "$flm"
}
for how in warm drop; do
	scan_round "$big_forge" "$how"	# untimed: the inodes cached for warm
	o=() f=()
	for ((i = 0; i < rounds; i++)); do
		scan_round "$big_forge" "$how"
		o+=("$so") f+=("$sf")
	done
	om=$(printf '%s\n' "${o[@]}" | median)
	fl=$(printf '%s\n' "${f[@]}" | median)
	if [ "$how" = warm ]; then
		what="inodes cached"
	else
		what="page cache dropped first"
	fi
	row "odbfs --root started to \`ls MNT\` answering (scan + mount), $nforge repositories, $what, s (floor: floorfs started to \`ls\`) | $fl | $om | $(ratio "$om" "$fl")"
done
fg_start "$log" "$fm" -o max_repos=100 --root "$big_forge"
fpid_big=$fpid
ls "$fm" >/dev/null
# The rows of 6a after the mount wait in rows_a: 6b's repositories must
# be read before the last row of 6a reads every one.
rows_a=()
mem() {	# what the daemon holds: VmRSS (RssAnon), threads, open, nodes
	echo "$(rss_mb "$fpid_big") ($(rss_mb "$fpid_big" RssAnon)); $(threads "$fpid_big") threads; $(stat_of "$fm" repositories_open) open, $(stat_of "$fm" nodes) nodes"
}
rows_a+=("daemon right after mounting (\`ls MNT\`), -o max_repos=100: VmRSS, MiB (RssAnon); threads; repositories open, nodes | no floor | $(mem) | -")
read_range() {	# read_range FROM TO: HEAD/tree/README of repositories FROM..TO-1; failures in $rfail
	local i
	rfail=0
	for ((i = $1; i < $2; i++)); do
		rpath "$i"
		cat "$fm/$rp/HEAD/tree/README" >/dev/null 2>>"$fscratch/read.err" || rfail=$((rfail + 1))
	done
}
range_row() {	# range_row LABEL FROM TO: read, and the row after it
	local t0 t1
	t0=${EPOCHREALTIME/./}; read_range "$2" "$3"; t1=${EPOCHREALTIME/./}
	rows_a+=("after reading HEAD/tree/README of $1: the same; the reads' time | no floor | $(mem); $(s_of "$t0" "$t1") s, $(awk -v a="$t0" -v b="$t1" -v n="$(($3 - $2))" 'BEGIN { printf "%.2f", (b - a) / 1000 / n }') ms a read$([ "$rfail" -eq 0 ] || echo ", **$rfail reads failed**") | -")
}
range_row "100 repositories (0-99)" 0 100
kb100=$(sum_kb VmRSS status "$fpid_big")
range_row "1 000 repositories (0-999: 900 more)" 100 1000
kb1000=$(sum_kb VmRSS status "$fpid_big")
range_row "the same 1 000 again (each closed since, opened again)" 0 1000
kb2000=$(sum_kb VmRSS status "$fpid_big")

# b. The first read of a repository not yet opened: forty never touched
# (past the first 1 000), spread over the even groups (gK/rI.git: the
# floor's depth), each with objects of its own (I % 5 == 0); twenty read
# with cat, twenty by the shell itself (read: no fork and exec).
cand=() picks=()
for ((i = 1000; i < nforge; i += 5)); do (((i / 100) % 2 == 0)) && cand+=("$i"); done
for ((j = 0; j < 40 && j < ${#cand[@]}; j++)); do picks+=("${cand[j * ${#cand[@]} / 40]}"); done
rpath "${picks[0]}"
snapsrc=$fscratch/snapsrc
mkdir -p "$snapsrc/$rp"
"$top/odbfs" "$big_forge/$rp" "$snapsrc/$rp"
mnts+=("$snapsrc/$rp")
"$top/bench/floorfs" --snapshot "$snapsrc" "$fscratch/one.snap"
fusermount3 -u "$snapsrc/$rp"
frp=$rp
# one_read HOW PATH: ms of reading PATH, by cat or by the shell's read
# (open, read, close: no process), in $v.
one_read() {
	local t0 t1 x=
	if [ "$1" = cat ]; then
		t0=${EPOCHREALTIME/./}; cat "$2" >/dev/null; t1=${EPOCHREALTIME/./}
	else
		t0=${EPOCHREALTIME/./}; read -r -d '' x <"$2" || :; t1=${EPOCHREALTIME/./}
		[ -n "$x" ] || echo "read $2: nothing read" >&2
	fi
	v=$(ms "$t0" "$t1")
}
declare -A rd=()	# rd[HOW,fs,n]: the times, one a line
# three_reads HOW SIDE REPO: README (the first read), README again and
# Makefile under REPO/HEAD/tree, each time added to rd[HOW,SIDE,0..2].
three_reads() {
	local n=0 f
	for f in README README Makefile; do
		one_read "$1" "$3/HEAD/tree/$f"
		rd[$1,$2,$n]+="$v"$'\n'
		n=$((n + 1))
	done
}
for ((j = 0; j < ${#picks[@]}; j++)); do
	how=cat
	((j % 2)) && how=fsb
	rpath "${picks[j]}"
	three_reads $how o "$fm/$rp"
	"$top/bench/floorfs" --from "$fscratch/one.snap" -o ro,default_permissions "$flm"
	ls "$flm" >/dev/null	# as `ls MNT` listed the forge's groups
	three_reads $how f "$flm/$frp"
	fusermount3 -u "$flm"
done
ref=()
echo README >"$fscratch/README"
ref2=()
for ((j = 0; j < 20; j++)); do
	one_read cat "$fscratch/README"; ref+=("$v")
	one_read fsb "$fscratch/README"; ref2+=("$v")
done
rdm() { printf '%s' "${rd[$1]}" | median; }

# The rest of 6a: every repository read, then the kernel made to forget.
range_row "all $nforge repositories" 0 "$nforge"
kball=$(sum_kb VmRSS status "$fpid_big")
sync; echo 2 >/proc/sys/vm/drop_caches 2>/dev/null || :
sleep 2
rows_a+=("after the kernel forgets its entries (\`echo 2 >/proc/sys/vm/drop_caches\`) | no floor | $(mem) | -")
# Repositories made one by one while mounted: each is a change to search
# for; the daemon's CPU time while they are made, and how long after the
# last one it is listed. The group is removed after.
burst_row() {
	local n=300 i t0 t1 t2 c0 c1 bg=$big_forge/burst
	rm -rf "$bg"
	mkdir "$bg"	# an empty group: not listed until a repository is made
	c0=$(awk '{ print $14 + $15 }' "/proc/$fpid_big/stat")
	t0=${EPOCHREALTIME/./}
	for ((i = 0; i < n; i++)); do git init -q --bare "$bg/b$i.git"; done
	t1=${EPOCHREALTIME/./}
	until ls "$fm/burst" 2>/dev/null | grep -qx "b$((n - 1)).git"; do sleep 0.01; done
	t2=${EPOCHREALTIME/./}
	c1=$(awk '{ print $14 + $15 }' "/proc/$fpid_big/stat")
	rows_a+=("$n repositories made one by one (\`git init --bare\`) in a new group while mounted: the daemon's CPU time over the making's wall time, s; the last one listed after, s | no floor | $(awk -v c="$((c1 - c0))" -v t="$(s_of "$t0" "$t1")" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.2f of %.2f (%.0f %%)", c / hz, t, 100 * c / hz / t }'); $(s_of "$t1" "$t2") | -")
	rm -rf "$bg"
}
burst_row
rows_a+=("VmRSS growth per repository opened past max_repos, KiB: 100 to 1 000 distinct; the 1 000 again; 1 000 to all $nforge | no floor | $(awk -v a="$kb100" -v b="$kb1000" 'BEGIN { printf "%.2f", (b - a) / 900 }'); $(awk -v a="$kb1000" -v b="$kb2000" 'BEGIN { printf "%.2f", (b - a) / 1000 }'); $(awk -v a="$kb2000" -v b="$kball" -v n="$nforge" 'BEGIN { printf "%.2f", (b - a) / (n - 1000) }') | -")
for r in "${rows_a[@]}"; do row "$r"; done
say ""

say "### 6b. The first read of a repository not yet opened (same daemon, max_repos=100, 100 open)"
say ""
say "Medians over ${#picks[@]} repositories (gK/rI.git, I from ${picks[0]} to ${picks[-1]}, never looked up before), half read with \`cat\` (its process included: \`cat\` of a file on tmpfs takes $(printf '%s\n' "${ref[@]}" | median) ms here), half by the shell itself (\`read -r -d '' x <PATH\`: open, read, close, no process; of a file on tmpfs $(printf '%s\n' "${ref2[@]}" | median) ms). Floor: floorfs --from a snapshot of a single mount of $frp at the same path, mounted afresh (and listed, as \`ls MNT\` listed the forge) before each first read, no --push (one read is no walk: nothing is read ahead)."
say ""
row "what | floor, ms | odbfs, ms | ratio (odbfs/floor)"
row "---|---|---|---"
for how in cat fsb; do
	if [ $how = cat ]; then
		w='`cat`'
	else
		w='shell read'
	fi
	a=$(rdm "$how,o,0") b=$(rdm "$how,f,0")
	row "$w, gK/rI.git/HEAD/tree/README, repository not yet opened (an open, and every lookup on the way) | $b | $a | $(ratio "$a" "$b")"
	a=$(rdm "$how,o,1") b=$(rdm "$how,f,1")
	row "$w, the same again (the kernel's entries and pages) | $b | $a | $(ratio "$a" "$b")"
	a2=$(rdm "$how,o,2") b2=$(rdm "$how,f,2")
	row "$w, HEAD/tree/Makefile of the now open repository (one lookup, one read) | $b2 | $a2 | $(ratio "$a2" "$b2")"
	a=$(rdm "$how,o,0") b=$(rdm "$how,f,0")
	row "$w, first read minus the Makefile's (what the first read adds), ms | $(awk -v x="$b" -v y="$b2" 'BEGIN { printf "%.2f", x - y }') | $(awk -v x="$a" -v y="$a2" 'BEGIN { printf "%.2f", x - y }') | -"
done
say ""
nfail=$(stat_of "$fm" errors)
fg_stop "$fm"
big_status=$fstatus
big_log=$(wc -l <"$log")

# c. A backup of a whole forge: one daemon against one per repository.
nb=1000
small_forge=$(forge "$nb")
say "### 6c. restic backup of a whole $nb-repository forge: one daemon against one per repository"
say ""
m2=$fscratch/per-repo
blog=$fscratch/odbfs-backup.log
: >"$blog"
export RESTIC_PASSWORD=bench RESTIC_REPOSITORY=$fscratch/restic XDG_CACHE_HOME=$fscratch/cache
(cd "$small_forge" && find . -name '*.git' -type d -prune | sed 's|^\./||' | sort) >"$fscratch/gitdirs"
ngit=$(wc -l <"$fscratch/gitdirs")
# The floor: a snapshot of the forge's mount, every repository in it.
fg_start "$blog" "$fm" --root "$small_forge"
"$top/bench/floorfs" --snapshot "$fm" "$fscratch/forge.snap"
fg_stop "$fm"
# peak_of AFTER: the sampler's largest, or AFTER if larger (summing a
# thousand pids' status takes the sampler a second or more: it misses
# the end of the backup).
peak_of() {
	local p
	p=$(cat "$fscratch/peak" 2>/dev/null || echo 0)
	echo $((p > $1 ? p : $1))
}
# restic_run DIR: a fresh restic repository, the page cache dropped, a
# backup of DIR timed into $t; restic's exit status in $rst.
restic_run() {
	local t0 t1
	rm -rf "$RESTIC_REPOSITORY"
	restic init -q >/dev/null
	fdrop
	t0=${EPOCHREALTIME/./}
	rst=0
	(cd "$1" && restic backup -q --no-cache --host bench .) >/dev/null 2>>"$fscratch/restic.err" || rst=$?
	t1=${EPOCHREALTIME/./}
	t=$(s_of "$t0" "$t1")
}
ro=() rp1=() rf=() mo=() mp=() up=() ko=() kp=() po=() pp=() qo=() qp=() to=() tp=() leftm=() leftp=() rsts=() ost=()
for ((i = 0; i < rounds; i++)); do
	# One daemon.
	t0=${EPOCHREALTIME/./}
	fg_start "$blog" "$fm" --root "$small_forge"
	ls "$fm" >/dev/null
	t1=${EPOCHREALTIME/./}
	mo+=("$(s_of "$t0" "$t1")")
	rm -f "$fscratch/peak"
	sampler "$fscratch/peak" "$fpid" &
	spid=$!
	restic_run "$fm"
	kill "$spid"; wait "$spid" 2>/dev/null || :
	ro+=("$t") rsts+=("$rst")
	po+=("$(sum_kb VmRSS status "$fpid")")
	ko+=("$(peak_of "${po[-1]}")")
	qo+=("$(sum_kb Pss smaps_rollup "$fpid")")
	to+=("$(threads "$fpid")")
	fg_stop "$fm"
	ost+=("$fstatus")

	# One daemon per repository, mounted one after the other.
	t0=${EPOCHREALTIME/./}
	while read -r g; do
		mkdir -p "$m2/$g"
		"$top/odbfs" "$small_forge/$g" "$m2/$g" </dev/null ||
			echo "odbfs $small_forge/$g: exit $?" >&2
	done <"$fscratch/gitdirs"
	t1=${EPOCHREALTIME/./}
	mp+=("$(s_of "$t0" "$t1")")
	mapfile -t pids < <(pgrep -f "odbfs $small_forge/.* $m2/")
	nmounted=$(awk -v s="$m2/" 'index($2, s) == 1' /proc/mounts | wc -l)
	if [ "$nmounted" -ne "$ngit" ] || [ "${#pids[@]}" -ne "$ngit" ]; then
		echo "one daemon per repository: $nmounted of $ngit mounted, ${#pids[@]} daemons" >&2
	fi
	rm -f "$fscratch/peak"
	sampler "$fscratch/peak" "${pids[@]}" &
	spid=$!
	restic_run "$m2"
	kill "$spid"; wait "$spid" 2>/dev/null || :
	rp1+=("$t") rsts+=("$rst")
	pp+=("$(sum_kb VmRSS status "${pids[@]}")")
	kp+=("$(peak_of "${pp[-1]}")")
	qp+=("$(sum_kb Pss smaps_rollup "${pids[@]}")")
	tp+=("$(for p in "${pids[@]}"; do threads "$p"; done | awk '{ s += $1 } END { print s }')")
	t0=${EPOCHREALTIME/./}
	awk -v s="$m2/" 'index($2, s) == 1 { print $2 }' /proc/mounts >"$fscratch/m2mounts"
	while read -r m; do fusermount3 -u "$m"; done <"$fscratch/m2mounts"
	t1=${EPOCHREALTIME/./}
	up+=("$(s_of "$t0" "$t1")")
	for ((j = 0; j < 100; j++)); do
		pgrep -f "odbfs $small_forge/.* $m2/" >/dev/null || break
		sleep 0.1
	done
	leftm+=("$(awk -v s="$m2/" 'index($2, s) == 1' /proc/mounts | wc -l)")
	leftp+=("$(pgrep -f "odbfs $small_forge/.* $m2/" | wc -l || :)")

	# The floor.
	"$top/bench/floorfs" --from "$fscratch/forge.snap" --push -o ro,default_permissions "$flm"
	restic_run "$flm"
	rf+=("$t") rsts+=("$rst")
	fusermount3 -u "$flm"
done
med_of() { printf '%s\n' "$@" | median; }
a=$(med_of "${ro[@]}") b=$(med_of "${rp1[@]}") c=$(med_of "${rf[@]}")
say "$ngit repositories (genforge.sh $nb; $(grep -c / "$fscratch/gitdirs") in groups). Medians of $rounds rounds; each round: one daemon (odbfs -f --root, default max_repos=64), then $ngit daemons (\`odbfs GITDIR MNT2/PATH\`, one after the other, each returning once mounted), then the floor (floorfs --from a snapshot of the forge's mount, --push). restic: a fresh repository on tmpfs, \`restic backup -q --no-cache .\` from the mountpoint, $fdropped before it. Memory: VmRSS summed over the daemons' pids (and Pss, which counts shared pages once), peak sampled every second during the backup."
say ""
row "what | floor | one daemon (--root) | one daemon a repository | one daemon / floor | a daemon a repository / one daemon"
row "---|---|---|---|---|---"
row "restic backup, s | $c | $a | $b | $(ratio "$a" "$c") | $(ratio "$b" "$a")"
row "mount, s (one: started to \`ls\` answering; a repository each: all $ngit mounted) | no floor | $(med_of "${mo[@]}") | $(med_of "${mp[@]}") | - | $(ratio "$(med_of "${mp[@]}")" "$(med_of "${mo[@]}")")"
row "daemons' VmRSS, peak during the backup (largest of the samples and of the figure after), MiB | no floor | $(mib "$(med_of "${ko[@]}")") | $(mib "$(med_of "${kp[@]}")") | - | $(ratio "$(med_of "${kp[@]}")" "$(med_of "${ko[@]}")")"
row "daemons' VmRSS after the backup, MiB (Pss) | no floor | $(mib "$(med_of "${po[@]}")") ($(mib "$(med_of "${qo[@]}")")) | $(mib "$(med_of "${pp[@]}")") ($(mib "$(med_of "${qp[@]}")")) | - | $(ratio "$(med_of "${pp[@]}")" "$(med_of "${po[@]}")")"
row "threads after the backup | no floor | $(med_of "${to[@]}") | $(med_of "${tp[@]}") | - | -"
row "unmounting the $ngit, s; mounts and daemons left after (every round) | no floor | - | $(med_of "${up[@]}"); ${leftm[*]} mounts, ${leftp[*]} daemons left | - | -"
say ""
bad_rst=$(printf '%s\n' "${rsts[@]}" | grep -vc '^0$' || :)
say "Daemons: the $nforge-repository forge's exited $big_status, its log (-f) $big_log lines$([ "$big_log" -eq 0 ] || echo ": $(head -3 "$log" | tr '\n' ';' | sed 's/|/\\|/g')"); its .odbfs/stats errors $nfail. The $nb-repository forge's, exit statuses ${ost[*]}, log $(wc -l <"$blog") lines$([ "$(wc -l <"$blog")" -eq 0 ] || echo ": $(head -3 "$blog" | tr '\n' ';' | sed 's/|/\\|/g')"). Per-repository daemons log to syslog (not kept). restic runs that did not exit 0: $bad_rst$([ "$bad_rst" -eq 0 ] || echo " ($(head -3 "$fscratch/restic.err" | tr '\n' ';'))"). Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg).$([ "$(cksum <"$top/odbfs")" = "$build0" ] || echo " **$top/odbfs changed during the section: the figures mix two builds.**")"
say ""
forge_cleanup
trap 'cleanup; [ -z "${scratch:-}" ] || rm -rf "$scratch"' EXIT
