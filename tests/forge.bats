#!/usr/bin/env bats
# One daemon for every repository under a directory (odbfs --root DIR,
# issue 17): groups and repositories listed where git finds them, each
# repository served as a single mount serves it (objects byte-identical
# to git cat-file, forks' objects through alternates included), inode
# numbers apart between repositories and the same after a remount, a
# bound on repositories open at once, repositories that come, go and
# move without a remount, one broken repository that costs only itself,
# refusals of what cannot be served, and a hostile root that neither
# leads out of itself nor hangs the daemon.
#
# The forge is bench/genforge.sh's: 1 000 bare repositories, gK/ and
# nested gK/subK/ groups, one in five a fork through
# objects/info/alternates, plus a work tree repository team/app. Tests
# that change what is under the root make a small forge of their own.

bats_require_minimum_version 1.5.0

load lib

setup_file() {
	local t=${EPOCHREALTIME/./}

	export FORGE=$BATS_FILE_TMPDIR/forge REPOS=$BATS_FILE_TMPDIR/repos
	bash "$BATS_TEST_DIRNAME/../bench/genforge.sh" 1000 "$FORGE" >/dev/null
	FORGE=$(cd "$FORGE" && pwd -P)
	# A work tree repository beside the groups.
	git init -q -b main "$FORGE/team/app"
	seq 1 50 | sed 's/^/app line /' >"$FORGE/team/app/README"
	git -C "$FORGE/team/app" add README
	git -C "$FORGE/team/app" commit -q -m app
	git_repos "$FORGE" >"$REPOS"
	echo "# forge of $(wc -l <"$REPOS") repositories made in" \
		"$(((${EPOCHREALTIME/./} - t) / 1000)) ms" >&3
}

setup() {
	MNT=$BATS_TEST_TMPDIR/mnt
	LOOP_FS=
	EXTRA_MNTS=()
	BIND_MNTS=()
}

teardown() {
	local m
	for m in "${BIND_MNTS[@]}"; do
		mountpoint -q "$m" && umount -l "$m"
	done
	for m in "${EXTRA_MNTS[@]}"; do
		mountpoint -q "$m" && fusermount3 -u "$m"
	done
	# A daemon that does not end once unmounted is killed, and the test
	# fails, rather than unmount_odbfs waiting for it for ever.
	if [ -n "${ODBFS_PID:-}" ]; then
		mountpoint -q "$MNT" && fusermount3 -u "$MNT"
		for _ in $(seq 1 100); do
			running "$ODBFS_PID" || break
			sleep 0.05
		done
		if running "$ODBFS_PID"; then
			kill -9 "${DAEMON_PID:-$ODBFS_PID}"
			wait "$ODBFS_PID"
			ODBFS_PID=
			echo "odbfs did not end after its unmount" >&2
			return 1
		fi
	fi
	unmount_odbfs "$MNT"
	[ -z "$LOOP_FS" ] || umount -l "$LOOP_FS"
	# A daemon that crashed on the way out failed too.
	[ "$ODBFS_STATUS" -eq 0 ]
}

# running PID: the process runs (not ended, nor a zombie).
running() {
	local state
	state=$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null) && [ "$state" != Z ]
}

# git_repos ROOT: every repository under ROOT where git would take a
# directory for one (setup.c's is_git_directory(): a HEAD file that names
# a ref or an id, objects/ and refs/), one a line "PATH GITDIR": PATH as
# the mount shows it (a work tree's, not its .git), sorted as strcmp(3).
# Symbolic links are not followed (find does not), nor anything but a
# plain file read. Each repository a test reads from, git itself opens.
git_repos() {
	local root dir h
	root=$(cd "$1" && pwd -P)
	find "$root" -name objects -prune -o -name refs -prune -o \
		-name HEAD -type f -printf '%h\n' | while read -r dir; do
		[ -d "$dir/objects" ] && [ -d "$dir/refs" ] || continue
		read -r h <"$dir/HEAD" || continue
		[[ $h == "ref: refs/"* || $h =~ ^[0-9a-f]{40}$ ]] || continue
		h=${dir#"$root"/}
		printf '%s %s\n' "${h%/.git}" "$dir"
	done | LC_ALL=C sort
}

# mount_root DIR MNT [options...]: odbfs --root DIR on MNT, as
# mount_odbfs mounts one repository: in the foreground, in the background
# of the test, $MNT.log; $ODBFS_PID is the timeout(1) it runs under (for
# unmount_odbfs), $DAEMON_PID the daemon. A daemon that does not mount is
# stopped; one that deadlocks is killed after 150 seconds, so that its
# mount's requests fail, and its test, rather than the suite hanging.
mount_root() {
	local root=$1 mnt=$2
	shift 2
	mkdir -p "$mnt"
	timeout -s KILL 150 "$ODBFS" -f --root "$root" "$@" "$mnt" 2>"$mnt.log" 3>&- &
	ODBFS_PID=$!
	DAEMON_PID=
	for _ in $(seq 1 100); do
		[ -n "$DAEMON_PID" ] || DAEMON_PID=$(cut -d' ' -f1 \
			"/proc/$ODBFS_PID/task/$ODBFS_PID/children" 2>/dev/null)
		[ -n "$DAEMON_PID" ] && mountpoint -q "$mnt" && return 0
		running "$ODBFS_PID" || break
		sleep 0.05
	done
	echo "odbfs did not mount --root $root on $mnt:" >&2
	cat "$mnt.log" >&2
	kill "$ODBFS_PID" 2>/dev/null
	wait "$ODBFS_PID"
	ODBFS_PID=
	return 1
}

# repo_line I: the line of $REPOS for the forge's repository rI.git.
repo_line() {
	grep -m1 "/r$1\.git " "$REPOS" || {
		echo "git found no r$1.git" >&2
		return 1
	}
}

# lines_of I...: repo_line of each.
lines_of() {
	local i
	for i in "$@"; do
		repo_line "$i" || return 1
	done
}

# listed DIR NAME: ls DIR lists NAME (within 10 seconds).
listed() {
	timeout -s KILL 10 ls -- "$1" | grep -qxF -- "$2"
}

# not_listed DIR NAME: ls DIR answers, without NAME.
not_listed() {
	local out
	out=$(timeout -s KILL 10 ls -- "$1") || return 1
	! grep -qxF -- "$2" <<<"$out"
}

# children_in PREFIX [FILE]: the names that git_repos's lines (of FILE,
# $REPOS by default) put right under PREFIX ("" for the root):
# repositories and the groups that lead to more.
children_in() {
	awk -v p="$1" '
		p == "" || index($1, p "/") == 1 {
			s = p == "" ? $1 : substr($1, length(p) + 2)
			sub("/.*", "", s)
			print s
		}' "${2:-$REPOS}" | LC_ALL=C sort -u
}

# not_mounted MNT: nothing is mounted on MNT.
not_mounted() {
	! mountpoint -q "$1" && ! grep -qF " $(realpath -m "$1") " /proc/mounts
}

# open_repos: how many git directories under $FORGE the daemon has a file
# of open or mapped (a fork's counts its parent's too).
open_repos() {
	{
		cat "/proc/$DAEMON_PID/maps"
		ls -l "/proc/$DAEMON_PID/fd" 2>/dev/null
	} | grep -o "$FORGE/[^ ]*/objects/" | sort -u | wc -l
}

# rss: the daemon's VmRSS in kB.
rss() {
	awk '$1 == "VmRSS:" { print $2 }' "/proc/$DAEMON_PID/status"
}

# small_forge DIR: a forge of its own for a test that changes it, 20
# repositories in g0/ (r4, r9, r14 and r19 forks of the one before).
small_forge() {
	bash "$BATS_TEST_DIRNAME/../bench/genforge.sh" 20 "$1" >/dev/null
}

# stat_at_most KEY N: $MNT/.odbfs/stats says KEY is N or less.
stat_at_most() {
	[ "$(awk -v k="$1" '$1 == k { print $2 }' "$MNT/.odbfs/stats")" -le "$2" ]
}

# unknown_extension GITDIR: a repository git refuses to open.
unknown_extension() {
	git --git-dir="$1" config core.repositoryformatversion 1
	git --git-dir="$1" config extensions.unknownext true
}

# readme_repo GITDIR TEXT: a new bare repository whose main, HEAD's
# branch, has one commit of a README holding TEXT (three letters).
readme_repo() {
	git init -q --bare "$1"
	git --git-dir="$1" fast-import --quiet <<-EOF
		commit refs/heads/main
		committer a <a@example.com> 1 +0000
		data 2
		m
		M 644 inline README
		data 4
		$2

	EOF
	git --git-dir="$1" symbolic-ref HEAD refs/heads/main
}

# check_repo GITDIR PATH: what a repository shows at $MNT/PATH is what git
# says: every object, HEAD, refs/heads/main and HEAD's README.
check_repo() {
	local g=$1 p=$MNT/$2
	check_mount_objects "$g" "$p" || return 1
	link_is "$p/HEAD" "$(git --git-dir="$g" symbolic-ref HEAD)" || {
		echo "$p/HEAD -> $(readlink "$p/HEAD")" >&2
		return 1
	}
	link_is "$p/refs/heads/main" "../../commits/$(git --git-dir="$g" rev-parse main)" || {
		echo "$p/refs/heads/main -> $(readlink "$p/refs/heads/main")" >&2
		return 1
	}
	readme_is "$g" "$2"
}

# readme_is GITDIR PATH: $MNT/PATH/HEAD/tree/README is git's main:README.
readme_is() {
	cmp <(git --git-dir="$1" cat-file blob main:README) "$MNT/$2/HEAD/tree/README"
}

# enoent_or_eio OUTPUT: a failed command's message says ENOENT or EIO.
enoent_or_eio() {
	[[ $1 == *"No such file or directory"* || $1 == *"Input/output error"* ]]
}

@test "the root lists groups and repositories where git finds them, nested groups inside their parent" {
	local g n
	[ "$(wc -l <"$REPOS")" -eq 1001 ]
	mount_root "$FORGE" "$MNT"
	diff <(LC_ALL=C ls "$MNT") <(children_in "")
	n=0
	for g in g0 g0/sub1 g2 g4/sub5 g8 g8/sub9 team; do
		[ -d "$MNT/$g" ]
		diff <(LC_ALL=C ls "$MNT/$g") <(children_in "$g")
		n=$((n + $(children_in "$g" | wc -l)))
	done
	# Nested: g0 holds sub1 beside its own repositories.
	listed "$MNT/g0" sub1
	listed "$MNT/g0" r0.git
	listed "$MNT/g0/sub1" r100.git
	[ "$n" -ge 600 ]
}

@test "a repository, bare, nested, a fork or a work tree, shows what a single mount of it shows" {
	local want p g m2=$BATS_TEST_TMPDIR/single
	# A single mount of one of them, for its layout.
	read -r p g _ < <(repo_line 0)
	mount_odbfs "$g" "$m2"
	want=$(ls -A "$m2" | tr '\n' ' ')
	unmount_odbfs "$m2"
	[ "$ODBFS_STATUS" -eq 0 ]
	[[ $want == *".odbfs "* ]]
	mount_root "$FORGE" "$MNT"
	while read -r p g _; do
		[ -d "$MNT/$p" ]
		[ "$(ls -A "$MNT/$p" | tr '\n' ' ')" = "$want" ]
		[ "$(ls "$MNT/$p" | tr '\n' ' ')" = "HEAD commits objects refs tags trees " ]
	done < <(lines_of 0 4 100 104 999; grep '^team/app ' "$REPOS")
	# The work tree shows as team/app, its git directory's objects, not
	# its files nor its .git.
	read -r p g _ < <(grep '^team/app ' "$REPOS")
	[ "$g" = "$FORGE/team/app/.git" ]
	[ "$(ls "$MNT/team")" = app ]
	[ ! -e "$MNT/team/app/.git" ]
	[ ! -e "$MNT/team/app/README" ]
	check_repo "$g" team/app
}

@test "twenty repositories over the forge, forks and nested ones: every object, HEAD and refs as git says" {
	local p g forks=0 nested=0 n=0
	mount_root "$FORGE" "$MNT"
	while read -r p g _; do
		check_repo "$g" "$p"
		link_is "$MNT/$p/HEAD" refs/heads/main
		if [ -s "$g/objects/info/alternates" ]; then
			# The README blob is not the fork's own: it comes
			# through alternates.
			[ -z "$(find "$g/objects" -name '*.pack')" ]
			forks=$((forks + 1))
		fi
		[[ $p == */*/* ]] && nested=$((nested + 1))
		n=$((n + 1))
	done < <(lines_of 0 1 3 4 9 57 100 104 199 250 314 399 401 555 642 704 789 864 950 999)
	[ "$n" -eq 20 ]
	[ "$forks" -ge 5 ]
	[ "$nested" -ge 5 ]
}

@test "find walks every one of the 1 000 repositories without an error" {
	local t ms p g id all=$BATS_TEST_TMPDIR/all scratch=$BATS_TEST_TMPDIR/all.git
	mount_root "$FORGE" "$MNT"
	log_mark
	t=${EPOCHREALTIME/./}
	find "$MNT" -xdev -printf '%p %l\n' >"$all" 2>"$BATS_TEST_TMPDIR/err"
	ms=$(((${EPOCHREALTIME/./} - t) / 1000))
	echo "# find over $(wc -l <"$REPOS") repositories: $(wc -l <"$all")" \
		"paths in $ms ms" >&3
	[ ! -s "$BATS_TEST_TMPDIR/err" ]
	no_new_log
	running "$DAEMON_PID"
	# Each repository's HEAD, and only theirs.
	diff <(sed -n "s|^$MNT/\(.*\)/HEAD .*|\1|p" "$all" | LC_ALL=C sort) \
		<(cut -d' ' -f1 "$REPOS")
	# Each one's main is in its commits/.
	sed -n "s|^$MNT/\(.*\)/refs/heads/main \.\./\.\./commits/\([0-9a-f]\{40\}\)\$|$MNT/\1/commits/\2 ../by-id/\2|p" \
		"$all" | LC_ALL=C sort >"$BATS_TEST_TMPDIR/mains"
	[ "$(wc -l <"$BATS_TEST_TMPDIR/mains")" -eq "$(wc -l <"$REPOS")" ]
	[ -z "$(LC_ALL=C sort "$all" | LC_ALL=C comm -13 - "$BATS_TEST_TMPDIR/mains")" ]
	# Every commit listed anywhere is one, as one git that borrows every
	# repository's objects says.
	git init -q --bare "$scratch"
	cut -d' ' -f2 "$REPOS" | sed 's|$|/objects|' >"$scratch/objects/info/alternates"
	sed -n 's|.*/commits/\([0-9a-f]\{40\}\) \.\./by-id/\1$|\1|p' "$all" | sort -u |
		git --git-dir="$scratch" cat-file --batch-check='%(objecttype)' |
		sort | uniq -c >"$BATS_TEST_TMPDIR/types"
	[ "$(awk '{ print $2 }' "$BATS_TEST_TMPDIR/types")" = commit ]
	# And fifty of them list what git rev-list --all lists, main where
	# git rev-parse says.
	while read -r p g; do
		diff <(sed -n "s|^$MNT/$p/commits/\([0-9a-f]\{40\}\) \.\./by-id/\1\$|\1|p" "$all") \
			<(git --git-dir="$g" rev-list --all | LC_ALL=C sort)
		grep -qxF "$MNT/$p/refs/heads/main ../../commits/$(git --git-dir="$g" rev-parse main)" "$all"
	done < <(awk 'NR % 20 == 3' "$REPOS")
}

@test "every object of every one of the 1 000 repositories, with -o max_repos=16, reads as git cat-file prints it" {
	local status=0
	mount_root "$FORGE" "$MNT" -o max_repos=16
	log_mark
	# One git cat-file --batch-all-objects --batch a repository (its
	# alternates' objects too), against objects/<id>: bytes and st_size.
	python3 - "$MNT" "$REPOS" >"$BATS_TEST_TMPDIR/out" <<'PY' || status=1
import os, subprocess, sys
mnt, repos = sys.argv[1], sys.argv[2]
n = bad = nrepos = 0
for line in open(repos):
    path, gitdir = line.split()[:2]
    nrepos += 1
    out = subprocess.run(["git", "--git-dir=" + gitdir, "cat-file",
                          "--batch-all-objects", "--batch"],
                         check=True, capture_output=True).stdout
    i = 0
    while i < len(out):
        nl = out.index(b"\n", i)
        oid, typ, size = out[i:nl].decode().split()
        size = int(size)
        want = out[nl + 1:nl + 1 + size]
        i = nl + 1 + size + 1
        f = os.path.join(mnt, path, "objects", oid)
        n += 1
        try:
            with open(f, "rb") as fh:
                got = fh.read()
            st = os.stat(f).st_size
        except OSError as e:
            print("error", f, e)
            bad += 1
            continue
        if got != want or st != size:
            print("differs", f, typ, size, len(got), st)
            bad += 1
print("#", n, "objects of", nrepos, "repositories,", bad, "wrong")
sys.exit(1 if bad or n < 5 * nrepos else 0)
PY
	tail -1 "$BATS_TEST_TMPDIR/out" >&3
	head -5 "$BATS_TEST_TMPDIR/out" >&2
	[ "$status" -eq 0 ]
	no_new_log
	[ "$(open_repos)" -le 32 ]
}

@test "the same object in two repositories has two inode numbers, a fork's borrowed blob too" {
	local p0 g0 p1 g1 p3 g3 p4 g4 blob
	read -r p0 g0 _ < <(repo_line 0)
	read -r p1 g1 _ < <(repo_line 1)
	read -r p3 g3 _ < <(repo_line 3)
	read -r p4 g4 _ < <(repo_line 4)
	mount_root "$FORGE" "$MNT"
	# Siblings: the same README blob, as git says.
	[ "$(git --git-dir="$g0" rev-parse main:README)" = "$(git --git-dir="$g1" rev-parse main:README)" ]
	cmp "$MNT/$p0/HEAD/tree/README" "$MNT/$p1/HEAD/tree/README"
	[ "$(stat -c %i "$MNT/$p0/HEAD/tree/README")" != "$(stat -c %i "$MNT/$p1/HEAD/tree/README")" ]
	# A fork and its parent: one blob, stored once, through alternates.
	grep -qxF "$g3/objects" "$g4/objects/info/alternates"
	blob=$(git --git-dir="$g3" rev-parse main:README)
	git --git-dir="$g4" cat-file -e "$blob"
	cmp "$MNT/$p3/objects/$blob" "$MNT/$p4/objects/$blob"
	[ "$(stat -c %i "$MNT/$p3/objects/$blob")" != "$(stat -c %i "$MNT/$p4/objects/$blob")" ]
	[ "$(stat -c %i "$MNT/$p3/trees/$(git --git-dir="$g3" rev-parse 'main^{tree}')")" != \
		"$(stat -c %i "$MNT/$p4/trees/$(git --git-dir="$g4" rev-parse 'main^{tree}')")" ]
	[ "$(stat -c %i "$MNT/$p3/objects")" != "$(stat -c %i "$MNT/$p4/objects")" ]
}

@test "no inode number under one repository is one under another" {
	local a b pair
	mount_root "$FORGE" "$MNT"
	# Siblings, a fork and its parent, a group's and its subgroup's.
	for pair in "0 1" "3 4" "0 100" "104 999"; do
		read -r a _ < <(repo_line "${pair% *}")
		read -r b _ < <(repo_line "${pair#* }")
		find "$MNT/$a" -xdev -printf '%i\n' | sort -u >"$BATS_TEST_TMPDIR/a"
		find "$MNT/$b" -xdev -printf '%i\n' | sort -u >"$BATS_TEST_TMPDIR/b"
		[ "$(wc -l <"$BATS_TEST_TMPDIR/a")" -ge 20 ]
		[ "$(wc -l <"$BATS_TEST_TMPDIR/b")" -ge 20 ]
		[ -z "$(comm -12 "$BATS_TEST_TMPDIR/a" "$BATS_TEST_TMPDIR/b")" ] || {
			echo "$a and $b share inode numbers:" >&2
			comm -12 "$BATS_TEST_TMPDIR/a" "$BATS_TEST_TMPDIR/b" | head >&2
			false
		}
	done
}

@test "every path keeps its inode number over an unmount and a remount, whatever is looked at first" {
	local p
	mount_root "$FORGE" "$MNT"
	while read -r p _; do
		find "$MNT/$p" "$MNT/$p/HEAD/" -xdev
	done < <(lines_of 0 4 57 100 104 555 864 999; grep '^team/app ' "$REPOS") \
		>"$BATS_TEST_TMPDIR/paths"
	echo "$MNT" "$MNT/g0" "$MNT/g0/sub1" "$MNT/team" >>"$BATS_TEST_TMPDIR/paths"
	[ "$(wc -l <"$BATS_TEST_TMPDIR/paths")" -ge 300 ]
	tr '\n' '\0' <"$BATS_TEST_TMPDIR/paths" | xargs -0 stat -c '%i %n' |
		LC_ALL=C sort -k2 >"$BATS_TEST_TMPDIR/before"
	unmount_odbfs "$MNT"
	[ "$ODBFS_STATUS" -eq 0 ]
	mount_root "$FORGE" "$MNT"
	# Other repositories first, then the same paths in reverse order.
	find "$MNT/g2" -maxdepth 2 -xdev >/dev/null
	tac "$BATS_TEST_TMPDIR/paths" | tr '\n' '\0' | xargs -0 stat -c '%i %n' |
		LC_ALL=C sort -k2 >"$BATS_TEST_TMPDIR/after"
	diff "$BATS_TEST_TMPDIR/before" "$BATS_TEST_TMPDIR/after"
	# Apart, too: one number a path.
	[ "$(cut -d' ' -f1 "$BATS_TEST_TMPDIR/before" | sort -u | wc -l)" -ge 300 ]
}

@test "-o max_repos= other than a number from 1, or without --root: refused, naming the option; nothing mounted" {
	local root=$BATS_TEST_TMPDIR/forge v
	small_forge "$root"
	mkdir -p "$MNT"
	for v in -1 0 1x " 8" "" 65537 99999999999999999999; do
		run timeout 10 "$ODBFS" -f -o "max_repos=$v" --root "$root" "$MNT"
		[ "$status" -eq 1 ]
		[[ $output == *"max_repos=$v: expected a number of repositories"* ]]
		! mountpoint -q "$MNT"
	done
	run timeout 10 "$ODBFS" -f -o max_repos=8 "$root/g0/r1.git" "$MNT"
	[ "$status" -eq 1 ]
	[[ $output == *"max_repos= goes with --root"* ]]
	! mountpoint -q "$MNT"
	mount_root "$root" "$MNT" -o max_repos=1
	check_repo "$root/g0/r1.git" g0/r1.git
	check_repo "$root/g0/r2.git" g0/r2.git
}

@test "-o max_repos=4: thirty repositories read in turn, then the first again, each as git says" {
	local p g n=0 most=0 o
	mount_root "$FORGE" "$MNT" -o max_repos=4
	awk 'NR % 33 == 1' "$REPOS" | head -30 >"$BATS_TEST_TMPDIR/thirty"
	[ "$(wc -l <"$BATS_TEST_TMPDIR/thirty")" -eq 30 ]
	while read -r p g _; do
		check_repo "$g" "$p"
		o=$(open_repos)
		[ "$o" -gt "$most" ] && most=$o
		n=$((n + 1))
	done <"$BATS_TEST_TMPDIR/thirty"
	echo "# at most $most git directories held at once for max_repos=4" >&3
	# Four open, a fork's parent each at most.
	[ "$most" -le 8 ]
	# The first ten were closed since: what they show now, read anew.
	while read -r p g _; do
		diff <(ls "$MNT/$p/commits") <(git --git-dir="$g" rev-list --all | LC_ALL=C sort)
		cmp <(git --git-dir="$g" cat-file blob main:main.c) \
			"$MNT/$p/trees/$(git --git-dir="$g" rev-parse 'main^{tree}')/main.c"
		cmp <(git --git-dir="$g" cat-file commit main) \
			"$MNT/$p/objects/$(git --git-dir="$g" rev-parse main)"
		check_repo "$g" "$p"
	done < <(head -10 "$BATS_TEST_TMPDIR/thirty")
	[ "$(open_repos)" -le 8 ]
	running "$DAEMON_PID"
}

@test "-o max_repos=8: the daemon's memory after 200 repositories (a figure), each read right" {
	local p g before after n=0
	mount_root "$FORGE" "$MNT" -o max_repos=8
	before=$(rss)
	while read -r p g _; do
		cmp <(git --git-dir="$g" cat-file blob main:README) "$MNT/$p/HEAD/tree/README"
		link_is "$MNT/$p/refs/heads/main" "../../commits/$(git --git-dir="$g" rev-parse main)"
		n=$((n + 1))
	done < <(awk 'NR % 5 == 1' "$REPOS" | head -200)
	[ "$n" -eq 200 ]
	after=$(rss)
	echo "# VmRSS $before kB after mounting $(wc -l <"$REPOS") repositories," \
		"$after kB after reading from $n with max_repos=8;" \
		"$(open_repos) git directories held" >&3
	[ "$(open_repos)" -le 16 ]
}

# inotify_of PID: inotify instances the process holds.
inotify_of() {
	find "/proc/$1/fd" -lname 'anon_inode:inotify' 2>/dev/null | wc -l
}

@test "64 repositories open take one inotify instance for their watches, and a thread, not 64; a ref moved in one shows" {
	local p g n=0 c
	mount_root "$FORGE" "$MNT"
	while read -r p g _; do
		cat "$MNT/$p/HEAD/tree/README" >/dev/null
		n=$((n + 1))
	done < <(awk 'NR % 7 == 3' "$REPOS" | head -64)
	[ "$n" -eq 64 ]
	echo "# $(inotify_of "$DAEMON_PID") inotify instances, $(ls "/proc/$DAEMON_PID/task" | wc -l) threads with 64 repositories open" >&3
	# The repositories' hub, and the forge's own for its groups.
	[ "$(inotify_of "$DAEMON_PID")" -le 2 ]
	[ "$(ls "/proc/$DAEMON_PID/task" | wc -l)" -lt 20 ]
	read -r p g _ < <(awk 'NR % 7 == 3' "$REPOS" | sed -n 5p)
	c=$(git --git-dir="$g" commit-tree -m moved -p main 'main^{tree}')
	git --git-dir="$g" update-ref refs/heads/main "$c"
	within_a_second link_is "$MNT/$p/refs/heads/main" "../../commits/$c"
}

@test "a repository closed and opened again shows a ref moved while it was closed, though the kernel kept the old link" {
	local p g c n=0
	mount_root "$FORGE" "$MNT" -o max_repos=2
	read -r p g _ < <(sed -n 3p "$REPOS")
	link_is "$MNT/$p/refs/heads/main" "../../commits/$(git --git-dir="$g" rev-parse main)"
	# Closed: two others opened after it.
	while read -r q _ _; do
		cat "$MNT/$q/HEAD/tree/README" >/dev/null
	done < <(sed -n '10,13p' "$REPOS")
	c=$(git --git-dir="$g" commit-tree -m while-closed -p main 'main^{tree}')
	git --git-dir="$g" update-ref refs/heads/main "$c"
	# Opened again by a look inside, then the ref as git has it.
	ls "$MNT/$p/commits" >/dev/null
	within_a_second link_is "$MNT/$p/refs/heads/main" "../../commits/$c"
}

@test "a repository made and pushed to after mounting shows within a second, its objects read right" {
	local root=$BATS_TEST_TMPDIR/forge work=$BATS_TEST_TMPDIR/work
	small_forge "$root"
	git init -q -b main "$work"
	seq 1 20 >"$work/README"
	git -C "$work" add README
	git -C "$work" commit -q -m new
	mount_root "$root" "$MNT"
	not_listed "$MNT/g0" new.git
	[ ! -e "$MNT/g0/new.git" ]
	git init -q --bare -b main "$root/g0/new.git"
	git -C "$work" push -q "$root/g0/new.git" main
	within_a_second listed "$MNT/g0" new.git
	within_a_second link_is "$MNT/g0/new.git/refs/heads/main" \
		"../../commits/$(git --git-dir="$root/g0/new.git" rev-parse main)"
	check_repo "$root/g0/new.git" g0/new.git
	diff <(LC_ALL=C ls "$MNT/g0") <(children_in g0 <(git_repos "$root"))
}

@test "a repository removed after mounting leaves the listing within a second and is ENOENT" {
	local root=$BATS_TEST_TMPDIR/forge
	small_forge "$root"
	# No fork borrows from r2.
	[ -z "$(cat "$root"/g0/*/objects/info/alternates | grep -F /r2.git/)" ]
	mount_root "$root" "$MNT"
	check_repo "$root/g0/r2.git" g0/r2.git
	stat "$MNT/g0/r2.git" >/dev/null
	listed "$MNT/g0" r2.git
	rm -rf "$root/g0/r2.git"
	within_a_second not_listed "$MNT/g0" r2.git
	within_a_second test ! -e "$MNT/g0/r2.git"
	run stat "$MNT/g0/r2.git"
	[ "$status" -ne 0 ]
	[[ $output == *"No such file or directory"* ]]
	run cat "$MNT/g0/r2.git/HEAD/tree/README"
	[ "$status" -ne 0 ]
	diff <(LC_ALL=C ls "$MNT/g0") <(children_in g0 <(git_repos "$root"))
	check_repo "$root/g0/r1.git" g0/r1.git
	check_repo "$root/g0/r3.git" g0/r3.git
}

@test "a push to an open repository moves its ref within a second, as in a single mount" {
	local root=$BATS_TEST_TMPDIR/forge work=$BATS_TEST_TMPDIR/work g old
	small_forge "$root"
	g=$root/g0/r0.git
	mount_root "$root" "$MNT"
	old=$(git --git-dir="$g" rev-parse main)
	check_repo "$g" g0/r0.git
	git clone -q "$g" "$work"
	echo pushed >>"$work/README"
	git -C "$work" commit -q -a -m pushed
	git -C "$work" push -q origin main
	[ "$(git --git-dir="$g" rev-parse main)" != "$old" ]
	within_a_second link_is "$MNT/g0/r0.git/refs/heads/main" \
		"../../commits/$(git --git-dir="$g" rev-parse main)"
	within_a_second readme_is "$g" g0/r0.git
	check_repo "$g" g0/r0.git
}

# broken_repo_served ROOT PATH: with PATH under ROOT broken, mounted on
# $MNT (negative_timeout=0: every look reaches the daemon), its siblings
# read as git says, it is ENOENT or EIO (what is in it, and its path) and
# logged once, however often it is looked at and the root rescanned, and
# the daemon lives.
broken_repo_served() {
	local root=$1 p=$2 absent=${3:-} i
	check_repo "$root/g0/r0.git" g0/r0.git
	check_repo "$root/g0/r2.git" g0/r2.git
	check_repo "$root/g0/r4.git" g0/r4.git
	check_repo "$root/g0/r9.git" g0/r9.git
	run cat "$MNT/$p/HEAD/tree/README"
	[ "$status" -ne 0 ]
	enoent_or_eio "$output"
	logged_once "$p"
	for i in 1 2 3 4 5; do
		ls "$MNT/g0" >/dev/null
		stat "$MNT/$p" "$MNT/$p/HEAD" >/dev/null 2>&1 || :
		ls "$MNT/$p/objects" >/dev/null 2>&1 || :
		sleep 0.1
	done
	# A rescan of its group does not say it again, nor list it again.
	git init -q --bare "$root/g0/later.git"
	within_a_second listed "$MNT/g0" later.git
	if [ -n "$absent" ]; then
		! listed "$MNT/g0" "${p#g0/}"
		# Counted as listed: all but it.
		[ "$(awk '$1 == "repositories" { print $2 }' "$MNT/.odbfs/stats")" \
			-eq $(($(find "$root" -name '*.git' -prune | wc -l) - 1)) ]
	fi
	stat "$MNT/$p" >/dev/null 2>&1 || :
	logged_once "$p"
	check_repo "$root/g0/r3.git" g0/r3.git
	running "$DAEMON_PID"
	[ -n "$absent" ] || return 0
	# One that fails to open: the repository itself, not only what is in
	# it, once the kernel has let go of its entry (at once, or nearly).
	run ls "$MNT/$p"
	[ "$status" -ne 0 ]
	enoent_or_eio "$output"
	within_a_second test ! -e "$MNT/$p"
	! listed "$MNT/g0" "${p#g0/}"
}

@test "the root removed, then made again with other repositories: the listing follows, as git sees them" {
	local root=$BATS_TEST_TMPDIR/forge
	small_forge "$root"
	mount_root "$root" "$MNT"
	check_repo "$root/g0/r1.git" g0/r1.git
	rm -rf "$root"
	# shellcheck disable=SC2317 # called through within_a_second
	only_meta() { [ -z "$(ls -A "$MNT" | grep -vx .odbfs)" ]; }
	within_a_second only_meta
	mkdir "$root"
	readme_repo "$root/new.git" new
	within_a_second listed "$MNT" new.git
	check_repo "$root/new.git" new.git
	# And it is watched again: a group made in it shows.
	mkdir "$root/g1"
	git init -q --bare "$root/g1/later.git"
	within_a_second listed "$MNT/g1" later.git
	running "$DAEMON_PID"
}

# gutted [OPTIONS...]: mounted with OPTIONS, r1.git, the work tree app
# and r2.git read; then r1.git emptied and made a group holding sub.git,
# and app's .git removed, which changes nothing in g0 itself. Each shows
# as what it is now once something looks at it.
gutted() {
	local root=$BATS_TEST_TMPDIR/forge
	small_forge "$root"
	git clone -q "$root/g0/r3.git" "$root/g0/app"
	mount_root "$root" "$MNT" "$@"
	check_repo "$root/g0/r1.git" g0/r1.git
	check_repo "$root/g0/app/.git" g0/app
	check_repo "$root/g0/r2.git" g0/r2.git
	rm -rf "$root/g0/r1.git"/*
	readme_repo "$root/g0/r1.git/sub.git" sub
	rm -rf "$root/g0/app/.git"
	ls "$MNT/g0/r1.git" "$MNT/g0/app" >/dev/null 2>&1 || :
	within_a_second listed "$MNT/g0/r1.git" sub.git
	check_repo "$root/g0/r1.git/sub.git" g0/r1.git/sub.git
	within_a_second not_listed "$MNT/g0" app
	check_repo "$root/g0/r3.git" g0/r3.git
	running "$DAEMON_PID"
}

@test "a closed repository gutted and made a group, and a work tree whose .git went: each shows as it is now once looked at" {
	# max_repos=1: r1 and app closed by the time they change.
	gutted -o max_repos=1
}

@test "an open repository gutted and made a group, and an open work tree whose .git went: each shows as it is now" {
	# Open: a look at either finds no failure to say so.
	gutted
}

@test "the mount bound back under its own root, one thread (-s): not searched, one log line; the others served" {
	local root=$BATS_TEST_TMPDIR/forge
	small_forge "$root"
	mkdir "$root/loop"
	mount_root "$root" "$MNT" -s
	mount --bind "$MNT" "$root/loop"
	BIND_MNTS+=("$root/loop")
	# A change in the root: a search, which meets the mount itself.
	git init -q --bare "$root/later.git"
	within_a_second listed "$MNT" later.git
	run timeout 10 ls "$MNT/loop"
	[ "$status" -ne 124 ]
	! listed "$MNT" loop
	[ "$(grep -c "not searched, it is this mount itself: $root/loop" "$MNT.log")" -eq 1 ]
	check_repo "$root/g0/r1.git" g0/r1.git
	running "$DAEMON_PID"
}

@test "a git directory whose commondir leads out of the root: not listed, one log line" {
	local root=$BATS_TEST_TMPDIR/forge out=$BATS_TEST_TMPDIR/outside.git
	small_forge "$root"
	git clone -q --bare "$root/g0/r1.git" "$out"
	mkdir "$root/g0/wt.git"
	cp "$out/HEAD" "$root/g0/wt.git/HEAD"
	echo "$out" >"$root/g0/wt.git/commondir"
	mount_root "$root" "$MNT"
	not_listed "$MNT/g0" wt.git
	[ ! -e "$MNT/g0/wt.git" ]
	[ "$(grep -c "not a repository git would open (it leads out of the root): $root/g0/wt.git" "$MNT.log")" -eq 1 ]
	check_repo "$root/g0/r1.git" g0/r1.git
}

@test "log lines about what is missing in a repository name the repository" {
	local root=$BATS_TEST_TMPDIR/forge g blob gone
	small_forge "$root"
	g=$root/g0/lost.git
	readme_repo "$g" los
	blob=$(git --git-dir="$g" rev-parse HEAD:README)
	rm "$g/objects/${blob:0:2}/${blob:2}"
	gone=$(echo nothing | git hash-object --stdin)
	echo "$gone" >"$g/refs/heads/gone"
	mount_root "$root" "$MNT"
	run cat "$MNT/g0/lost.git/HEAD/tree/README"
	[ "$status" -ne 0 ]
	readlink "$MNT/g0/lost.git/refs/heads/gone"
	grep -q "^odbfs: g0/lost.git: refs/heads/gone: $gone is missing" "$MNT.log"
	grep -q "^odbfs: g0/lost.git: commits/.*/tree/README: $blob is not in the repository" "$MNT.log"
	# None that names no repository.
	! grep -v "lost.git" "$MNT.log"
	# A path of 480 bytes and more: its end, and the line says what
	# went wrong all the same.
	local long
	long=$(printf 'b%.0s' $(seq 240))/$(printf 'b%.0s' $(seq 240))
	readme_repo "$root/$long/deep.git" dee
	blob=$(git --git-dir="$root/$long/deep.git" rev-parse HEAD:README)
	rm "$root/$long/deep.git/objects/${blob:0:2}/${blob:2}"
	within_a_second test -e "$MNT/$long/deep.git"
	run cat "$MNT/$long/deep.git/HEAD/tree/README"
	[ "$status" -ne 0 ]
	grep -q "^odbfs: \.\.\.b*/deep.git: commits/.*/tree/README: $blob is not in the repository" "$MNT.log"
}

@test "refresh=poll=1 over a root inotify cannot see (bindfs of it): repositories made and removed show within seconds" {
	local back=$BATS_TEST_TMPDIR/back root=$BATS_TEST_TMPDIR/forge
	small_forge "$back"
	mkdir -p "$root"
	# Changes made in back reach no inotify watch on root.
	bindfs --no-allow-other "$back" "$root"
	BIND_MNTS+=("$root")
	mount_root "$root" "$MNT" -o refresh=poll=1,max_repos=1
	check_repo "$root/g0/r1.git" g0/r1.git
	readme_repo "$back/g0/polled.git" pol
	rm -rf "$back/g0/r2.git"
	# Reads meanwhile, each closing a repository (which wakes the
	# forge's thread): they must not put the next look off.
	# shellcheck disable=SC2317 # called through within_seconds
	both() {
		cat "$MNT/g0/r1.git/HEAD/tree/README" "$MNT/g0/r3.git/HEAD/tree/README" >/dev/null
		listed "$MNT/g0" polled.git && not_listed "$MNT/g0" r2.git
	}
	within_seconds 5 both
	check_repo "$root/g0/polled.git" g0/polled.git
	running "$DAEMON_PID"
}

@test "a repository git refuses (an unknown extension) costs only itself: ENOENT or EIO, one log line" {
	local root=$BATS_TEST_TMPDIR/forge g
	small_forge "$root"
	# r1: no fork borrows its objects.
	g=$root/g0/r1.git
	unknown_extension "$g"
	run git -C "$g" rev-parse HEAD
	[ "$status" -ne 0 ]
	mount_root "$root" "$MNT" -o negative_timeout=0
	broken_repo_served "$root" g0/r1.git absent
}

@test "a repository git refuses (a config that includes itself) costs only itself: one log line, git's reason" {
	local root=$BATS_TEST_TMPDIR/forge g
	small_forge "$root"
	g=$root/g0/r1.git
	git --git-dir="$g" config include.path config
	run git -C "$g" rev-parse HEAD
	[ "$status" -ne 0 ]
	[[ $output == *"exceeded maximum include depth (10)"* ]]
	mount_root "$root" "$MNT" -o negative_timeout=0
	broken_repo_served "$root" g0/r1.git absent
	logged_once "exceeded maximum include depth (10) while including $g/config from $g/config"
}

@test "a repository git refuses is tried again once its config changes: then listed and read as git says" {
	local root=$BATS_TEST_TMPDIR/forge g
	small_forge "$root"
	g=$root/g0/r1.git
	unknown_extension "$g"
	mount_root "$root" "$MNT" -o negative_timeout=0
	run ls "$MNT/g0/r1.git/objects"
	[ "$status" -ne 0 ]
	within_a_second not_listed "$MNT/g0" r1.git
	# Mended; the next change in its group rescans it.
	git config --file "$g/config" --unset extensions.unknownext
	git -C "$g" rev-parse HEAD
	git init -q --bare "$root/g0/later.git"
	within_a_second listed "$MNT/g0" later.git
	within_a_second listed "$MNT/g0" r1.git
	check_repo "$g" g0/r1.git
	[ "$(awk '$1 == "repositories" { print $2 }' "$MNT/.odbfs/stats")" \
		-eq "$(find "$root" -name '*.git' -prune | wc -l)" ]
}

# A pack index cut short is no repository that fails to open: as in a
# mount of it alone, the pack is left out with one log line and the rest
# served.
@test "a repository whose pack index is cut to 10 bytes costs only itself: ENOENT or EIO, one log line" {
	local root=$BATS_TEST_TMPDIR/forge g
	small_forge "$root"
	# r1: no fork borrows its objects.
	g=$root/g0/r1.git
	truncate -s 10 "$g"/objects/pack/*.idx
	run git --git-dir="$g" cat-file -p main:README
	[ "$status" -ne 0 ]
	mount_root "$root" "$MNT" -o negative_timeout=0
	broken_repo_served "$root" g0/r1.git
}

@test "--root with the mountpoint inside the root: status 1, one line, nothing mounted" {
	local root=$BATS_TEST_TMPDIR/root m
	git init -q --bare "$root/a.git"
	mkdir "$root/mnt" "$root/a.git/mnt"
	ln -s "$root/mnt" "$BATS_TEST_TMPDIR/via"
	for m in "$root/mnt" "$root/a.git/mnt" "$BATS_TEST_TMPDIR/via"; do
		EXTRA_MNTS+=("$m")
		run --separate-stderr "$ODBFS" --root "$root" "$m" 3>&-
		[ "$status" -eq 1 ]
		[ "${#stderr_lines[@]}" -eq 1 ]
		[[ $stderr == *"$m"* || $stderr == *"$root"* ]]
		not_mounted "$m"
	done
	[ -z "$(grep -F "$root" /proc/mounts)" ]
}

@test "--root of a directory that does not exist: status 1, a line naming it, nothing mounted" {
	mkdir "$MNT"
	run --separate-stderr "$ODBFS" --root "$BATS_TEST_TMPDIR/nope" "$MNT" 3>&-
	[ "$status" -eq 1 ]
	[ "${#stderr_lines[@]}" -ge 1 ]
	[[ $stderr == *"$BATS_TEST_TMPDIR/nope"* ]]
	not_mounted "$MNT"
}

@test "a REPO and --root both: status 1, a usage message, nothing mounted" {
	local root=$BATS_TEST_TMPDIR/root repo=$BATS_TEST_TMPDIR/one.git
	git init -q --bare "$root/a.git"
	git init -q --bare "$repo"
	mkdir "$MNT"
	run --separate-stderr "$ODBFS" "$repo" --root "$root" "$MNT" 3>&-
	[ "$status" -eq 1 ]
	[[ $stderr == *usage* ]]
	not_mounted "$MNT"
	run --separate-stderr "$ODBFS" --root "$root" "$repo" "$MNT" 3>&-
	[ "$status" -eq 1 ]
	[[ $stderr == *usage* ]]
	not_mounted "$MNT"
}

@test "a symbolic link to a repository or a group outside the root is neither listed nor reachable" {
	local root=$BATS_TEST_TMPDIR/forge out=$BATS_TEST_TMPDIR/outside p
	small_forge "$root"
	git clone -q --bare "$root/g0/r0.git" "$out/o.git"
	ln -s "$out/o.git" "$root/g0/link.git"
	ln -s "$out" "$root/linked"
	# A work tree whose .git is a link out.
	mkdir -p "$root/team/evil"
	ln -s "$out/o.git" "$root/team/evil/.git"
	# git would take each for a repository.
	git --git-dir="$root/g0/link.git" rev-parse HEAD >/dev/null
	git --git-dir="$root/linked/o.git" rev-parse HEAD >/dev/null
	git -C "$root/team/evil" rev-parse HEAD >/dev/null
	mount_root "$root" "$MNT"
	not_listed "$MNT" linked
	not_listed "$MNT/g0" link.git
	diff <(LC_ALL=C ls "$MNT/g0") <(children_in g0 <(git_repos "$root"))
	for p in g0/link.git linked linked/o.git; do
		run stat "$MNT/$p"
		[ "$status" -ne 0 ]
		[[ $output == *"No such file or directory"* ]]
	done
	# team/evil holds no repository: maybe an empty group, never one.
	for p in g0/link.git linked/o.git team/evil; do
		[ ! -e "$MNT/$p/HEAD" ]
		[ ! -L "$MNT/$p/HEAD" ]
		run cat "$MNT/$p/HEAD/tree/README"
		[ "$status" -ne 0 ]
		run ls "$MNT/$p/objects"
		[ "$status" -ne 0 ]
	done
	check_repo "$root/g0/r0.git" g0/r0.git
}

@test "a FIFO named like a repository, or as a repository's HEAD, hangs neither ls nor the rescan" {
	local root=$BATS_TEST_TMPDIR/forge
	small_forge "$root"
	mkfifo "$root/g0/fifo.git"
	mkdir -p "$root/g0/trap.git/objects" "$root/g0/trap.git/refs"
	mkfifo "$root/g0/trap.git/HEAD"
	mount_root "$root" "$MNT"
	run timeout -s KILL 10 ls "$MNT/g0"
	[ "$status" -eq 0 ]
	[[ $output == *r0.git* ]]
	not_listed "$MNT/g0" fifo.git
	run timeout -s KILL 10 stat "$MNT/g0/fifo.git"
	[ "$status" -ne 0 ]
	[ "$status" -ne 137 ]
	run timeout -s KILL 10 ls "$MNT/g0/trap.git"
	[ "$status" -ne 137 ]
	run timeout -s KILL 10 cat "$MNT/g0/trap.git/HEAD"
	[ "$status" -ne 137 ]
	# One more after mounting, and a repository: the rescan ends.
	mkfifo "$root/g0/late.git"
	git init -q --bare "$root/g0/after.git"
	within_a_second listed "$MNT/g0" after.git
	not_listed "$MNT/g0" late.git
	run timeout -s KILL 10 find "$MNT/g0" -maxdepth 1
	[ "$status" -ne 137 ]
	check_repo "$root/g0/r1.git" g0/r1.git
	running "$DAEMON_PID"
}

# The outsider's cases for --root (issue 17), each as it was found.

@test "a repository replaced by another at the same path shows the new one, as git sees it" {
	local root=$BATS_TEST_TMPDIR/forge
	small_forge "$root"
	mount_root "$root" "$MNT"
	check_repo "$root/g0/r1.git" g0/r1.git
	# r2 (not a fork) takes r1's place: same path, another directory.
	rm -rf "$root/g0/r1.git"
	cp -a "$root/g0/r2.git" "$root/g0/r1.git"
	within_a_second link_is "$MNT/g0/r1.git/refs/heads/main" \
		"../../commits/$(git --git-dir="$root/g0/r1.git" rev-parse main)"
	check_repo "$root/g0/r1.git" g0/r1.git
}

@test "an open repository removed and cloned again at its path, five times: each time the new one (inode numbers reused)" {
	local root=$BATS_TEST_TMPDIR/forge src=$BATS_TEST_TMPDIR/src i
	small_forge "$root"
	git clone -q --bare "$root/g0/r2.git" "$src"
	mount_root "$root" "$MNT"
	for i in 1 2 3 4 5; do
		# Open: its watcher then sees its files go, and it reads nothing.
		cat "$MNT/g0/r1.git/HEAD/message" >/dev/null
		rm -rf "$root/g0/r1.git"
		# A new commit each time, so that each clone is another.
		git --git-dir="$src" commit-tree -p main -m "round $i" \
			"$(git --git-dir="$src" rev-parse 'main^{tree}')" |
			xargs git --git-dir="$src" update-ref refs/heads/main
		git clone -q --bare "$src" "$root/g0/r1.git"
		within_seconds 5 link_is "$MNT/g0/r1.git/refs/heads/main" \
			"../../commits/$(git --git-dir="$root/g0/r1.git" rev-parse main)"
		run cat "$MNT/g0/r1.git/HEAD/message"
		[ "$status" -eq 0 ]
		[ "$output" = "round $i" ]
	done
	check_repo "$root/g0/r1.git" g0/r1.git
	running "$DAEMON_PID"
}

@test "a sha1 repository replaced by a sha256 one while closed: its .odbfs/format says sha256" {
	local root=$BATS_TEST_TMPDIR/forge
	small_forge "$root"
	mount_root "$root" "$MNT" -o max_repos=1
	# Held open across the swap: the kernel keeps its node.
	exec 4<"$MNT/g0/r1.git/.odbfs/format"
	[ "$(cat "$MNT/g0/r1.git/.odbfs/format")" = sha1 ]
	rm -rf "$root/g0/r1.git"
	git init -q --bare --object-format=sha256 "$root/g0/r1.git"
	# Another repository opened: r1.git, closed, is opened again.
	within_seconds 5 test -e "$MNT/g0/r2.git/HEAD"
	within_seconds 5 grep -qx sha256 "$MNT/g0/r1.git/.odbfs/format"
	exec 4<&-
	running "$DAEMON_PID"
}

@test "on a file system without birth times, a repository cloned again at its path with its old inode number is the new one" {
	[ "$(id -u)" -eq 0 ] || skip "needs root to mount a file system image"
	local img=$BATS_TEST_TMPDIR/img fsdir=$BATS_TEST_TMPDIR/fs root i0 i
	local src reused=0
	truncate -s 64M "$img"
	# 128-byte inodes have no room for a birth time.
	mkfs.ext4 -q -I 128 -F "$img" >/dev/null 2>&1 || skip "no mkfs.ext4"
	mkdir -p "$fsdir"
	mount -o loop "$img" "$fsdir" 2>/dev/null || skip "no loop device"
	LOOP_FS=$fsdir
	root=$fsdir/root
	mkdir -p "$root/g"
	git clone -q --bare --no-local "$FORGE/g0/r1.git" "$root/g/p.git"
	mount_root "$root" "$MNT"
	for i in 1 2 3 4; do
		ls "$MNT/g/p.git/refs/heads" >/dev/null
		i0=$(stat -c %i "$root/g/p.git")
		rm -rf "$root/g/p.git"
		src=$FORGE/g0/r$((i % 2 + 1)).git
		git clone -q --bare --no-local "$src" "$root/g/p.git"
		[ "$(stat -c %i "$root/g/p.git")" != "$i0" ] ||
			reused=$((reused + 1))
		within_seconds 5 link_is "$MNT/g/p.git/refs/heads/main" \
			"../../commits/$(git --git-dir="$src" rev-parse main)"
	done
	echo "# the inode number came back in $reused of 4 rounds" >&3
	check_mount_objects "$root/g/p.git" "$MNT/g/p.git"
	running "$DAEMON_PID"
}

@test "a work tree whose .git file or link is pointed at another repository shows that one" {
	local root=$BATS_TEST_TMPDIR/forge
	mkdir -p "$root/store" "$root/team/wt" "$root/team/ln"
	git clone -q --bare --no-local "$FORGE/g0/r1.git" "$root/store/x.git"
	git clone -q --bare --no-local "$FORGE/g0/r2.git" "$root/store/y.git"
	echo "gitdir: $root/store/x.git" >"$root/team/wt/.git"
	ln -s ../../store/x.git "$root/team/ln/.git"
	mount_root "$root" "$MNT"
	for w in wt ln; do
		link_is "$MNT/team/$w/refs/heads/main" \
			"../../commits/$(git --git-dir="$root/store/x.git" rev-parse main)"
	done
	# As git worktree and submodules write it: renamed into place.
	echo "gitdir: $root/store/y.git" >"$root/team/wt/.git.new"
	mv "$root/team/wt/.git.new" "$root/team/wt/.git"
	ln -sfn ../../store/y.git "$root/team/ln/.git"
	for w in wt ln; do
		within_seconds 5 link_is "$MNT/team/$w/refs/heads/main" \
			"../../commits/$(git --git-dir="$root/store/y.git" rev-parse main)"
	done
	running "$DAEMON_PID"
}

@test "a group turned into a repository shows as one, and back" {
	local root=$BATS_TEST_TMPDIR/forge
	small_forge "$root"
	git init -q --bare "$root/g3/inner.git"
	mount_root "$root" "$MNT"
	within_a_second listed "$MNT/g3" inner.git
	rm -rf "$root/g3/inner.git"
	git init -q --bare "$root/g3"
	# g3 itself is a repository now (git rev-parse agrees).
	[ "$(git --git-dir="$root/g3" rev-parse --is-bare-repository)" = true ]
	within_a_second test -L "$MNT/g3/HEAD"
	[ "$(ls "$MNT/g3" | tr '\n' ' ')" = "HEAD commits objects refs tags trees " ]
	rm -rf "$root/g3"
	mkdir -p "$root/g3"
	git init -q --bare "$root/g3/again.git"
	within_a_second listed "$MNT/g3" again.git
}

@test "a repository named .odbfs at the top: the mount's own .odbfs/ once, one log line" {
	local root=$BATS_TEST_TMPDIR/forge
	small_forge "$root"
	git clone -q --bare "$root/g0/r0.git" "$root/.odbfs"
	mount_root "$root" "$MNT"
	[ "$(ls -A "$MNT" | grep -cx .odbfs)" -eq 1 ]
	[ -f "$MNT/.odbfs/stats" ]
	[ "$(find "$MNT" -maxdepth 1 -name .odbfs | wc -l)" -eq 1 ]
	logged_once "/.odbfs: hidden by the mount's own .odbfs/"
	ls -A "$MNT" >/dev/null
	logged_once "/.odbfs: hidden by the mount's own .odbfs/"
}

@test "ls -l of a group opens none of its repositories" {
	local root=$BATS_TEST_TMPDIR/forge
	small_forge "$root"
	mount_root "$root" "$MNT"
	ls -l "$MNT/g0" >/dev/null
	ls -la "$MNT/g0" >/dev/null
	[ "$(awk '$1 == "repositories_open" { print $2 }' "$MNT/.odbfs/stats")" -eq 0 ]
	cat "$MNT/g0/r0.git/HEAD/tree/README" >/dev/null
	[ "$(awk '$1 == "repositories_open" { print $2 }' "$MNT/.odbfs/stats")" -eq 1 ]
}

# The second outsider's case (issue 17): readers in parallel over more
# repositories than may be open, under AddressSanitizer (a listing's
# opendir read its repository's struct after letting it go, and the
# forge's thread could have freed it).
@test "tar, find | cat, readlink and ls -lR at once over 8 repositories with max_repos=1: no error under AddressSanitizer" {
	local root=$BATS_TEST_TMPDIR/forge k dirs=() pids
	[ -x "$TOP/odbfs-asan" ] || skip "odbfs-asan is not built (make odbfs-asan)"
	small_forge "$root"
	# LeakSanitizer stops the world with ptrace at exit, which the
	# daemon's own filter refuses once mounted (see SECURITY): memory
	# errors are what this looks for.
	ASAN_OPTIONS=detect_leaks=0 ODBFS=$TOP/odbfs-asan \
		mount_root "$root" "$MNT" -o max_repos=1
	for k in 1 2 3 4 5 6 7 8; do
		dirs+=("$MNT/g0/r$k.git/objects" "$MNT/g0/r$k.git/refs")
	done
	for k in 1 2 3; do
		pids=()
		tar -cf /dev/null "${dirs[@]}" 2>/dev/null & pids+=($!)
		find "${dirs[@]}" -type f -print0 | xargs -0 cat >/dev/null &
		pids+=($!)
		find "${dirs[@]}" -type l -print0 | xargs -0 readlink >/dev/null &
		pids+=($!)
		ls -lR "${dirs[@]}" >/dev/null & pids+=($!)
		# Not a bare wait: the daemon is a child of this shell too.
		wait "${pids[@]}"
	done
	running "$DAEMON_PID"
	! grep -E "AddressSanitizer|runtime error" "$MNT.log"
	check_repo "$root/g0/r1.git" g0/r1.git
	check_repo "$root/g0/r4.git" g0/r4.git
}

@test "a ref moved while its repository is closed shows at once, though the kernel had the old link" {
	local root=$BATS_TEST_TMPDIR/forge c
	small_forge "$root"
	mount_root "$root" "$MNT" -o max_repos=1
	check_repo "$root/g0/r1.git" g0/r1.git
	cat "$MNT/g0/r1.git/HEAD/tree/README" >/dev/null
	# r2 opens, so r1 is closed; then r1's main moves.
	cat "$MNT/g0/r2.git/HEAD/tree/README" >/dev/null
	within_a_second stat_at_most repositories_open 1
	c=$(git --git-dir="$root/g0/r1.git" commit-tree -m moved -p main 'main^{tree}')
	git --git-dir="$root/g0/r1.git" update-ref refs/heads/main "$c"
	# Nothing opens r1: the kernel's own entries answer, or a lookup.
	link_is "$MNT/g0/r1.git/refs/heads/main" "../../commits/$c"
	[ "$(cat "$MNT/g0/r1.git/HEAD/message")" = moved ]
}

# secret_by_alternates ENTRY: g0/evil.git's alternates name a repository
# only root may read, which holds TOPSECRET; nobody is given
# evil.git/ENTRY and all below it. Mounted (root reads), evil.git is not
# served, one log line says whose it is, and the others serve.
secret_by_alternates() {
	local root=$BATS_TEST_TMPDIR/forge sec=$BATS_TEST_TMPDIR/sec id
	small_forge "$root"
	mkdir -m 700 "$sec"
	git init -q --bare "$sec/s.git"
	id=$(echo TOPSECRET | git --git-dir="$sec/s.git" hash-object -w --stdin)
	git init -q --bare "$root/g0/evil.git"
	echo "$sec/s.git/objects" >"$root/g0/evil.git/objects/info/alternates"
	chown -R nobody "$root/g0/evil.git/$1"
	mount_root "$root" "$MNT"
	run cat "$MNT/g0/evil.git/objects/$id"
	[ "$status" -ne 0 ]
	[[ $output != *TOPSECRET* ]]
	enoent_or_eio "$output"
	[ "$(grep -c "g0/evil.git: owned by nobody, another user" "$MNT.log")" -eq 1 ]
	check_repo "$root/g0/r1.git" g0/r1.git
	running "$DAEMON_PID"
}

@test "a repository another user owns, whose alternates name what only root reads, is not served: one log line" {
	secret_by_alternates .
}

@test "a root's repository whose objects/info/ another user owns, naming what only root reads in its alternates, is not served" {
	# Root owns the repository and its objects/; nobody, the directory
	# of the file that says where else to read.
	secret_by_alternates objects/info
}

@test "a root's repository refused for a group-writable objects/pack/ is served once mended and its group changes" {
	local root=$BATS_TEST_TMPDIR/forge
	small_forge "$root"
	chgrp nogroup "$root/g0/r2.git/objects/pack"
	chmod g+w "$root/g0/r2.git/objects/pack"
	mount_root "$root" "$MNT" -o negative_timeout=0
	run ls "$MNT/g0/r2.git/objects"
	[ "$status" -ne 0 ]
	within_a_second not_listed "$MNT/g0" r2.git
	chmod g-w "$root/g0/r2.git/objects/pack"
	git init -q --bare "$root/g0/later.git"
	within_a_second listed "$MNT/g0" later.git
	within_a_second listed "$MNT/g0" r2.git
	check_repo "$root/g0/r2.git" g0/r2.git
}

@test "-o owner=root: a root's repository a group may write and one another user owns are served, as a mount of one would" {
	local root=$BATS_TEST_TMPDIR/forge
	small_forge "$root"
	chgrp nogroup "$root/g0/r2.git/objects"
	chmod g+w "$root/g0/r2.git/objects"
	chown -R nobody "$root/g0/r3.git"
	mount_root "$root" "$MNT" -o owner=root
	check_repo "$root/g0/r2.git" g0/r2.git
	# git, run here as root, asks to be told that nobody's is safe.
	GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=safe.directory GIT_CONFIG_VALUE_0='*' \
		check_repo "$root/g0/r3.git" g0/r3.git
	! grep -q "not served" "$MNT.log"
}

@test "a root's repository whose objects/ a group may write is not served: one log line" {
	local root=$BATS_TEST_TMPDIR/forge c
	small_forge "$root"
	c=$(git --git-dir="$root/g0/r2.git" rev-parse main)
	chgrp nogroup "$root/g0/r2.git/objects"
	chmod g+w "$root/g0/r2.git/objects"
	mount_root "$root" "$MNT"
	run cat "$MNT/g0/r2.git/objects/$c"
	[ "$status" -ne 0 ]
	enoent_or_eio "$output"
	[ "$(grep -c "g0/r2.git/objects is writable by group nogroup" "$MNT.log")" -eq 1 ]
	check_repo "$root/g0/r1.git" g0/r1.git
}

@test "a closed repository replaced by another at its path: the old one's objects are no longer served" {
	local root=$BATS_TEST_TMPDIR/forge c
	small_forge "$root"
	mount_root "$root" "$MNT" -o max_repos=1
	c=$(git --git-dir="$root/g0/r1.git" rev-parse main)
	cmp <(git --git-dir="$root/g0/r1.git" cat-file commit "$c") "$MNT/g0/r1.git/objects/$c"
	# r2 opens, r1 is closed; then r3 takes r1's place.
	cat "$MNT/g0/r2.git/HEAD/tree/README" >/dev/null
	mv "$root/g0/r1.git" "$root/g0/old.git"
	mv "$root/g0/r3.git" "$root/g0/r1.git"
	within_a_second listed "$MNT/g0" old.git
	run cat "$MNT/g0/r1.git/objects/$c"
	[ "$status" -ne 0 ]
	check_repo "$root/g0/r1.git" g0/r1.git
}
