# Shared helpers for the bats suites. Load with: load lib
#
# Every repository is built with real git at fixed dates, so runs are
# reproducible; every check compares what odbfs serves with git cat-file.

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# The daemon mounted: the release build, unless tests/run names another
# (odbfs-assert, the same with its assertions on).
ODBFS=${ODBFS_TEST_BINARY:-$TOP/odbfs}
ODBFS_CAT="$TOP/odbfs-cat"

export GIT_AUTHOR_NAME="A U Thor" GIT_AUTHOR_EMAIL="author@example.com"
export GIT_COMMITTER_NAME="C O Mitter" GIT_COMMITTER_EMAIL="committer@example.com"
export GIT_AUTHOR_DATE="1700000000 +0000" GIT_COMMITTER_DATE="1700000000 +0000"
export GIT_CONFIG_NOSYSTEM=1 HOME="${BATS_TMPDIR:-/tmp}"
# An empty file of our own, not /dev/null: a git that writes global config
# as root renames its lock over the file, and /dev/null must survive that;
# here such a write shows in git status instead.
export GIT_CONFIG_GLOBAL="$TOP/tests/empty.gitconfig"

# mount_odbfs REPO MNT [options...]: start the daemon in the foreground, in
# the background of the test, and wait until the mount is there. The pid
# is left in $ODBFS_PID and the daemon's stderr in $MNT.log.
mount_odbfs() {
	local repo=$1 mnt=$2
	shift 2
	mkdir -p "$mnt"
	"$ODBFS" -f "$@" "$repo" "$mnt" 2>"$mnt.log" 3>&- &
	ODBFS_PID=$!
	for _ in $(seq 1 100); do
		# mountpoint reads the mount table; a stat of the root waits
		# for the daemon to serve (past its jail, see SECURITY).
		mountpoint -q "$mnt" && stat "$mnt" >/dev/null && return 0
		kill -0 "$ODBFS_PID" 2>/dev/null || break
		sleep 0.05
	done
	echo "odbfs did not mount $repo on $mnt:" >&2
	cat "$mnt.log" >&2
	return 1
}

# unmount_odbfs MNT: unmount and wait for the daemon; its status is in
# $ODBFS_STATUS.
unmount_odbfs() {
	local mnt=$1
	mountpoint -q "$mnt" && fusermount3 -u "$mnt"
	ODBFS_STATUS=0
	if [ -n "${ODBFS_PID:-}" ]; then
		wait "$ODBFS_PID" || ODBFS_STATUS=$?
		ODBFS_PID=
	fi
	return 0
}

# all_ids REPO: every object id of the repository, one a line.
all_ids() {
	git -C "$1" cat-file --batch-all-objects --batch-check='%(objectname)'
}

# check_mount_objects REPO MNT: every object read through the mount is
# byte-identical to git cat-file, with the same size and type.
check_mount_objects() {
	local repo=$1 mnt=$2 id type size bad=0 n=0
	while read -r id type size; do
		n=$((n + 1))
		if ! git -C "$repo" cat-file "$type" "$id" | cmp -s - "$mnt/objects/$id"; then
			echo "content differs: $id ($type)" >&2; bad=$((bad + 1))
		fi
		if [ "$(stat -c %s "$mnt/objects/$id")" != "$size" ]; then
			echo "size differs: $id" >&2; bad=$((bad + 1))
		fi
	done < <(git -C "$repo" cat-file --batch-all-objects --batch-check)
	[ "$n" -gt 0 ] || { echo "no objects in $repo" >&2; return 1; }
	[ "$bad" -eq 0 ]
}

# check_cat_objects REPO: odbfs-cat --batch equals git cat-file --batch.
check_cat_objects() {
	local repo=$1
	all_ids "$repo" >"$BATS_TEST_TMPDIR/ids"
	git -C "$repo" cat-file --batch <"$BATS_TEST_TMPDIR/ids" >"$BATS_TEST_TMPDIR/want"
	"$ODBFS_CAT" --batch "$repo" <"$BATS_TEST_TMPDIR/ids" >"$BATS_TEST_TMPDIR/got"
	cmp "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/got"
}

# add_commits REPO FROM TO: commits FROM..TO of a small history, each at its
# own fixed date: a text file edited line by line (so packs hold deltas), a
# subdirectory, an executable, a symlink that changes target, an empty
# file, a binary file that comes and goes, and an annotated tag every ten
# commits.
add_commits() {
	local repo=$1 i
	for i in $(seq "$2" "$3"); do
		(
			set -e
			cd "$repo"
			GIT_AUTHOR_DATE="$((1700000000 + i * 3600)) +0000"
			GIT_COMMITTER_DATE=$GIT_AUTHOR_DATE
			export GIT_AUTHOR_DATE GIT_COMMITTER_DATE
			mkdir -p sub/deeper
			if [ ! -f README ]; then
				seq 1 300 | sed 's/^/line number /' >README
			fi
			sed -i "$((i * 7 % 300 + 1))s/\$/ (changed in commit $i)/" README
			printf 'int f%d(void) { return %d; }\n' "$i" "$i" >>sub/code.c
			if [ $((i % 3)) -eq 0 ] || [ ! -f sub/deeper/data.txt ]; then
				seq "$i" $((i * 40)) >sub/deeper/data.txt
			fi
			printf '#!/bin/sh\necho %d\n' "$i" >tool.sh
			chmod 755 tool.sh
			if [ $((i % 10)) -eq 5 ]; then
				ln -sfn sub/deeper/data.txt link
			elif [ ! -L link ] || [ $((i % 10)) -eq 1 ]; then
				ln -sfn README link
			fi
			: >empty
			if [ $((i % 20)) -eq 4 ]; then
				printf '\000\001\002\377binary %d' "$i" >blob.bin
			elif [ $((i % 20)) -eq 12 ]; then
				rm -f blob.bin
			fi
			git add -A
			git commit -q -m "commit $i"
			if [ $((i % 10)) -eq 0 ]; then
				git tag -a -m "release $i" "v$i"
			fi
		) || return 1
	done
}

# make_history REPO [git init options...]: a new repository with 20 commits
# of add_commits, all loose.
make_history() {
	local repo=$1
	shift
	git init -q "$@" "$repo" &&
		git -C "$repo" config gc.auto 0 &&
		add_commits "$repo" 1 20
}

# stat_of MNT NAME: the value of counter NAME in MNT/.odbfs/stats.
stat_of() {
	awk -v k="$2" '$1 == k { print $2 }' "$1/.odbfs/stats"
}

# within_seconds N CMD...: CMD succeeds within N seconds.
within_seconds() {
	local start=${EPOCHREALTIME/./} n=$1
	shift
	until "$@" 2>/dev/null; do
		if [ $((${EPOCHREALTIME/./} - start)) -gt $((n * 1000000)) ]; then
			echo "not within $n s: $*" >&2
			return 1
		fi
		sleep 0.02
	done
}

# within_a_second CMD...: CMD succeeds within one second.
within_a_second() {
	within_seconds 1 "$@"
}

# link_is PATH TARGET: PATH is a symlink to exactly TARGET.
link_is() {
	[ -L "$1" ] && [ "$(readlink -- "$1")" = "$2" ]
}

# log_mark: remember the length of the daemon's log ($MNT.log, as
# mount_odbfs leaves it); one_log_line then looks at what came after.
log_mark() {
	LOG_MARK=$(wc -l <"$MNT.log")
}

new_log() {
	tail -n +$((LOG_MARK + 1)) "$MNT.log"
}

# one_log_line WORD...: since log_mark the daemon logged exactly one line,
# and it holds every WORD.
one_log_line() {
	local lines n w
	lines=$(new_log)
	n=$(printf '%s' "$lines" | grep -c '' || :)
	if [ "$n" -ne 1 ]; then
		echo "wanted 1 new log line, got $n:" >&2
		printf '%s\n' "$lines" >&2
		return 1
	fi
	for w in "$@"; do
		if [[ $lines != *"$w"* ]]; then
			echo "the log line lacks '$w': $lines" >&2
			return 1
		fi
	done
}

# no_new_log: nothing was logged since log_mark.
no_new_log() {
	[ -z "$(new_log)" ] || { new_log >&2; return 1; }
}

# logged_once STRING: exactly one line of the whole log holds STRING.
logged_once() {
	local n
	n=$(grep -cF -- "$1" "$MNT.log" || :)
	if [ "$n" -ne 1 ]; then
		echo "wanted 1 log line with '$1', got $n:" >&2
		cat "$MNT.log" >&2
		return 1
	fi
}

# small_repo DIR WORD: a repository of one commit (a file "file" that
# holds WORD), owned by whoever runs the test.
small_repo() {
	git init -q "$1" && echo "$2" >"$1/file" && git -C "$1" add file &&
		git -C "$1" commit -q -m "$2"
}

# gone PID: has the process exited (a zombie counts: kill -0 would not)?
gone() {
	local state
	state=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) || return 0
	[ -z "$state" ] || [ "$state" = Z ]
}

# mount_sig REPO MNT [options...]: as mount_odbfs, but with the signals
# the tests send at their defaults: a shell starts background jobs with
# SIGINT ignored, a run under nohup(1) has SIGHUP ignored, and libfuse
# leaves an ignored signal alone.
mount_sig() {
	local wrapper=$BATS_TEST_TMPDIR/odbfs-sigint
	printf '#!/bin/sh\nexec env --default-signal=INT,HUP,TERM "%s" "$@"\n' \
		"$ODBFS" >"$wrapper"
	chmod +x "$wrapper"
	ODBFS=$wrapper mount_odbfs "$@"
}

# The suites that read as other users (owner.bats, privilege.bats): two
# of them, made if missing, and a directory BASE out of the test's own
# (which only root can enter), with MNT in it. users_setup skips unless
# root; users_teardown unmounts and removes BASE.
USER1=odbfstest
USER2=odbfstest2

users_setup() {
	[ "$(id -u)" -eq 0 ] || skip "needs root: the daemon takes a user's identity"
	local u
	for u in "$USER1" "$USER2"; do
		id "$u" >/dev/null 2>&1 || useradd -M -s /usr/sbin/nologin "$u"
	done
	# Root's git reads the users' repositories, which it would call
	# dubious.
	export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=safe.directory \
		GIT_CONFIG_VALUE_0='*'
	BASE=$(mktemp -d /tmp/odbfs-users.XXXXXX)
	chmod 755 "$BASE"
	MNT=$BASE/mnt
	mkdir -m 755 "$MNT"
}

users_teardown() {
	[ -n "${BASE:-}" ] || return 0
	unmount_odbfs "$MNT"
	! grep -qs " $MNT " /proc/mounts || umount -l "$MNT"
	rm -rf "$BASE"
}

# run_as USER CMD...: CMD as USER, bounded.
run_as() {
	local user=$1
	shift
	timeout 20 runuser -u "$user" -- "$@"
}
