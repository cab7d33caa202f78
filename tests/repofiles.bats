#!/usr/bin/env bats
# The files of a repository that are not objects: config (format version
# and extensions), HEAD, packed-refs, commondir, a .git file, alternates.
# Each may be something git never wrote there (a FIFO, a symlink) or say
# something git refuses; odbfs must never hang on one, and must refuse or
# serve what git refuses or serves. Also: writes after root remounts the
# mount read-write, and tree entries with absurd modes.

bats_require_minimum_version 1.5.0

load lib

setup_file() {
	local p=$BATS_FILE_TMPDIR/pristine

	# Commits 1-10 packed, their refs too (tag v10 only there); then
	# commit 11 on main and a branch "loose", both loose.
	git init -q -b main "$p"
	git -C "$p" config gc.auto 0
	add_commits "$p" 1 10
	git -C "$p" repack -adq
	git -C "$p" pack-refs --all
	add_commits "$p" 11 11
	git -C "$p" branch loose HEAD~1
	PRISTINE=$p
	export PRISTINE
}

setup() {
	REPO=$BATS_TEST_TMPDIR/repo
	MNT=$BATS_TEST_TMPDIR/mnt
	mkdir -p "$MNT"
	cp -a "$PRISTINE" "$REPO"
	GITDIR=$(realpath "$REPO/.git")
}

# ends_within SECONDS PID: process PID is gone within SECONDS.
ends_within() {
	local i
	for i in $(seq 1 $(($1 * 20))); do
		kill -0 "$2" 2>/dev/null || return 0
		sleep 0.05
	done
	echo "process $2 still alive after $1 s" >&2
	return 1
}

# Unmount, and never wait for good: a daemon stuck in open() would hang
# the suite, so one still alive after 5 s is killed and the test fails.
teardown() {
	local stuck=0
	if mountpoint -q "$MNT"; then
		timeout 5 fusermount3 -u "$MNT" || timeout 5 fusermount3 -uz "$MNT"
	fi
	if [ -n "${ODBFS_PID:-}" ]; then
		ends_within 5 "$ODBFS_PID" || { kill -KILL "$ODBFS_PID"; stuck=1; }
		wait "$ODBFS_PID" 2>/dev/null || :
		ODBFS_PID=
	fi
	[ "$stuck" -eq 0 ]
}

# refused_with MESSAGE [REPO]: odbfs exits 1 within 5 s without mounting,
# its one line of error holding MESSAGE.
refused_with() {
	run timeout 5 "$ODBFS" -f "${2:-$REPO}" "$MNT" 3>&-
	if [ "$status" -ne 1 ] || [[ $output != *"$1"* ]] ||
		[ "${#lines[@]}" -ne 1 ] || mountpoint -q "$MNT"; then
		echo "wanted exit 1 and '$1', got $status: $output" >&2
		return 1
	fi
}

# ref_is NAME ID: MNT/refs/NAME is a link to commit ID.
ref_is() {
	link_is "$MNT/refs/$1" "../../commits/$2" ||
		link_is "$MNT/refs/$1" "../../../commits/$2"
}

# ref_shows NAME ID: within two seconds, MNT/refs/NAME links to ID.
ref_shows() {
	local i
	for i in $(seq 1 40); do
		ref_is "$@" 2>/dev/null && return 0
		sleep 0.05
	done
	echo "refs/$1 does not show $2: $(readlink "$MNT/refs/$1")" >&2
	return 1
}

# put_ref NAME ID: write a loose ref as git does (lock, then rename), for
# when git itself would hang on the repository.
put_ref() {
	printf '%s\n' "$2" >"$GITDIR/$1.lock"
	mv "$GITDIR/$1.lock" "$GITDIR/$1"
}

# --- FIFOs ----------------------------------------------------------------

# fifo PATH: PATH becomes a FIFO (no writer ever comes).
fifo() {
	rm -f "$1"
	mkfifo "$1"
}

@test "FIFO at mount: config, HEAD, commondir and .git refuse the mount at once, naming the file" {
	local wt wtgit

	fifo "$GITDIR/config"
	refused_with "$GITDIR/config: not a regular file"

	rm "$GITDIR/config"
	cp -a "$PRISTINE/.git/config" "$GITDIR/config"
	fifo "$GITDIR/HEAD"
	refused_with "not a git repository: $GITDIR/HEAD is not a regular file"
	rm "$GITDIR/HEAD"
	cp -a "$PRISTINE/.git/HEAD" "$GITDIR/HEAD"

	# A linked worktree: its git directory's commondir.
	wt=$BATS_TEST_TMPDIR/wt
	git -C "$REPO" worktree add -q "$wt" loose
	wtgit=$(realpath "$GITDIR/worktrees/wt")
	fifo "$wtgit/commondir"
	refused_with "$wtgit/commondir: not a regular file" "$wt"

	# A .git that is neither a directory nor a file.
	mkdir "$BATS_TEST_TMPDIR/sub"
	mkfifo "$BATS_TEST_TMPDIR/sub/.git"
	refused_with "$(realpath "$BATS_TEST_TMPDIR/sub")/.git: not a regular file" \
		"$BATS_TEST_TMPDIR/sub"
}

@test "FIFO at mount: packed-refs and alternates are left out with one log line; the rest is served as git has it" {
	fifo "$GITDIR/packed-refs"
	mkfifo "$GITDIR/objects/info/alternates"
	mount_odbfs "$REPO" "$MNT"
	[ "$(grep -c 'not a regular file: ignored' "$MNT.log")" -eq 2 ]
	grep -qF "$GITDIR/packed-refs: not a regular file: ignored" "$MNT.log"
	grep -qF "$GITDIR/objects/info/alternates: not a regular file: ignored" "$MNT.log"
	# git hangs on both FIFOs: compare with the repository before them.
	check_mount_objects "$PRISTINE" "$MNT"
	ref_is heads/loose "$(git -C "$PRISTINE" rev-parse loose)"
	# Only packed: out of view with the file.
	[ ! -e "$MNT/refs/tags/v10" ]
}

@test "packed-refs becomes a FIFO while mounted: new refs still show, and unmount ends the daemon" {
	local id

	mount_odbfs "$REPO" "$MNT"
	link_is "$MNT/refs/tags/v10" "../../tags/$(git -C "$PRISTINE" rev-parse v10)"
	[ ! -e "$GITDIR/refs/tags/v10" ]
	fifo "$GITDIR/packed-refs"
	# git update-ref would itself hang reading packed-refs.
	id=$(git -C "$PRISTINE" rev-parse main~1)
	put_ref refs/heads/new "$id"
	ref_shows heads/new "$id"
	ref_is heads/loose "$(git -C "$PRISTINE" rev-parse loose)"
	[ "$(grep -c "$GITDIR/packed-refs: not a regular file: ignored" "$MNT.log")" -eq 1 ]
	timeout 5 fusermount3 -u "$MNT"
	ends_within 3 "$ODBFS_PID"
	wait "$ODBFS_PID"
	ODBFS_PID=
}

@test "HEAD becomes a FIFO while mounted: HEAD leaves the view, new refs show, SIGTERM ends the daemon" {
	local wt=$BATS_TEST_TMPDIR/wt id

	git -C "$REPO" worktree add -q "$wt" loose
	mount_odbfs "$REPO" "$MNT"
	link_is "$MNT/HEAD" refs/heads/main
	fifo "$GITDIR/HEAD"
	# A linked worktree has its own HEAD: git works there.
	id=$(git -C "$PRISTINE" rev-parse main~2)
	timeout 5 git -C "$wt" update-ref refs/heads/from-wt "$id"
	ref_shows heads/from-wt "$id"
	[ ! -e "$MNT/HEAD" ]
	[ ! -L "$MNT/HEAD" ]
	grep -qF "$GITDIR/HEAD: not a regular file: ignored" "$MNT.log"
	check_mount_objects "$PRISTINE" "$MNT"
	# A file again: HEAD is back.
	rm "$GITDIR/HEAD"
	echo "ref: refs/heads/loose" >"$GITDIR/HEAD"
	within_a_second link_is "$MNT/HEAD" refs/heads/loose
	kill -TERM "$ODBFS_PID"
	ends_within 3 "$ODBFS_PID"
	wait "$ODBFS_PID"
	ODBFS_PID=
	run ! mountpoint -q "$MNT"
}

# --- format version and extensions ----------------------------------------

# set_format VERSION [KEY VALUE]...: config's format version and
# extensions, written with git config -f (git config -C refuses to work in
# a repository with an extension it does not know).
set_format() {
	git config -f "$GITDIR/config" core.repositoryformatversion "$1"
	shift
	while [ $# -gt 0 ]; do
		git config -f "$GITDIR/config" "extensions.$1" "$2"
		shift 2
	done
}

# both_refuse GIT_WORDS ODBFS_WORDS: git refuses the repository saying
# GIT_WORDS, and odbfs refuses it at once saying ODBFS_WORDS.
both_refuse() {
	run -128 git -C "$REPO" rev-parse --git-dir
	[[ $output == *"$1"* ]]
	refused_with "$2"
}

@test "extensions: what git refuses, odbfs refuses, with git's reason" {
	set_format 1 foo bar
	both_refuse "unknown repository extension found:" \
		"unknown repository extension found: foo"
	git config -f "$GITDIR/config" extensions.other 1
	both_refuse "unknown repository extensions found:" \
		"unknown repository extensions found: foo, other"

	cp "$PRISTINE/.git/config" "$GITDIR/config"
	set_format 0 objectFormat sha1
	both_refuse "repo version is 0, but v1-only extension found:" \
		"repo version is 0, but v1-only extension found: objectformat"

	set_format 2
	both_refuse "Expected git repo version <= 1, found 2" \
		"Expected git repo version <= 1, found 2"

	set_format 1 objectFormat SHA256
	both_refuse "invalid value for 'extensions.objectformat': 'SHA256'" \
		"invalid value for 'extensions.objectformat': 'SHA256'"
}

@test "config: a line git calls bad is refused with git's words; what git reads, odbfs reads" {
	local cfg=$GITDIR/config
	# Each of these makes git refuse the repository: a newline inside
	# quotes, an unknown escape, a name that is not one, a bad header, a
	# subsection cut by a newline. The line numbers are git's.
	for text in '[core]\nx = "a\nb"\n' '[core]\n\nx = a\\q\n' \
	    '[core]\n-x = 1\n' '[co re]\nx = 1\n' '[core]\nx y\n' \
	    'x\n[core "a\\\n"]\n' '[core]\n\trepositoryformatversion = 0 # c\n[]\n'; do
		printf "$text" >"$cfg"
		run -128 git -C "$REPO" rev-parse --git-dir
		[[ $output =~ (bad config line [0-9]+) ]]
		refused_with "${BASH_REMATCH[1]} in file $cfg"
	done
	# What git reads past a byte order mark, a continued line, quotes
	# and CRLF, odbfs reads too: here an extension git does not know.
	for text in '\xef\xbb\xbf[core]\nrepositoryformatversion = 1\n[extensions]\nfoo\n' \
	    '[core]\r\nrepositoryformatversion = \\\r\n1\r\n[extensions]\r\nfoo = "x" ; c\r\n' \
	    '[core]\nrepositoryformatversion = "1" # c\n[Extensions]\n  Foo\n'; do
		printf "$text" >"$cfg"
		both_refuse "unknown repository extension found:" \
			"unknown repository extension found: foo"
	done
	# More than 16 MiB is refused, not cut: what follows might matter.
	{
		printf '[core]\n'
		head -c $((17 << 20)) /dev/zero | tr '\0' '#'
		printf '\n[core]\nrepositoryformatversion = 1\n[extensions]\nfoo\n'
	} >"$cfg"
	refused_with "$cfg: larger than 16 MiB"
}

# include_chain N: $GITDIR/config includes i1, which includes i2, ... up
# to iN, which sets a variable.
include_chain() {
	local i
	git config -f "$GITDIR/config" include.path i1
	for i in $(seq 1 $(($1 - 1))); do
		printf '[include]\n\tpath = i%d\n' $((i + 1)) >"$GITDIR/i$i"
	done
	printf '[x]\n\ty = 1\n' >"$GITDIR/i$1"
}

@test "config: include loops and includes nested past 10 are refused, with git's reason" {
	local base=$BATS_TEST_TMPDIR/config

	cp "$GITDIR/config" "$base"
	# Itself.
	git config -f "$GITDIR/config" include.path config
	both_refuse "exceeded maximum include depth (10)" \
		"exceeded maximum include depth (10) while including $GITDIR/config from $GITDIR/config"
	# Two including each other, one by an absolute path.
	cp "$base" "$GITDIR/config"
	git config -f "$GITDIR/config" include.path a
	printf '[include]\n\tpath = b\n' >"$GITDIR/a"
	printf '[include]\n\tpath = %s/a\n' "$GITDIR" >"$GITDIR/b"
	both_refuse "exceeded maximum include depth (10)" \
		"exceeded maximum include depth (10) while including $GITDIR/a from $GITDIR/b"
	# Eleven deep, no loop.
	cp "$base" "$GITDIR/config"
	include_chain 11
	both_refuse "exceeded maximum include depth (10)" \
		"exceeded maximum include depth (10) while including $GITDIR/i11 from $GITDIR/i10"
	# A bad line in an included file; include.path without a value.
	cp "$base" "$GITDIR/config"
	git config -f "$GITDIR/config" include.path c
	printf '[x]\nbad line\n' >"$GITDIR/c"
	both_refuse "bad config line 2 in file .git/c" \
		"bad config line 2 in file $GITDIR/c"
	printf '[include]\n\tpath\n' >"$GITDIR/c"
	both_refuse "missing value for 'include.path'" \
		"missing value for 'include.path'"
}

@test "config: include.path ~nosuchuser/x, or ~/x with HOME unset, is refused as git refuses it" {
	local cfg=$GITDIR/config
	git config -f "$cfg" include.path '~nosuchuser/x'
	run -128 git -C "$REPO" rev-parse --git-dir
	[[ $output == *"could not expand include path '~nosuchuser/x'"* ]]
	[[ $output =~ (bad config line [0-9]+) ]]
	refused_with "could not expand include path '~nosuchuser/x': ${BASH_REMATCH[1]} in file $cfg"
	# ~/ from HOME, when there is one; where there is none, refused.
	git config -f "$cfg" include.path '~/not-there'
	git -C "$REPO" rev-parse --git-dir
	run -128 env -u HOME git -C "$REPO" rev-parse --git-dir
	[[ $output == *"could not expand include path '~/not-there'"* ]]
	run -1 env -u HOME timeout 5 "$ODBFS" -f "$REPO" "$MNT" 3>&-
	[[ $output == *"could not expand include path '~/not-there'"* ]]
	! mountpoint -q "$MNT"
}

@test "config: an include that is a FIFO is refused as not a regular file, a directory as one" {
	mkfifo "$GITDIR/fifo"
	git config -f "$GITDIR/config" include.path fifo
	refused_with "unable to access '$GITDIR/fifo': not a regular file"
	git config -f "$GITDIR/config" include.path "$GITDIR/refs"
	both_refuse "unable to access '$GITDIR/refs': Is a directory" \
		"unable to access '$GITDIR/refs': Is a directory"
}

@test "extensions.worktreeConfig: config.worktree is read, main and linked, and refused as git refuses it" {
	local wt=$BATS_TEST_TMPDIR/wt wtgit
	git -C "$REPO" worktree add -q "$wt" loose
	wtgit=$GITDIR/worktrees/wt
	set_format 1 worktreeConfig true
	# None yet, then a good one: mounted, as git runs.
	git -C "$REPO" rev-parse --git-dir
	mount_odbfs "$REPO" "$MNT"
	unmount_odbfs "$MNT"
	git -C "$REPO" config --worktree x.y 1
	git -C "$wt" config --worktree x.y 2
	[ -f "$GITDIR/config.worktree" ] && [ -f "$wtgit/config.worktree" ]
	mount_odbfs "$wt" "$MNT"
	unmount_odbfs "$MNT"
	# A bad line in the main one.
	echo 'bad line' >>"$GITDIR/config.worktree"
	both_refuse "bad config line 3 in file .git/config.worktree" \
		"bad config line 3 in file $GITDIR/config.worktree"
	sed -i '/bad line/d' "$GITDIR/config.worktree"
	git -C "$REPO" rev-parse --git-dir
	# A bad line reached by an include from the linked worktree's.
	echo 'bad line' >"$GITDIR/wtbad"
	git -C "$wt" config --worktree include.path ../../wtbad
	run -128 git -C "$wt" rev-parse --git-dir
	[[ $output == *"bad config line 1 in file $wtgit/../../wtbad"* ]]
	refused_with "bad config line 1 in file $wtgit/../../wtbad" "$wt"
	# The main worktree does not read the linked one's.
	mount_odbfs "$REPO" "$MNT"
	unmount_odbfs "$MNT"
	# Without the extension (false, as git reads a boolean), not read.
	git config -f "$GITDIR/config" extensions.worktreeConfig 0
	git -C "$wt" rev-parse --git-dir
	mount_odbfs "$wt" "$MNT"
	unmount_odbfs "$MNT"
	git config -f "$GITDIR/config" extensions.worktreeConfig maybe
	both_refuse "bad boolean config value 'maybe' for 'extensions.worktreeconfig'" \
		"bad boolean config value 'maybe' for 'extensions.worktreeconfig'"
}

@test "config: includes ten deep, or of a file that is not there, are mounted as git reads them" {
	include_chain 10
	git config -f "$GITDIR/config" --add include.path not-there
	git -C "$REPO" rev-parse --git-dir
	[ "$(git -C "$REPO" config x.y)" = 1 ]
	mount_odbfs "$REPO" "$MNT"
	check_mount_objects "$PRISTINE" "$MNT"
	[ ! -s "$MNT.log" ]
}

@test "extensions: refStorage=reftable is mounted, refs read from reftable/ only" {
	# As git 2.55 reads it: no reftable/tables.list, no refs, no HEAD
	# (tests/reftable.bats tests real tables).
	set_format 1 refStorage reftable
	mount_odbfs "$REPO" "$MNT"
	[ -z "$(ls "$MNT/refs")" ]
	[ ! -e "$MNT/HEAD" ] && [ ! -L "$MNT/HEAD" ]
	check_mount_objects "$PRISTINE" "$MNT"
}

@test "extensions: what git accepts in v0 and v1 is mounted, objects as git has them" {
	# Ignored in v0, as git ignores them (unknown ones too).
	set_format 0 noop 1 preciousObjects true partialClone origin \
		worktreeConfig true foo bar
	git -C "$REPO" rev-parse --git-dir
	mount_odbfs "$REPO" "$MNT"
	check_mount_objects "$REPO" "$MNT"
	unmount_odbfs "$MNT"

	# Known to git 2.55 in v1 (2.39 does not know the last two yet): the
	# objects are compared with the repository before the change.
	git config -f "$GITDIR/config" --remove-section extensions
	set_format 1 noop 1 noop-v1 1 preciousObjects true partialClone origin \
		worktreeConfig true objectFormat sha1 refStorage files \
		compatObjectFormat sha256
	mount_odbfs "$REPO" "$MNT"
	check_mount_objects "$PRISTINE" "$MNT"
	[ "$(cat "$MNT/.odbfs/format")" = sha1 ]
}

# --- HEAD as a symlink ----------------------------------------------------

@test "HEAD a symlink to a packed ref: mounted, and HEAD resolves as in git" {
	local id

	git -C "$REPO" pack-refs --all
	[ ! -e "$GITDIR/refs/heads/main" ]
	ln -sfn refs/heads/main "$GITDIR/HEAD"
	id=$(git -C "$REPO" rev-parse HEAD)
	mount_odbfs "$REPO" "$MNT"
	link_is "$MNT/HEAD" "$(git -C "$REPO" symbolic-ref HEAD)"
	[ "$(getfattr --only-values -n user.git.id "$MNT/HEAD/")" = "$id" ]
	git -C "$REPO" cat-file commit HEAD | cmp - "$MNT/HEAD/raw"
	# A symlink outside refs/: git refuses it, so does odbfs.
	cp "$PRISTINE/.git/HEAD" "$BATS_TEST_TMPDIR/HEAD.real"
	unmount_odbfs "$MNT"
	ln -sfn "$BATS_TEST_TMPDIR/HEAD.real" "$GITDIR/HEAD"
	both_refuse "not a git repository" "not a git repository"
}

# --- what a ref file holds -----------------------------------------------

# ref_id_is NAME ID: MNT/NAME resolves to commit ID.
ref_id_is() {
	[ "$(getfattr --only-values -n user.git.id "$MNT/$1/")" = "$2" ]
}

@test "ref files read as git reads them: 'ref:' without a space, white space after the name or id" {
	local main loose id name

	main=$(git -C "$REPO" rev-parse main)
	loose=$(git -C "$REPO" rev-parse loose)
	printf 'ref:refs/heads/main\n' >"$GITDIR/refs/heads/nospace"
	printf 'ref: \trefs/heads/loose \t\n' >"$GITDIR/refs/heads/trailing"
	printf '%s junk after a space\n' "$main" >"$GITDIR/refs/heads/idspace"
	printf '%s' "$loose" >"$GITDIR/refs/heads/nonewline"
	printf '%sjunk\n' "$main" >"$GITDIR/refs/heads/idjunk"
	printf 'ref:refs/heads/loose\n' >"$GITDIR/HEAD"
	mount_odbfs "$REPO" "$MNT"
	# Each ref git resolves, odbfs resolves to the same commit.
	for name in nospace trailing idspace nonewline; do
		id=$(git -C "$REPO" rev-parse --verify -q "refs/heads/$name")
		[ -n "$id" ]
		ref_id_is "refs/heads/$name" "$id"
	done
	[ "$(git -C "$REPO" rev-parse refs/heads/nospace)" = "$main" ]
	[ "$(git -C "$REPO" rev-parse refs/heads/trailing)" = "$loose" ]
	# What git calls broken, odbfs does not show.
	! git -C "$REPO" rev-parse --verify -q refs/heads/idjunk
	[ ! -e "$MNT/refs/heads/idjunk" ]
	link_is "$MNT/HEAD" "$(git -C "$REPO" symbolic-ref HEAD)"
	ref_id_is HEAD "$loose"
}

@test "symlinked loose refs are listed and resolved as git lists and resolves them" {
	local name id

	git -C "$REPO" pack-refs --all
	# Into refs/: a symbolic ref, but git's listing follows the link
	# from its own directory and finds no file there, so leaves it out.
	ln -s refs/heads/main "$GITDIR/refs/heads/sym-packed"
	ln -s refs/heads/nosuch "$GITDIR/refs/heads/dangling"
	# Elsewhere: followed.
	git -C "$REPO" rev-parse loose >"$BATS_TEST_TMPDIR/outside"
	ln -s "$BATS_TEST_TMPDIR/outside" "$GITDIR/refs/tags/followed"
	# Listed (the link resolves beside it) and read as a symbolic ref.
	mkdir -p "$GITDIR/refs/heads/refs/heads"
	git -C "$REPO" rev-parse main >"$GITDIR/refs/heads/refs/heads/loose"
	ln -s refs/heads/loose "$GITDIR/refs/heads/sym-loose"
	mount_odbfs "$REPO" "$MNT"
	for name in heads tags heads/refs/heads; do
		[ "$(LC_ALL=C ls "$MNT/refs/$name" | tr '\n' ' ')" = \
			"$(git -C "$REPO" for-each-ref --format='%(refname)' "refs/$name" 2>/dev/null |
			sed "s|^refs/$name/||; s|/.*||" | LC_ALL=C sort -u | tr '\n' ' ')" ]
	done
	for name in tags/followed heads/sym-loose heads/refs/heads/loose; do
		id=$(git -C "$REPO" rev-parse --verify -q "refs/$name")
		ref_id_is "refs/$name" "$id"
	done
	# sym-loose is git's symbolic ref to refs/heads/loose, not the file.
	[ "$(git -C "$REPO" rev-parse refs/heads/sym-loose)" = "$(git -C "$REPO" rev-parse loose)" ]
	[ ! -e "$MNT/refs/heads/sym-packed" ] && [ ! -e "$MNT/refs/heads/dangling" ]
}

# --- writes after a remount read-write ------------------------------------

@test "after mount -o remount,rw every write fails with EROFS, from the daemon" {
	local id obj cmd

	[ "$(id -u)" -eq 0 ] || skip "remounting needs root"
	id=$(git -C "$REPO" rev-parse HEAD)
	obj=$MNT/objects/$id
	mount_odbfs "$REPO" "$MNT"
	# -i: no mount.fuse helper, which would try to start a new daemon.
	mount -i -o remount,rw "$MNT"
	findmnt -no OPTIONS "$MNT" | grep -q '^rw,'
	# A read first: with no-open, later opens never reach the daemon.
	git -C "$REPO" cat-file commit "$id" | cmp - "$obj"
	for cmd in "touch $MNT/new" "touch $obj" "rm $obj" "mv $obj $MNT/x" \
		"chmod 600 $obj" "chown 1 $obj" "mkdir $MNT/d" "rmdir $MNT/refs" \
		"ln -s a $MNT/s" "ln $obj $MNT/l" "truncate -s 0 $obj" \
		"setfattr -n user.x -v 1 $obj" "setfattr -x user.git.id $obj" \
		"mknod $MNT/p p" "fallocate -l 10 $obj" \
		"bash -c 'echo x >>$obj'" "bash -c 'echo x >$MNT/new'" \
		"bash -c 'echo x >$obj'" "bash -c ': >$obj'"; do
		run eval "$cmd"
		if [ "$status" -eq 0 ] || [[ $output != *"Read-only file system"* ]]; then
			echo "$cmd: status $status: $output" >&2
			return 1
		fi
	done
	# Nothing changed, not even in the kernel's cache: an open with
	# O_TRUNC that the daemon never saw must not leave it thinking the
	# file is empty.
	git -C "$REPO" cat-file commit "$id" | cmp - "$obj"
	[ "$(stat -c %s "$obj")" -eq "$(git -C "$REPO" cat-file -s "$id")" ]
	[ "$(getfattr --only-values -n user.git.id "$obj")" = "$id" ]
	[ ! -e "$MNT/new" ]
	[ -d "$MNT/refs" ]
}

# --- tree entries with absurd modes ---------------------------------------

log_mark() {
	LOG_MARK=$(wc -l <"$MNT.log")
}

# bad_mode_logged TREE NAME OFFSET: since log_mark, one log line, which
# names the tree, the entry and its offset.
bad_mode_logged() {
	local new
	new=$(tail -n +$((LOG_MARK + 1)) "$MNT.log")
	if [ "$(printf '%s' "$new" | grep -c '')" -ne 1 ] ||
		[[ $new != *"tree $1: entry $2 at offset $3 has a mode git never writes"* ]]; then
		echo "log since the mark: $new" >&2
		return 1
	fi
}

@test "a tree entry with mode 9999999999999999999999: EIO and one log line, for ls, stat and tar" {
	local blob tree only
	blob=$(git -C "$REPO" rev-parse HEAD:README)
	# "100644 good" then the absurd entry; and a tree of that entry alone.
	tree=$(python3 -c '
import sys
b = bytes.fromhex(sys.argv[1])
sys.stdout.buffer.write(b"100644 good\0" + b + b"9999999999999999999999 zbad\0" + b)
' "$blob" | git -C "$REPO" hash-object -t tree --literally -w --stdin)
	only=$(python3 -c '
import sys
b = bytes.fromhex(sys.argv[1])
sys.stdout.buffer.write(b"9999999999999999999999 bad\0" + b)
' "$blob" | git -C "$REPO" hash-object -t tree --literally -w --stdin)
	# git refuses the mode too.
	run -128 git -C "$REPO" ls-tree "$tree"
	mount_odbfs "$REPO" "$MNT"

	log_mark
	run ls "$MNT/trees/$tree"
	[ "$status" -ne 0 ]
	[[ $output == *"Input/output error"* ]]
	[ "$(echo "$output" | grep -v 'Input/output error')" = good ]
	bad_mode_logged "$tree" zbad $((12 + 20 + 23))
	git -C "$REPO" cat-file blob "$blob" | cmp - "$MNT/trees/$tree/good"

	log_mark
	run stat "$MNT/trees/$tree/zbad"
	[ "$status" -ne 0 ]
	[[ $output == *"Input/output error"* ]]
	bad_mode_logged "$tree" zbad $((12 + 20 + 23))

	log_mark
	run ls -A "$MNT/trees/$only"
	[ "$status" -ne 0 ]
	[[ $output == *"Input/output error"* ]]
	bad_mode_logged "$only" bad 23

	log_mark
	run tar -cf "$BATS_TEST_TMPDIR/t.tar" -C "$MNT/trees/$only" .
	[ "$status" -ne 0 ]
	[[ $output == *"Input/output error"* ]]
	bad_mode_logged "$only" bad 23
	kill -0 "$ODBFS_PID"
}

# reads_as_git ID: MNT/objects/ID holds what git cat-file prints for ID.
reads_as_git() {
	git -C "$REPO" cat-file -p "$1" | cmp -s - "$MNT/objects/$1"
}

# packs_are N: the mount serves N packs.
packs_are() {
	[ "$(stat_of "$MNT" packs)" -eq "$1" ]
}

@test "objects/pack replaced by a symlink to a directory while mounted: its packs serve again" {
	local id
	id=$(git -C "$REPO" rev-parse HEAD~3:README)
	mount_odbfs "$REPO" "$MNT"
	[ "$(stat_of "$MNT" packs)" -eq 1 ]
	mv "$GITDIR/objects/pack" "$BATS_TEST_TMPDIR/pack"
	ln -s "$BATS_TEST_TMPDIR/pack" "$GITDIR/objects/pack"
	within_a_second packs_are 1
	reads_as_git "$id"
	# The directory it points to is watched: a new pack there shows.
	add_commits "$REPO" 12 12
	git -C "$REPO" repack -dq
	within_a_second packs_are 2
	reads_as_git "$(git -C "$REPO" rev-parse HEAD:README)"
	check_mount_objects "$REPO" "$MNT"
}

@test "objects/pack replaced by a symlink to a file while mounted: one log line naming it" {
	mount_odbfs "$REPO" "$MNT"
	echo not a directory >"$BATS_TEST_TMPDIR/file"
	log_mark
	mv "$GITDIR/objects/pack" "$BATS_TEST_TMPDIR/pack"
	ln -s "$BATS_TEST_TMPDIR/file" "$GITDIR/objects/pack"
	within_a_second packs_are 0
	sleep 0.2
	one_log_line "$GITDIR/objects/pack" "Not a directory"
	# Back as it was: served again.
	rm "$GITDIR/objects/pack"
	mv "$BATS_TEST_TMPDIR/pack" "$GITDIR/objects/pack"
	within_a_second packs_are 1
	check_mount_objects "$REPO" "$MNT"
}

@test "broken refs, malformed packed-refs lines and bad names: one log line each, not one per reload" {
	local main i
	main=$(git -C "$REPO" rev-parse main)
	printf 'not a ref at all\n' >"$GITDIR/refs/heads/broken"
	printf 'ref: refs/heads/..bad\n' >"$GITDIR/refs/heads/badtarget"
	printf '%s\n' "$main" >"$GITDIR/refs/heads/bad..name"
	{
		echo "xyz refs/heads/junk-line"
		echo "$main"
		echo "$main refs/heads/also..bad"
	} >>"$GITDIR/packed-refs"
	# git calls them broken too, and resolves the good ones.
	! git -C "$REPO" rev-parse --verify -q refs/heads/broken
	mount_odbfs "$REPO" "$MNT"
	ref_is heads/main "$main"
	[ ! -e "$MNT/refs/heads/broken" ] && [ ! -e "$MNT/refs/heads/badtarget" ]
	# Reloads: a ref moved three times.
	for i in 1 2 3; do
		git -C "$REPO" update-ref refs/heads/moving "$(git -C "$REPO" rev-parse "main~$i")"
		within_a_second ref_is heads/moving "$(git -C "$REPO" rev-parse "main~$i")"
	done
	logged_once "$GITDIR/refs/heads/broken: broken ref"
	logged_once "$GITDIR/refs/heads/badtarget: broken ref"
	logged_once "$GITDIR/refs/heads/bad..name: ref name not shown"
	logged_once "packed-refs: malformed line at offset $(grep -b -m1 '^xyz' "$GITDIR/packed-refs" | cut -d: -f1)"
	logged_once "packed-refs: malformed line at offset $(grep -b -x -m1 "$main" "$GITDIR/packed-refs" | cut -d: -f1)"
	logged_once "packed-refs: ref name not shown: refs/heads/also..bad"
	[ "$(wc -l <"$MNT.log")" -eq 6 ]
}

@test "packed-refs made a sparse 4 GiB file: the refs before the hole serve, the rest is left out with one log line; memory stays small" {
	local main size rss
	main=$(git -C "$REPO" rev-parse main)
	git -C "$REPO" pack-refs --all
	size=$(stat -c %s "$GITDIR/packed-refs")
	truncate -s 4G "$GITDIR/packed-refs"
	mount_odbfs "$REPO" "$MNT"
	ref_is heads/main "$main"
	logged_once "$GITDIR/packed-refs: NUL byte in the line at offset $size: the rest left out"
	# Before, the whole file was read into memory: a GiB of zeros.
	rss=$(awk '/^VmHWM/ { print $2 }' "/proc/$ODBFS_PID/status")
	echo "# daemon's peak RSS: $rss kB" >&3
	[ "$rss" -lt 100000 ]
	# A reload (a ref made) reads it again, no more. git itself stops
	# at the hole ("unterminated line"): the ref is written by hand.
	echo "$main" >"$GITDIR/refs/heads/moved"
	within_a_second ref_is heads/moved "$main"
	logged_once "$GITDIR/packed-refs: NUL byte"
}

@test "a loose ref that loops or dangles hides its packed value, as in git, with one log line" {
	local main old
	main=$(git -C "$REPO" rev-parse main)
	old=$(git -C "$REPO" rev-parse main~1)
	# Packed values for all three, then loose ones that resolve to nothing.
	for r in loopa loopb dangle; do
		git -C "$REPO" update-ref "refs/heads/$r" "$old"
	done
	git -C "$REPO" pack-refs --all
	printf 'ref: refs/heads/loopb\n' >"$GITDIR/refs/heads/loopa"
	printf 'ref: refs/heads/loopa\n' >"$GITDIR/refs/heads/loopb"
	printf 'ref: refs/heads/not-there\n' >"$GITDIR/refs/heads/dangle"
	# git lists none of them, whatever packed-refs says.
	[ -z "$(git -C "$REPO" for-each-ref --format='%(refname)' refs/heads/loopa refs/heads/loopb refs/heads/dangle 2>/dev/null)" ]
	mount_odbfs "$REPO" "$MNT"
	ref_is heads/main "$main"
	for r in loopa loopb dangle; do
		[ ! -e "$MNT/refs/heads/$r" ] && [ ! -L "$MNT/refs/heads/$r" ]
	done
	[ -z "$(ls "$MNT/refs/heads" | grep -E '^(loopa|loopb|dangle)$')" ]
	logged_once "$GITDIR/refs/heads/loopa: symbolic refs nested deeper"
	logged_once "$GITDIR/refs/heads/loopb: symbolic refs nested deeper"
	logged_once "$GITDIR/refs/heads/dangle: dangling symbolic ref: not shown"
	# Fixed, the loose value shows.
	printf '%s\n' "$main" >"$GITDIR/refs/heads/dangle"
	within_a_second ref_is heads/dangle "$main"
}
