#!/usr/bin/env bats
# The reftable reference backend (store/reftable.c): refs/ and HEAD of a
# reftable repository are what git for-each-ref and git symbolic-ref say,
# for sha1 and sha256, live while git changes them; a damaged table costs
# the whole stack its refs, as git (which then loads none), with one log
# line, never the daemon.
#
# Debian's git (2.39) cannot read or write reftable. The fixtures in
# tests/fixtures/reftable/ were made by git 2.55 (make.sh there), with what
# git said of them then; where a git 2.55 is found (first on PATH, or the
# one in ../shared/tools), it is asked again, and the live tests run.

load lib

GIT255_TAR=$TOP/../shared/tools/git-2.55.0-debian12-amd64.tar.xz
FIXTURES=$TOP/tests/fixtures/reftable

setup_file() {
	local d=$BATS_FILE_TMPDIR/git255
	GIT255=
	if git version | grep -qE 'git version (2\.(5[5-9]|[6-9][0-9])|[3-9]\.)'; then
		GIT255=$(dirname "$(command -v git)")
	elif [ -f "$GIT255_TAR" ] && mkdir -p "$d" &&
	    tar -xJf "$GIT255_TAR" -C "$d" 2>/dev/null; then
		GIT255=$d/bin
	fi
	export GIT255
}

setup() {
	MNT=$BATS_TEST_TMPDIR/mnt
	mkdir -p "$MNT"
}

teardown() {
	[ -n "${LOOP_PID:-}" ] && kill "$LOOP_PID" 2>/dev/null
	unmount_odbfs "$MNT"
}

# g55 ARGS...: git 2.55.
g55() {
	PATH=$GIT255:$PATH git "$@"
}

# need_git255: skip the test, saying why, where no git 2.55 is found.
need_git255() {
	[ -n "$GIT255" ] ||
		skip "no git 2.55 (../shared/tools): live reftable test skipped"
}

# fixture NAME: unpack tests/fixtures/reftable/NAME.tar.gz; sets REPO.
fixture() {
	tar -xzf "$FIXTURES/$1.tar.gz" -C "$BATS_TEST_TMPDIR"
	REPO=$BATS_TEST_TMPDIR/$1.git
}

# mount_list MNT: "refname id" for every ref the mount shows.
mount_list() {
	(cd "$1" && find refs -type l -printf '%p %l\n' | sed 's| .*/| |' |
		LC_ALL=C sort)
}

# git_list REPO: the same, as git 2.55 says it.
git_list() {
	g55 -C "$1" for-each-ref --format='%(refname) %(objectname)' |
		LC_ALL=C sort
}

# same_refs REPO MNT: the mount's refs/ and HEAD are git 2.55's.
same_refs() {
	diff <(git_list "$1") <(mount_list "$2") >&2 || return 1
	[ "$(readlink "$2/HEAD")" = "$(g55 -C "$1" symbolic-ref HEAD)" ]
}

# refs_settle REPO MNT: same_refs within a second.
refs_settle() {
	within_a_second same_refs "$@"
}

# check_fixture NAME: the mount of fixture NAME shows what git showed.
check_fixture() {
	fixture "$1"
	mount_odbfs "$REPO" "$MNT"
	diff "$FIXTURES/$1.refs" <(mount_list "$MNT")
	[ "$(readlink "$MNT/HEAD")" = "$(cat "$FIXTURES/$1.head")" ]
	[ ! -s "$MNT.log" ]
	if [ -n "$GIT255" ]; then
		same_refs "$REPO" "$MNT"
		PATH=$GIT255:$PATH check_mount_objects "$REPO" "$MNT"
	fi
}

@test "sha1 fixture: refs/ and HEAD as git 2.55 shows them" {
	check_fixture sha1
	[ "$(cat "$MNT/.odbfs/format")" = sha1 ]
	# Spelled out: a tag of a tag and a tag of a tree are tags that peel
	# all the way, a symbolic ref resolves, deleted refs are gone.
	link_is "$MNT/refs/tags/v1-again/object" "../$(awk \
		'$1 == "refs/tags/v1" { print $2 }' "$FIXTURES/sha1.refs")"
	link_is "$MNT/refs/tags/v1-again/object/object" \
		"$(readlink "$MNT/refs/heads/other")"
	[[ $(readlink "$MNT/refs/tags/tree-tag/object") == ../../trees/* ]]
	[ "$(readlink "$MNT/refs/heads/alias")" = \
		"$(readlink "$MNT/refs/heads/main")" ]
	[ ! -e "$MNT/refs/heads/branch/5" ] && [ ! -e "$MNT/refs/tags/light" ]
	[ -L "$MNT/refs/heads/branch/300" ]
}

@test "sha256 fixture: refs/ and HEAD as git 2.55 shows them" {
	check_fixture sha256
	[ "$(cat "$MNT/.odbfs/format")" = sha256 ]
	[ "$(readlink "$MNT/HEAD")" = refs/heads/other ]
}

@test "a new reftable repository, sha1 and sha256, and one git refs migrate made" {
	need_git255
	for format in sha1 sha256; do
		REPO=$BATS_TEST_TMPDIR/$format
		g55 init -q -b main --ref-format=reftable --object-format=$format "$REPO"
		add_commits_g55 "$REPO"
		mount_odbfs "$REPO" "$MNT"
		same_refs "$REPO" "$MNT"
		[ ! -s "$MNT.log" ]
		unmount_odbfs "$MNT"
	done
	REPO=$BATS_TEST_TMPDIR/migrated
	g55 init -q -b main "$REPO"
	add_commits_g55 "$REPO"
	g55 -C "$REPO" pack-refs --all
	g55 -C "$REPO" branch -q loose
	g55 -C "$REPO" refs migrate --ref-format=reftable
	mount_odbfs "$REPO" "$MNT"
	same_refs "$REPO" "$MNT"
	[ -L "$MNT/refs/heads/loose" ]
}

@test "live: git refs migrate while mounted, to reftable and back, shows the refs within a second" {
	need_git255
	REPO=$BATS_TEST_TMPDIR/migrating
	g55 init -q -b main "$REPO"
	add_commits_g55 "$REPO"
	g55 -C "$REPO" pack-refs --all
	g55 -C "$REPO" branch -q loose
	mount_odbfs "$REPO" "$MNT"
	same_refs "$REPO" "$MNT"
	g55 -C "$REPO" refs migrate --ref-format=reftable
	[ -d "$REPO/.git/reftable" ]
	refs_settle "$REPO" "$MNT"
	# Refs written after, into the reftable, show too.
	g55 -C "$REPO" branch -q after HEAD~1
	refs_settle "$REPO" "$MNT"
	[ -L "$MNT/refs/heads/after" ] && [ -L "$MNT/refs/heads/loose" ]
	g55 -C "$REPO" refs migrate --ref-format=files
	[ ! -d "$REPO/.git/reftable" ]
	refs_settle "$REPO" "$MNT"
	[ -L "$MNT/refs/heads/after" ]
	[ ! -s "$MNT.log" ] || ! cat "$MNT.log" >&2
}

@test "live: refs written after git refs migrate to files, and back, follow within a second" {
	live_reftable migrating
	g55 -C "$REPO" refs migrate --ref-format=files
	refs_settle "$REPO" "$MNT"
	# Written into the new refs/: a branch, one in a new directory,
	# one moved, one deleted, HEAD moved.
	g55 -C "$REPO" branch -q new
	refs_settle "$REPO" "$MNT"
	[ -L "$MNT/refs/heads/new" ]
	g55 -C "$REPO" branch -q topic/deep HEAD~2
	g55 -C "$REPO" update-ref refs/heads/side HEAD
	refs_settle "$REPO" "$MNT"
	g55 -C "$REPO" branch -q -D new
	g55 -C "$REPO" symbolic-ref HEAD refs/heads/topic/deep
	refs_settle "$REPO" "$MNT"
	[ ! -e "$MNT/refs/heads/new" ]
	# And back: what is written into the reftable then shows as well.
	g55 -C "$REPO" refs migrate --ref-format=reftable
	refs_settle "$REPO" "$MNT"
	g55 -C "$REPO" branch -q again main~1
	g55 -C "$REPO" update-ref refs/heads/side main~2
	refs_settle "$REPO" "$MNT"
	[ -L "$MNT/refs/heads/again" ]
	[ ! -s "$MNT.log" ] || ! cat "$MNT.log" >&2
}

# add_commits_g55 REPO: three commits, a branch, an annotated tag.
add_commits_g55() {
	local i
	for i in 1 2 3; do
		echo "$i" >"$1/f$i"
		g55 -C "$1" add "f$i"
		g55 -C "$1" commit -q -m "c$i"
	done
	g55 -C "$1" branch -q side HEAD~1
	g55 -C "$1" tag -a -m t t1 HEAD~2
}

# live_reftable NAME: a new reftable repository $BATS_TEST_TMPDIR/NAME
# (REPO) of add_commits_g55, mounted on MNT and shown as git says.
live_reftable() {
	need_git255
	REPO=$BATS_TEST_TMPDIR/$1
	g55 init -q -b main --ref-format=reftable "$REPO"
	add_commits_g55 "$REPO"
	mount_odbfs "$REPO" "$MNT"
	same_refs "$REPO" "$MNT"
}

@test "live: refs created, moved, deleted with git 2.55 show within a second" {
	live_reftable live
	g55 -C "$REPO" branch -q new
	refs_settle "$REPO" "$MNT"
	[ -L "$MNT/refs/heads/new" ]
	g55 -C "$REPO" update-ref refs/heads/new HEAD~2
	refs_settle "$REPO" "$MNT"
	g55 -C "$REPO" branch -q -D side
	refs_settle "$REPO" "$MNT"
	[ ! -e "$MNT/refs/heads/side" ]
	g55 -C "$REPO" tag -a -m t2 t2
	g55 -C "$REPO" symbolic-ref HEAD refs/heads/new
	refs_settle "$REPO" "$MNT"
	[ "$(readlink "$MNT/HEAD")" = refs/heads/new ]
	g55 -C "$REPO" checkout -q --detach HEAD
	within_a_second link_is "$MNT/HEAD" \
		"commits/$(g55 -C "$REPO" rev-parse HEAD)"
	[ ! -s "$MNT.log" ]
}

@test "live: pack-refs and auto-compaction change nothing a reader sees" {
	need_git255
	local i bad
	REPO=$BATS_TEST_TMPDIR/compact
	g55 init -q -b main --ref-format=reftable "$REPO"
	add_commits_g55 "$REPO"
	for i in $(seq 1 200); do
		echo "create refs/heads/many/$i HEAD"
	done | g55 -C "$REPO" update-ref --stdin
	mount_odbfs "$REPO" "$MNT"
	same_refs "$REPO" "$MNT"
	# A reader that must always find main and many/100, and HEAD.
	: >"$BATS_TEST_TMPDIR/bad"
	while :; do
		[ -L "$MNT/refs/heads/main" ] && [ -L "$MNT/refs/heads/many/100" ] &&
			[ "$(readlink "$MNT/HEAD")" = refs/heads/main ] ||
			echo "a reader missed a ref" >>"$BATS_TEST_TMPDIR/bad"
	done 3>&- &
	LOOP_PID=$!
	# One table per transaction, compacted as git goes (auto), then all.
	for i in $(seq 1 60); do
		g55 -C "$REPO" update-ref "refs/heads/many/$((i % 7))" HEAD~$((i % 3))
	done
	g55 -C "$REPO" pack-refs --all
	for i in $(seq 1 20); do
		g55 -C "$REPO" update-ref "refs/tags/x$i" HEAD
		g55 -C "$REPO" pack-refs
	done
	refs_settle "$REPO" "$MNT"
	kill "$LOOP_PID"
	wait "$LOOP_PID" 2>/dev/null || :
	LOOP_PID=
	bad=$(wc -l <"$BATS_TEST_TMPDIR/bad")
	[ "$bad" -eq 0 ]
	[ "$(wc -l <"$REPO/.git/reftable/tables.list")" -le 3 ]
	[ ! -s "$MNT.log" ]
}

@test "live: a ref index of several levels" {
	need_git255
	local i
	REPO=$BATS_TEST_TMPDIR/big
	g55 init -q -b main --ref-format=reftable "$REPO"
	g55 -C "$REPO" config reftable.blockSize 256
	add_commits_g55 "$REPO"
	mount_odbfs "$REPO" "$MNT"
	# Thousands of refs in blocks of 256 bytes: an index of indexes.
	for i in $(seq 1 3000); do
		echo "create refs/heads/level/$i HEAD~$((i % 3))"
	done | g55 -C "$REPO" update-ref --stdin
	refs_settle "$REPO" "$MNT"
	[ "$(find "$MNT/refs/heads/level" -type l | wc -l)" -eq 3000 ]
	[ ! -s "$MNT.log" ]
}

# --- damaged tables ------------------------------------------------------

# TABLES: fixture sha1's tables, oldest first; BIG the one of 300 branches
# (many ref blocks and a ref index).
damaged_fixture() {
	fixture sha1
	mapfile -t TABLES <"$REPO/reftable/tables.list"
	BIG=$REPO/reftable/${TABLES[1]}
}

# poke FILE OFFSET BYTE...: write bytes (decimal) at OFFSET in place.
poke() {
	local file=$1 off=$2 b
	shift 2
	for b in "$@"; do
		printf "\\$(printf %03o "$b")" |
			dd of="$file" bs=1 seek="$off" conv=notrunc status=none
		off=$((off + 1))
	done
}

# peek FILE OFFSET N: N bytes at OFFSET, big-endian, as a number.
peek() {
	local v=0 b
	for b in $(od -An -tu1 -j "$2" -N "$3" "$1"); do
		v=$((v * 256 + b))
	done
	echo "$v"
}

# no_refs: the mount shows no ref and no HEAD, as git 2.55, which loads
# no stack with a table it cannot read: leaving the table out would bring
# back refs a later table deleted (branch/5) and values it moved
# (branch/9). Where git 2.55 is found, it lists none either.
no_refs() {
	local refs
	refs=$(find "$MNT/refs" -type l)
	[ -z "$refs" ] || { echo "refs shown: $refs" >&2; return 1; }
	[ ! -L "$MNT/HEAD" ]
	if [ -n "$GIT255" ]; then
		[ -z "$(g55 -C "$REPO" for-each-ref 2>/dev/null)" ]
	fi
	kill -0 "$ODBFS_PID"
}

# damage_logged FILE WORDS...: the log is one line, that names FILE and
# holds every WORD.
damage_logged() {
	local file=$1 line w
	shift
	logged_once "${file##*/}"
	line=$(cat "$MNT.log")
	for w in "$@" "stack refused, no refs shown"; do
		[[ $line == *"$w"* ]] || { echo "lacks '$w': $line" >&2; return 1; }
	done
	[ "$(wc -l <"$MNT.log")" -eq 1 ]
}

# mount_damaged WORDS...: mount, no refs, and one log line naming the
# big table and holding every WORD; still one after reloads.
mount_damaged() {
	mount_in "$BIG" "$@"
}

# mount_in FILE WORDS...: mount_damaged, the line naming FILE.
mount_in() {
	local file=$1
	shift
	mount_odbfs "$REPO" "$MNT"
	no_refs
	damage_logged "$file" "$@"
	# Each reload (tables.list replaced) finds it again: said once.
	cp "$REPO/reftable/tables.list" "$REPO/reftable/tables.list.lock"
	mv "$REPO/reftable/tables.list.lock" "$REPO/reftable/tables.list"
	sleep 0.2
	no_refs
	damage_logged "$file" "$@"
}

@test "damaged: a truncated table" {
	damaged_fixture
	truncate -s 5000 "$BIG"
	mount_damaged "footer does not repeat the header"
}

@test "damaged: a restart offset out of range" {
	local len count
	damaged_fixture
	len=$(peek "$BIG" 25 3)
	count=$(peek "$BIG" $((len - 2)) 2)
	poke "$BIG" $((len - 2 - 3 * count)) 255 255 255
	mount_damaged "restart offset 16777215 out of range" "offset $((len - 2 - 3 * count))"
}

@test "damaged: a prefix length longer than the previous key" {
	damaged_fixture
	# The first record of the first block (after the 24-byte header and
	# the block's 4) must have prefix 0.
	poke "$BIG" 28 9
	mount_damaged "prefix length 9 longer than the previous key (0)" "offset 28"
}

@test "damaged: a block size past the file" {
	damaged_fixture
	poke "$BIG" 25 255 255 0
	mount_damaged "block length 16776960 past the end" "offset 25"
}

@test "damaged: a ref index entry naming the wrong block" {
	local idx
	damaged_fixture
	# The footer (68 bytes from the end) says where the index is; its
	# first record's block position follows the record's key.
	idx=$(peek "$BIG" $(($(stat -c %s "$BIG") - 68 + 24)) 8)
	[ "$(peek "$BIG" "$idx" 1)" -eq $(printf %d "'i") ]
	# Its last key is the last key of the last block: make it another.
	poke "$BIG" $((idx + 12)) $(printf %d "'R")
	# git 2.55 lists the refs (its listing reads no index) but finds
	# none by name through the index: not asked.
	GIT255= mount_damaged "ref index"
}

@test "damaged: update index ranges that disagree" {
	damaged_fixture
	# The big table listed last: its updates come before the others'.
	{ printf '%s\n' "${TABLES[@]:0:1}" "${TABLES[@]:2}"; echo "${TABLES[1]}"; } \
		>"$REPO/reftable/tables.list"
	# git 2.55 does not check this: it lists refs, with the old values
	# of those the big table holds. Refused here, as a damaged table.
	GIT255= mount_damaged "do not follow the previous table's" "offset 8"
}

@test "damaged: a table in the middle cut short, or missing: no deleted branch comes back, no old value" {
	need_git255
	local t work=$BATS_TEST_TMPDIR/stale
	g55 init -q -b main --ref-format=reftable "$work"
	add_commits_g55 "$work"
	export GIT_TEST_REFTABLE_AUTOCOMPACTION=false
	g55 -C "$work" branch -q deleted
	g55 -C "$work" branch -q moved HEAD~1
	g55 -C "$work" branch -q -D deleted
	g55 -C "$work" branch -q -f moved HEAD
	g55 -C "$work" branch -q after
	REPO=$work/.git
	cp -a "$REPO" "$BATS_TEST_TMPDIR/orig"
	# The tables of the deletion and the move, cut to 10 bytes.
	for t in $(tail -n 3 "$REPO/reftable/tables.list" | head -n 2); do
		truncate -s 10 "$REPO/reftable/$t"
	done
	t=$(tail -n 3 "$REPO/reftable/tables.list" | head -n 1)
	mount_in "$t" "offset 0"
	[ ! -e "$MNT/refs/heads/deleted" ]
	unmount_odbfs "$MNT"
	# Missing instead.
	rm -rf "$REPO"
	cp -a "$BATS_TEST_TMPDIR/orig" "$REPO"
	rm "$REPO/reftable/$t"
	mount_in "$t" "No such file or directory"
}

@test "damaged: tables.list names a missing table, a FIFO, a directory: no refs" {
	damaged_fixture
	rm "$BIG"
	mount_damaged "No such file or directory"
	unmount_odbfs "$MNT"
	mkfifo "$BIG"
	# git 2.55 blocks on the FIFO: not asked.
	GIT255= mount_damaged "not a regular file"
	unmount_odbfs "$MNT"
	rm "$BIG"
	mkdir "$BIG"
	mount_damaged "not a regular file"
}

@test "damaged: tables.list itself a FIFO: no refs, mounted, said once" {
	damaged_fixture
	rm "$REPO/reftable/tables.list"
	mkfifo "$REPO/reftable/tables.list"
	mount_odbfs "$REPO" "$MNT"
	[ -z "$(ls "$MNT/refs")" ]
	LOG_MARK=0
	one_log_line "tables.list: not a regular file"
	kill -0 "$ODBFS_PID"
}

@test "damaged: a sparse 2 GiB table is refused unread, at each reload" {
	local rss start
	damaged_fixture
	truncate -s 2G "$BIG"
	start=$EPOCHREALTIME
	mount_damaged "too large"
	# Two loads (mount, reload): neither read the gigabytes.
	echo "# mounted and reloaded in $(awk -v a="$start" -v b="$EPOCHREALTIME" \
		'BEGIN { printf "%.2f", b - a }') s" >&3
	rss=$(awk '/^VmHWM/ { print $2 }' "/proc/$ODBFS_PID/status")
	echo "# VmHWM ${rss} kB" >&3
	[ "$rss" -lt 65536 ]
}

@test "damaged: a table made sparse up to just under 1 GiB is refused, and costs no GiB of memory" {
	local rss
	damaged_fixture
	truncate -s $(((1 << 30) - 1)) "$BIG"
	mount_damaged "footer does not repeat the header"
	# Before, each load read it whole: a GiB of zeros in memory, twice.
	rss=$(awk '/^VmHWM/ { print $2 }' "/proc/$ODBFS_PID/status")
	echo "# VmHWM ${rss} kB" >&3
	[ "$rss" -lt 65536 ]
}

@test "a tables.list over 1 MiB is read whole, as git reads it; a name across the 1 MiB mark is whole" {
	local t
	fixture sha1
	mapfile -t TABLES <"$REPO/reftable/tables.list"
	# Empty lines, which git skips, put the second name across 1 MiB.
	{
		head -c $(((1 << 20) - 10)) /dev/zero | tr '\0' '\n'
		printf '%s\n' "${TABLES[@]}"
	} >"$REPO/reftable/tables.list.lock"
	mv "$REPO/reftable/tables.list.lock" "$REPO/reftable/tables.list"
	mount_odbfs "$REPO" "$MNT"
	diff "$FIXTURES/sha1.refs" <(mount_list "$MNT")
	[ ! -s "$MNT.log" ]
	if [ -n "$GIT255" ]; then
		same_refs "$REPO" "$MNT"
	fi
}

@test "damaged: a tables.list name of 1 MiB, of 256 bytes, or with ../: no refs, said once" {
	local name
	damaged_fixture
	cp "$REPO/reftable/tables.list" "$BATS_TEST_TMPDIR/list"
	for name in "$(head -c $(((1 << 20) + 1)) /dev/zero | tr '\0' a)" \
	    "$(head -c 256 /dev/zero | tr '\0' b)" "../${TABLES[0]}"; do
		# In the middle, as git would have it: before the last table.
		{ printf '%s\n' "${TABLES[@]:0:2}" "$name"; printf '%s\n' \
		    "${TABLES[@]:2}"; } >"$REPO/reftable/tables.list"
		mount_in "tables.list: table name '${name:0:8}" "' refused"
		unmount_odbfs "$MNT"
	done
}

@test "chains of symbolic refs: as long as git follows, and no longer, in both backends" {
	need_git255
	local fmt prev i want got
	for fmt in files reftable; do
		REPO=$BATS_TEST_TMPDIR/chain-$fmt
		g55 init -q -b main --ref-format=$fmt "$REPO"
		add_commits_g55 "$REPO"
		prev=refs/heads/main
		for i in 1 2 3 4 5 6; do
			g55 -C "$REPO" symbolic-ref "refs/heads/s$i" "$prev"
			prev=refs/heads/s$i
		done
		mount_odbfs "$REPO" "$MNT"
		for i in 1 2 3 4 5 6; do
			want=no got=no
			g55 -C "$REPO" rev-parse -q --verify "refs/heads/s$i" >/dev/null && want=yes
			[ -L "$MNT/refs/heads/s$i" ] && got=yes
			[ "$want" = "$got" ] || { echo "$fmt s$i: git $want, odbfs $got" >&2; false; }
		done
		# git stops at s5: the test is about that edge.
		[ -L "$MNT/refs/heads/s4" ] && [ ! -e "$MNT/refs/heads/s5" ]
		grep -q "s5: symbolic refs nested deeper than 4: not shown" "$MNT.log"
		unmount_odbfs "$MNT"
	done
}
