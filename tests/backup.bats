#!/usr/bin/env bats
# Backup tools (issue 14): borg, restic, rsync (-a, -aX, -aH), tar (plain
# and --listed-incremental) and cp -a run over the mount of a real
# repository. What they restore is compared byte for byte with git
# cat-file (objects/) and with git archive's extraction (a commit's tree:
# names, modes, mtimes, symlink targets, contents); a second run, on the
# same mount and on a fresh one, must read no file it read before, by the
# tool's own counters. Inode numbers, modes under -o umask= and times are
# checked against what these tools key on.

load lib

# Python with no wrapper in front (a pyenv shim costs seconds a call).
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3

# build_repo REPO: two commits of about 300 files in nested directories,
# an executable, symlinks (to a file, to a directory, absolute, dangling),
# a submodule gitlink, one blob at several paths and in both commits,
# non-ASCII names, an empty file; the first commit packed, the second
# loose; a branch and an annotated tag. Author and committer times differ.
build_repo() {
	local repo=$1 d s f
	git init -q -b main "$repo" && git -C "$repo" config gc.auto 0 || return 1
	(
		set -e
		cd "$repo"
		export GIT_AUTHOR_DATE="1700000000 +0000"
		export GIT_COMMITTER_DATE="1700000600 +0100"
		mkdir -p dir{0..9}/sub{0..4}
		for d in 0 1 2 3 4 5 6 7 8 9; do
			for s in 0 1 2 3 4; do
				for f in 0 1 2 3 4 5; do
					printf 'file %d/%d/%d\n' "$d" "$s" "$f" >"dir$d/sub$s/f$f.txt"
				done
			done
		done
		printf '#!/bin/sh\necho hi\n' >tool.sh
		mkdir -p bin same1 same2 café
		cp tool.sh bin/run
		chmod 755 tool.sh bin/run
		echo "same bytes" >same1/a
		echo "same bytes" >same2/a
		ln -s dir0/sub0/f0.txt link
		ln -s ../dir1 same1/up
		ln -s /etc/passwd abs
		ln -s "no such/target" dangling
		echo "accents" >café/naïve.txt
		echo "kanji" >日本語.txt
		echo "spaces" >"with space.txt"
		: >empty
		seq 1 20000 >big
		git add -A
		git update-index --add --cacheinfo \
			160000,1111111111111111111111111111111111111111,vendor/sub
		git commit -q -m one
		git tag -a -m "version one" v1
		git branch side
		git repack -adq
		export GIT_AUTHOR_DATE="1700086400 +0000"
		export GIT_COMMITTER_DATE="1700090000 -0700"
		echo changed >>dir0/sub0/f0.txt
		echo new >dir9/new.txt
		git rm -q dir8/sub4/f5.txt
		chmod 755 dir1/sub1/f1.txt
		# Not add -A: that would drop the gitlink, whose directory the
		# work tree lacks.
		git add dir0 dir1 dir9
		git commit -q -m two
	)
}

setup_file() {
	export REPO=$BATS_FILE_TMPDIR/repo
	build_repo "$REPO"
	export C1 C2
	C1=$(git -C "$REPO" rev-parse main~1)
	C2=$(git -C "$REPO" rev-parse main)
	# git archive's extraction of each commit, with git's own modes.
	local c
	for c in "$C1" "$C2"; do
		mkdir -p "$BATS_FILE_TMPDIR/archive/$c"
		git -C "$REPO" -c tar.umask=022 archive --prefix=tree/ "$c" |
			tar -x -C "$BATS_FILE_TMPDIR/archive/$c"
	done
	# objects/ carries the repository's birth second with a part of a
	# second of its own as ctime: on a fast machine a first backup could
	# start within that second, and tar --listed-incremental would then
	# take a ctime after its start for a change. A real repository is
	# older than its backup.
	local birth
	birth=$(stat -c %W "$REPO/.git")
	[[ $birth =~ ^[0-9]+$ ]] || birth=0
	while [ "$(date +%s)" -le "$((birth + 1))" ]; do sleep 0.2; done
}

setup() {
	MNT=$BATS_TEST_TMPDIR/mnt
	T=$BATS_TEST_TMPDIR
	NOBODY_DIR=
}

teardown() {
	unmount_odbfs "$MNT"
	local h
	for h in "$T"/hold*; do
		mountpoint -q "$h" && fusermount3 -u "$h"
	done
	if [ -n "$NOBODY_DIR" ]; then
		chmod -R u+w "$NOBODY_DIR" 2>/dev/null
		rm -rf "$NOBODY_DIR"
	fi
}

# manifest DIR: one line per entry of DIR and below, DIR itself as '.':
# name, type, permission bits, mtime in ns, then the size and a hash of
# the contents of a file or the target of a symlink. Any error fails.
manifest() {
	"$PY" - "$1" <<'EOF'
import hashlib, os, stat, sys
root = os.fsencode(sys.argv[1])
rows = []
def entry(rel, p):
    st = os.lstat(p)
    m = st.st_mode
    if stat.S_ISREG(m):
        with open(p, 'rb') as f:
            d = '%d:%s' % (st.st_size, hashlib.sha256(f.read()).hexdigest()[:20])
        t = 'f'
    elif stat.S_ISLNK(m):
        t, d = 'l', ascii(os.fsdecode(os.readlink(p)))
    elif stat.S_ISDIR(m):
        t, d = 'd', '-'
    else:
        t, d = '?', '-'
    rows.append((rel, t, stat.S_IMODE(m), st.st_mtime_ns, d))
def fail(e):
    raise e
entry(b'.', root)
for dp, dns, fns in os.walk(root, onerror=fail):
    for n in dns + fns:
        p = os.path.join(dp, n)
        entry(os.path.relpath(p, root), p)
for rel, t, mode, mt, d in sorted(rows):
    print(ascii(os.fsdecode(rel)), t, '%04o' % mode, mt, d)
EOF
}

# same_tree A B: the manifests of A and B are equal; the difference is
# shown otherwise.
same_tree() {
	manifest "$1" >"$T/manifest.a" || return 1
	manifest "$2" >"$T/manifest.b" || return 1
	[ "$(wc -l <"$T/manifest.a")" -gt 1 ] || { echo "empty: $1" >&2; return 1; }
	diff -u "$T/manifest.a" "$T/manifest.b" >"$T/manifest.diff" && return 0
	echo "$1 and $2 differ ($(grep -c '^[-+][^-+]' "$T/manifest.diff") lines):" >&2
	head -40 "$T/manifest.diff" >&2
	return 1
}

# same_as_archive DIR COMMIT: DIR is what git archive extracts for COMMIT.
same_as_archive() {
	same_tree "$BATS_FILE_TMPDIR/archive/$2/tree" "$1"
}

# objects_copy_ok DIR: DIR holds xx/ID for every object of REPO and
# nothing else, each byte for byte as git cat-file prints it.
objects_copy_ok() {
	"$PY" - "$REPO" "$1" <<'EOF'
import os, subprocess, sys
repo, root = sys.argv[1], sys.argv[2]
ids = subprocess.run(['git', '-C', repo, 'cat-file', '--batch-all-objects',
                      '--batch-check=%(objectname)'], check=True,
                     capture_output=True, text=True).stdout.split()
found, bad = {}, 0
def fail(e):
    raise e
for dp, dns, fns in os.walk(root, onerror=fail):
    for n in fns:
        p = os.path.join(dp, n)
        if os.path.basename(dp) != n[:2] or os.path.islink(p):
            print('unexpected:', p); bad += 1
        found[n] = p
if set(found) != set(ids):
    print('missing:', sorted(set(ids) - set(found))[:5],
          'extra:', sorted(set(found) - set(ids))[:5]); bad += 1
batch = subprocess.run(['git', '-C', repo, 'cat-file', '--batch'], check=True,
                       input=''.join(i + '\n' for i in ids).encode(),
                       capture_output=True).stdout
pos = 0
for i in ids:
    nl = batch.index(b'\n', pos)
    oid, typ, size = batch[pos:nl].split()
    size = int(size)
    body = batch[nl + 1:nl + 1 + size]
    pos = nl + 1 + size + 1
    if i in found:
        with open(found[i], 'rb') as f:
            if f.read() != body:
                print('content differs:', found[i]); bad += 1
print(len(ids), 'objects,', bad, 'problems')
sys.exit(1 if bad or not ids else 0)
EOF
}

# copy_ok DIR: DIR is a copy of the mount's objects/ (every object as git
# cat-file), of both commits' trees (as git archive), and of refs/ and
# HEAD when they were copied (as the mount shows them).
copy_ok() {
	local dir=$1
	objects_copy_ok "$dir/objects" &&
		same_as_archive "$dir/commits/$C1/tree" "$C1" &&
		same_as_archive "$dir/commits/$C2/tree" "$C2" || return 1
	if [ -e "$dir/refs" ]; then
		same_tree "$MNT/refs" "$dir/refs" || return 1
		[ "$(readlink "$dir/HEAD")" = "$(readlink "$MNT/HEAD")" ] || return 1
	fi
}

# mount_it [options]: mount REPO on MNT without .odbfs/ (a file whose
# content changes at every read, which no backup should hold).
mount_it() {
	mount_odbfs "$REPO" "$MNT" -o nometa "$@"
}

# remount [options]: unmount MNT and mount it afresh, with a st_dev of
# its own, as after a reboot: the kernel gives a FUSE mount the lowest
# free device number (no file system chooses it), so other mounts hold
# the numbers freed until the new mount has another one.
remount() {
	local dev i holds=()
	dev=$(stat -c %d "$MNT")
	for i in 1 2 3 4 5; do
		unmount_odbfs "$MNT"
		[ "$ODBFS_STATUS" -eq 0 ]
		mount_odbfs "$REPO" "$T/hold$i" -o nometa
		holds+=("$ODBFS_PID")
		mount_it "$@"
		[ "$(stat -c %d "$MNT")" = "$dev" ] || break
	done
	for i in "${!holds[@]}"; do
		fusermount3 -u "$T/hold$((i + 1))"
		wait "${holds[$i]}" || :
	done
	echo "# remounted: st_dev $dev, now $(stat -c %d "$MNT")" >&3
	[ "$(stat -c %d "$MNT")" != "$dev" ]
}

# SOURCES: what every tool backs up: the mount's root (objects/, refs/,
# HEAD) and the trees of both commits.
sources() {
	# The root holds objects/, refs/ and commits/'s links to by-id/,
	# which it does not list: each commit is named, and the copy's
	# commits/<id> links lead to it, as the mount's do.
	SOURCES=("$MNT" "$MNT/by-id/$C1" "$MNT/by-id/$C2")
}

# regular_files PATH...: how many regular files a walk of PATH... meets.
regular_files() {
	find "$@" -type f | wc -l
}

# newest_ctime PATH...: the regular file(s) of a walk of PATH... with the
# newest ctime, one a line.
newest_ctime() {
	"$PY" - "$@" <<'EOF'
import os, stat, sys
best, paths = -1, []
for top in sys.argv[1:]:
    for dp, dns, fns in os.walk(top):
        for n in fns:
            p = os.path.join(dp, n)
            st = os.lstat(p)
            if not stat.S_ISREG(st.st_mode):
                continue
            if st.st_ctime_ns > best:
                best, paths = st.st_ctime_ns, [p]
            elif st.st_ctime_ns == best:
                paths.append(p)
print('\n'.join(paths))
EOF
}

# as_nobody CMD...: run CMD as an unprivileged user (ourselves if we are
# not root).
as_nobody() {
	if [ "$(id -u)" -eq 0 ]; then
		setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"
	else
		"$@"
	fi
}

# nobody_dir: a directory an unprivileged user can reach and write, in
# $NOBODY_DIR (the bats temporary directories are private to root).
nobody_dir() {
	NOBODY_DIR=$(mktemp -d /tmp/odbfs-backup.XXXXXX)
	chmod 0755 "$NOBODY_DIR"
	if [ "$(id -u)" -eq 0 ]; then
		id nobody >/dev/null 2>&1 && getent group nogroup >/dev/null ||
			skip "no user nobody or group nogroup"
		command -v setpriv >/dev/null || skip "no setpriv"
		chown nobody:nogroup "$NOBODY_DIR"
	fi
}

# removable_by_user DIR: a copy made by root, handed to an unprivileged
# user with its modes unchanged, can be deleted by that user.
removable_by_user() {
	local dir=$1
	[ "$(id -u)" -ne 0 ] || chown -hR nobody:nogroup "$dir"
	as_nobody rm -rf "$dir" 2>"$T/rm.err" ||
		{ echo "rm -rf failed ($(grep -c '' "$T/rm.err") errors):" >&2; head -5 "$T/rm.err" >&2; }
	[ ! -e "$dir" ]
}

# ---------------------------------------------------------------- borg

# borg_create NAME: back up SOURCES into archive NAME; the files borg
# read (status A, M, C or E) are left in $T/borg.read.
borg_create() {
	borg create --list --filter=AMCE "${BORG_FILES_CACHE_ARGS[@]}" "::$1" \
		"${SOURCES[@]}" >"$T/borg.out" 2>&1 ||
		{ cat "$T/borg.out" >&2; return 1; }
	grep -E '^[AMCE] ' "$T/borg.out" | cut -c3- >"$T/borg.read" || :
}

# borg_read_at_most_newest: the run just made read at most one file, the
# one of newest ctime (borg/cache.py Cache.commit keeps in its files
# cache only the files whose ctime is below the newest one of the run, so
# that file is read at every run, whatever the file system).
borg_read_at_most_newest() {
	local n newest
	n=$(grep -c '' "$T/borg.read" || :)
	echo "# borg read $n file(s): $(head -3 "$T/borg.read" | tr '\n' ' ')" >&3
	if [ "$n" -gt 1 ]; then
		echo "borg read $n files again, wanted at most 1:" >&2
		head -20 "$T/borg.read" >&2
		return 1
	fi
	[ "$n" -eq 0 ] && return 0
	newest=$(newest_ctime "${SOURCES[@]}")
	if [ "$(cat "$T/borg.read")" != "$newest" ]; then
		echo "borg read $(cat "$T/borg.read"), not the newest by ctime: $newest" >&2
		return 1
	fi
}

@test "borg: restores objects and trees exactly, and a second run reads at most the newest file, after a remount too" {
	command -v borg >/dev/null || skip "no borg"
	export BORG_BASE_DIR=$T/borgbase BORG_REPO=$T/borg BORG_PASSPHRASE=
	export BORG_UNKNOWN_UNENCRYPTED_REPO_ACCESS_IS_OK=yes
	borg init --encryption=none >/dev/null 2>&1
	mount_it
	sources
	borg_create a
	[ "$(grep -c '' "$T/borg.read")" -eq "$(regular_files "${SOURCES[@]}")" ]
	mkdir "$T/restore" && (cd "$T/restore" && borg extract ::a)
	copy_ok "$T/restore$MNT"
	borg_create b
	borg_read_at_most_newest
	remount
	borg_create c
	borg_read_at_most_newest
}

@test "borg --files-cache=mtime,size: a second run over objects/ reads at most one object" {
	command -v borg >/dev/null || skip "no borg"
	export BORG_BASE_DIR=$T/borgbase BORG_REPO=$T/borg BORG_PASSPHRASE=
	export BORG_UNKNOWN_UNENCRYPTED_REPO_ACCESS_IS_OK=yes
	borg init --encryption=none >/dev/null 2>&1
	mount_it
	# objects/ has no commit time to keep whole: its mtimes differ by
	# file as its ctimes do, so borg's mtime mode forgets one file too.
	SOURCES=("$MNT/objects")
	BORG_FILES_CACHE_ARGS=(--files-cache=mtime,size)
	borg_create a
	[ "$(grep -c '' "$T/borg.read")" -eq "$(regular_files "${SOURCES[@]}")" ]
	borg_create b
	[ "$(grep -c '' "$T/borg.read")" -le 1 ]
}

# -------------------------------------------------------------- restic

# restic_backup: back up SOURCES; "new changed unmodified" in $FILES.
restic_backup() {
	restic backup --host odbfs-test "${SOURCES[@]}" >"$T/restic.out" 2>&1 ||
		{ cat "$T/restic.out" >&2; return 1; }
	FILES=$(awk '$1 == "Files:" { print $2, $4, $6 }' "$T/restic.out")
	echo "# restic files new/changed/unmodified: $FILES" >&3
}

@test "restic: restores objects and trees exactly, and a second run finds every file unmodified, after a remount too" {
	command -v restic >/dev/null || skip "no restic"
	export RESTIC_REPOSITORY=$T/restic RESTIC_PASSWORD=odbfs
	export RESTIC_CACHE_DIR=$T/restic-cache
	restic init -q
	mount_it
	sources
	n=$(regular_files "${SOURCES[@]}")
	restic_backup
	[ "$FILES" = "$n 0 0" ]
	restic restore -q latest --target "$T/restore"
	copy_ok "$T/restore$MNT"
	restic_backup
	[ "$FILES" = "0 0 $n" ]
	remount
	restic_backup
	[ "$FILES" = "0 0 $n" ]
}

@test "borg and restic of HEAD/tree or commits/<id>/tree store the tree's files, not a link" {
	command -v borg >/dev/null || skip "no borg"
	command -v restic >/dev/null || skip "no restic"
	export BORG_BASE_DIR=$T/borgbase BORG_REPO=$T/borg BORG_PASSPHRASE=
	export BORG_UNKNOWN_UNENCRYPTED_REPO_ACCESS_IS_OK=yes
	export RESTIC_REPOSITORY=$T/restic RESTIC_PASSWORD=odbfs
	export RESTIC_CACHE_DIR=$T/restic-cache
	borg init --encryption=none >/dev/null 2>&1
	restic init -q
	mount_it
	SOURCES=("$MNT/HEAD/tree" "$MNT/commits/$C1/tree")
	borg_create t
	mkdir "$T/borg-out" && (cd "$T/borg-out" && borg extract ::t)
	restic_backup
	restic restore -q latest --target "$T/restic-out"
	for out in "$T/borg-out" "$T/restic-out"; do
		[ -d "$out$MNT/HEAD/tree" ] && [ ! -L "$out$MNT/HEAD/tree" ]
		same_as_archive "$out$MNT/HEAD/tree" "$C2"
		same_as_archive "$out$MNT/commits/$C1/tree" "$C1"
	done
}

# --------------------------------------------------------------- rsync

# rsync_run OPTIONS...: copy SOURCES (with their paths from the mount's
# root) into $T/copy; how many regular files were transferred is left in
# $SENT.
rsync_run() {
	(cd "$MNT" && rsync "$@" --stats -R ./ "by-id/$C1" "by-id/$C2" "$T/copy/") \
		>"$T/rsync.out" 2>&1 || { cat "$T/rsync.out" >&2; return 1; }
	SENT=$(awk -F': ' '/^Number of regular files transferred/ { gsub(",", "", $2); print $2 }' "$T/rsync.out")
	echo "# rsync $*: $SENT regular files transferred" >&3
	[ -n "$SENT" ]
}

# rsync_test OPTIONS...: a first run copies everything exactly, a second
# one and one after a remount transfer no file.
rsync_test() {
	mount_it
	sources
	rsync_run "$@"
	[ "$SENT" -eq "$(regular_files "${SOURCES[@]}")" ]
	copy_ok "$T/copy"
	rsync_run "$@"
	[ "$SENT" -eq 0 ]
	remount
	rsync_run "$@"
	[ "$SENT" -eq 0 ]
}

@test "rsync -a: copies exactly, a second run transfers no file, after a remount too" {
	rsync_test -a
}

@test "rsync -aX: exits 0 on trees with symlinks and refs, keeps user.git.*, transfers nothing the second time" {
	touch "$T/x" && setfattr -n user.probe -v 1 "$T/x" 2>/dev/null ||
		skip "no user.* attributes where the copy goes"
	# rsync_run fails on any non-zero exit (23 when an attribute listed on
	# a symlink cannot be read).
	rsync_test -aX
	id=$(git -C "$REPO" rev-parse "$C2:dir0/sub0/f0.txt")
	[ "$(getfattr --only-values -n user.git.id "$T/copy/commits/$C2/tree/dir0/sub0/f0.txt")" = "$id" ]
	[ "$(getfattr --only-values -n user.git.mode "$T/copy/commits/$C2/tree/tool.sh")" = 100755 ]
}

@test "rsync -aH: makes no hard link of distinct files, transfers nothing the second time" {
	rsync_test -aH
	# Every file of the copy is its own file: one blob at two paths or in
	# two commits is not one file.
	[ -z "$(find "$T/copy" -type f -links +1 | head -5)" ]
	! [ "$T/copy/commits/$C1/tree/same1/a" -ef "$T/copy/commits/$C1/tree/same2/a" ]
	! [ "$T/copy/commits/$C1/tree/dir5/sub4/f5.txt" -ef "$T/copy/commits/$C2/tree/dir5/sub4/f5.txt" ]
}

@test "a copy by rsync -a or cp -a can be deleted by an unprivileged user" {
	mount_it
	nobody_dir
	mkdir "$NOBODY_DIR/rsync" "$NOBODY_DIR/cp"
	(cd "$MNT" && rsync -aR ./ "commits/$C2/tree" "$NOBODY_DIR/rsync/")
	(cd "$MNT" && cp -a --parents objects refs HEAD "commits/$C2/tree" "$NOBODY_DIR/cp/")
	removable_by_user "$NOBODY_DIR/rsync"
	removable_by_user "$NOBODY_DIR/cp"
}

# ----------------------------------------------------------------- tar

# tar_create ARCHIVE [OPTIONS...]: archive SOURCES, with their paths from
# the mount's root.
tar_create() {
	local out=$1
	shift
	tar -c "$@" -f "$out" -C "$MNT" objects refs HEAD \
		"commits/$C1/tree" "commits/$C2/tree"
}

@test "tar: an archive of the mount extracts exactly" {
	mount_it
	tar_create "$T/a.tar"
	mkdir "$T/copy"
	tar -x -f "$T/a.tar" -C "$T/copy"
	copy_ok "$T/copy"
}

# tar_files ARCHIVE: how many regular files ARCHIVE holds, with their
# contents or as hard links to another.
tar_files() {
	tar -tvf "$1" | grep -c '^[-h]' || :
}

@test "tar --listed-incremental: a level 1 archive holds no file, after a remount too" {
	mount_it
	tar_create "$T/l0.tar" --listed-incremental="$T/snap0"
	[ "$(tar_files "$T/l0.tar")" -eq "$(regular_files "$MNT/objects" "$MNT/commits/$C1/tree" "$MNT/commits/$C2/tree")" ]
	cp "$T/snap0" "$T/snap1"
	tar_create "$T/l1.tar" --listed-incremental="$T/snap1"
	echo "# level 1: $(tar_files "$T/l1.tar") files, $(stat -c %s "$T/l1.tar") bytes" >&3
	[ "$(tar_files "$T/l1.tar")" -eq 0 ]
	remount
	cp "$T/snap0" "$T/snap2"
	# A fresh FUSE mount gets a new device number from the kernel, which
	# no file system chooses: tar must be told not to key on it.
	tar_create "$T/l2.tar" --listed-incremental="$T/snap2" --no-check-device
	echo "# level 1 after remount: $(tar_files "$T/l2.tar") files" >&3
	[ "$(tar_files "$T/l2.tar")" -eq 0 ]
	# Both levels extracted in turn give the whole copy.
	mkdir "$T/copy"
	tar -x -f "$T/l0.tar" -C "$T/copy" --listed-incremental=/dev/null
	tar -x -f "$T/l2.tar" -C "$T/copy" --listed-incremental=/dev/null
	copy_ok "$T/copy"
}

# ----------------------------------------------------------------- cp

@test "cp -a: copies objects, refs and trees exactly" {
	mount_it
	mkdir "$T/copy"
	(cd "$MNT" && cp -a --parents objects refs HEAD "commits/$C1/tree" "commits/$C2/tree" "$T/copy/")
	copy_ok "$T/copy"
}

# -------------------------------------------------------- the mount itself

@test "a commit's tree is git archive's extraction: names, modes, mtimes, symlinks, contents" {
	mount_it
	same_as_archive "$MNT/commits/$C1/tree" "$C1"
	same_as_archive "$MNT/commits/$C2/tree" "$C2"
	objects_copy_ok "$MNT/objects"
}

@test "os.walk over a tree meets exactly the paths git ls-tree -r -t shows" {
	mount_it
	for c in "$C1" "$C2"; do
		git -C "$REPO" ls-tree -r -t -z --name-only "$c" | tr '\0' '\n' | LC_ALL=C sort >"$T/want"
		"$PY" - "$MNT/commits/$c/tree" <<-'EOF' | LC_ALL=C sort >"$T/got"
		import os, sys
		root = os.fsencode(sys.argv[1])
		def fail(e):
		    raise e
		for dp, dns, fns in os.walk(root, onerror=fail):
		    for n in dns + fns:
		        sys.stdout.buffer.write(os.path.relpath(os.path.join(dp, n), root) + b'\n')
		EOF
		[ "$(wc -l <"$T/want")" -gt 300 ]
		diff -u "$T/want" "$T/got"
	done
}

@test "one inode number per path: the same blob at two paths or in two commits is two files" {
	mount_it
	t1=$MNT/commits/$C1/tree t2=$MNT/commits/$C2/tree
	[ "$(git -C "$REPO" rev-parse "$C1:same1/a")" = "$(git -C "$REPO" rev-parse "$C1:same2/a")" ]
	[ "$(git -C "$REPO" rev-parse "$C1:dir5/sub4/f5.txt")" = "$(git -C "$REPO" rev-parse "$C2:dir5/sub4/f5.txt")" ]
	[ "$(find "$t1" -samefile "$t1/same1/a")" = "$t1/same1/a" ]
	[ "$(find "$t1" "$t2" -samefile "$t2/dir5/sub4/f5.txt")" = "$t2/dir5/sub4/f5.txt" ]
	[ "$(find "$t1" "$t2" -samefile "$t1/tool.sh")" = "$t1/tool.sh" ]
	"$PY" - "$t1" "$t2" "$MNT/objects/$(git -C "$REPO" rev-parse "$C1:same1/a")" <<-'EOF'
	import os, sys
	t1, t2, obj = sys.argv[1], sys.argv[2], sys.argv[3]
	pairs = [(t1 + '/same1/a', t1 + '/same2/a'),
	         (t1 + '/same1/a', obj),
	         (t1 + '/tool.sh', t1 + '/bin/run'),
	         (t1 + '/dir5/sub4/f5.txt', t2 + '/dir5/sub4/f5.txt'),
	         (t1 + '/same1', t2 + '/same1'),
	         (t1 + '/link', t2 + '/link')]
	for a, b in pairs:
	    sa, sb = os.lstat(a), os.lstat(b)
	    assert (sa.st_dev, sa.st_ino) != (sb.st_dev, sb.st_ino), (a, b)
	    if not os.path.islink(a):
	        assert not os.path.samefile(a, b), (a, b)
	# No two paths of the two trees share an inode number.
	seen = {}
	for top in (t1, t2):
	    for dp, dns, fns in os.walk(top):
	        for n in dns + fns:
	            p = os.path.join(dp, n)
	            i = os.lstat(p).st_ino
	            assert i not in seen, (p, seen.get(i))
	            seen[i] = p
	print(len(seen), 'paths, all distinct')
	EOF
}

# dir_inodes DIR...: for every entry of every DIR, the listing's d_ino
# equals lstat's st_ino; prints "path ino" for each entry.
dir_inodes() {
	"$PY" - "$@" <<-'EOF'
	import os, sys
	bad = 0
	for d in sys.argv[1:]:
	    n = 0
	    for e in os.scandir(d):
	        n += 1
	        st = os.lstat(e.path)
	        if e.inode() != st.st_ino:
	            print('d_ino %d != st_ino %d: %s' % (e.inode(), st.st_ino, e.path), file=sys.stderr)
	            bad += 1
	        print(e.path, st.st_ino)
	    if n == 0:
	        print('empty listing:', d, file=sys.stderr)
	        bad += 1
	sys.exit(1 if bad else 0)
	EOF
}

@test "every listing's d_ino is lstat's st_ino, and inode numbers survive a remount" {
	mount_odbfs "$REPO" "$MNT"
	blob=$(git -C "$REPO" rev-parse "$C1:same1/a")
	dirs=("$MNT" "$MNT/objects" "$MNT/objects/${blob:0:2}" "$MNT/commits/$C1"
		"$MNT/commits/$C1/tree" "$MNT/commits/$C2/tree/dir3/sub2"
		"$MNT/trees/$(git -C "$REPO" rev-parse "$C1^{tree}")"
		"$MNT/refs" "$MNT/refs/heads" "$MNT/refs/tags" "$MNT/.odbfs")
	dir_inodes "${dirs[@]}" >"$T/ino1"
	unmount_odbfs "$MNT"
	mount_odbfs "$REPO" "$MNT"
	dir_inodes "${dirs[@]}" >"$T/ino2"
	diff -u "$T/ino1" "$T/ino2"
}

@test "within a tree directory, inode numbers ascend in the tree's order" {
	mount_it
	for d in "" dir3 dir3/sub2 same1; do
		git -C "$REPO" ls-tree -z --name-only "$C2" ${d:+"$d/"} | tr '\0' '\n' |
			sed 's|.*/||' >"$T/want"
		"$PY" - "$MNT/commits/$C2/tree/$d" <<-'EOF' >"$T/got"
		import os, sys
		es = list(os.scandir(sys.argv[1]))
		inos = [e.inode() for e in es]
		assert inos == sorted(inos), [(e.name, e.inode()) for e in es]
		for e in es:
		    print(e.name)
		EOF
		diff -u "$T/want" "$T/got"
	done
}

# modes PATH...: "mode name" of each PATH.
modes() {
	stat -c '%a %n' -- "$@"
}

@test "modes: git's by default, and -o umask=002 and -o umask=0222 as git archive's tar.umask" {
	t=$MNT/commits/$C2/tree
	blob=$(git -C "$REPO" rev-parse "$C1:same1/a")
	for um in default 002 0222; do
		if [ "$um" = default ]; then
			mount_odbfs "$REPO" "$MNT"
			want_um=022
		else
			mount_odbfs "$REPO" "$MNT" -o "umask=$um"
			want_um=$um
		fi
		f=$(printf '%o' $((0666 & ~0$want_um)))
		x=$(printf '%o' $((0777 & ~0$want_um)))
		# The tree as git archive gives it with the same umask.
		rm -rf "$T/arch" && mkdir "$T/arch"
		git -C "$REPO" -c "tar.umask=0$want_um" archive --prefix=tree/ "$C2" | tar -x -C "$T/arch"
		same_tree "$T/arch/tree" "$t"
		[ "$(modes "$t/tool.sh" "$t/empty" "$t/dir0" "$t/link" "$t/vendor/sub")" = \
			"$(printf '%s %s\n' "$x" "$t/tool.sh" "$f" "$t/empty" "$x" "$t/dir0" 777 "$t/link" "$x" "$t/vendor/sub")" ]
		for p in "$MNT/objects/$blob" "$MNT/objects/${blob:0:2}/$blob" "$MNT/commits/$C2/message" \
			"$MNT/commits/$C2/author"; do
			[ "$(stat -c %a "$p")" = "$f" ]
		done
		for p in "$MNT" "$MNT/objects" "$MNT/objects/${blob:0:2}" "$MNT/commits/$C2/" \
			"$MNT/refs" "$MNT/refs/heads" "$MNT/trees/$(git -C "$REPO" rev-parse "$C2^{tree}")/"; do
			[ "$(stat -c %a "$p")" = "$x" ]
		done
		[ "$(stat -c %a "$MNT/refs/heads/main" "$MNT/HEAD" "$MNT/commits/$C2/parent" "$MNT/commits/$C2")" = "$(printf '777\n777\n777\n777')" ]
		[ "$(stat -c %a "$MNT/.odbfs" "$MNT/.odbfs/stats")" = "$(printf '500\n400')" ]
		unmount_odbfs "$MNT"
	done
	# A umask of the owner's bits leaves .odbfs/ its owner's still.
	mount_odbfs "$REPO" "$MNT" -o umask=0777
	[ "$(stat -c %a "$MNT/.odbfs" "$MNT/.odbfs/stats" "$MNT/objects/$blob" "$MNT")" = \
		"$(printf '500\n400\n0\n0')" ]
	unmount_odbfs "$MNT"
	# Octal digits alone, as mount(8) options are written.
	for um in " 22" +22 "022 " 08 "" 1000; do
		run "$ODBFS" -f -o "umask=$um" "$REPO" "$MNT"
		[ "$status" -eq 1 ]
		[[ $output == *"umask="*"expected octal"* ]]
	done
}

@test "times: a commit's files carry its committer time, the rest the repository's birth; ctimes all differ" {
	mount_it
	birth=$(stat -c %W "$REPO/.git")
	[ "$birth" != "-" ] && [ "$birth" != "?" ] || birth=0
	blob=$(git -C "$REPO" rev-parse "$C1:same1/a")
	[ "$(stat -c %Y "$MNT/commits/$C2/tree/dir0/sub0/f0.txt")" = 1700090000 ]
	[ "$(stat -c %Y "$MNT/commits/$C1/tree/dir0/sub0/f0.txt")" = 1700000600 ]
	[ "$(stat -c %Y "$MNT/commits/$C1/message")" = 1700000600 ]
	[ "$(stat -c %Y "$MNT/commits/$C1/")" = 1700000600 ]
	[ "$(stat -c %X "$MNT/commits/$C1/tree/dir0")" = 1700000600 ]
	[ "$(stat -c %Y "$MNT/commits/$C1/tree/link")" = 1700000600 ]
	for p in "$MNT" "$MNT/objects" "$MNT/objects/$blob" "$MNT/objects/${blob:0:2}/$blob" \
		"$MNT/refs" "$MNT/trees/$(git -C "$REPO" rev-parse "$C2^{tree}")/dir0/sub0/f0.txt"; do
		[ "$(stat -c %Y "$p")" = "$birth" ] || { echo "$p: $(stat -c %Y "$p"), wanted $birth" >&2; false; }
		# atime is mtime
		[ "$(stat -c %X "$p")" = "$birth" ]
	done
	# Every regular file of a run has its own ctime, in its mtime's second.
	"$PY" - "$MNT/objects" "$MNT/commits/$C1/tree" "$MNT/commits/$C2/tree" <<-'EOF'
	import os, sys
	seen = {}
	for top in sys.argv[1:]:
	    for dp, dns, fns in os.walk(top):
	        for n in fns:
	            p = os.path.join(dp, n)
	            st = os.lstat(p)
	            if os.path.islink(p):
	                continue
	            assert st.st_ctime_ns // 10**9 == st.st_mtime_ns // 10**9, p
	            # A commit's files: whole seconds, as git archive gives
	            # them; objects/: ctime's part of a second too, so that
	            # borg --files-cache=mtime,size remembers them.
	            if '/objects/' in p:
	                assert st.st_mtime_ns == st.st_ctime_ns, p
	            else:
	                assert st.st_mtime_ns % 10**9 == 0, p
	            assert st.st_ctime_ns not in seen, (p, seen.get(st.st_ctime_ns))
	            seen[st.st_ctime_ns] = p
	print(len(seen), 'files, ctimes distinct')
	EOF
}

@test "directories: a tree's nlink counts its subdirectories and its size is the tree's" {
	mount_it
	for d in "" dir3 dir3/sub2 vendor same1; do
		sub=$(git -C "$REPO" ls-tree "$C2" ${d:+"$d/"} | awk '$2 == "tree" || $2 == "commit"' | grep -c '' || :)
		[ "$(stat -c %h "$MNT/commits/$C2/tree/$d")" -eq $((2 + sub)) ]
		[ "$(stat -c %s "$MNT/commits/$C2/tree/$d")" -eq "$(git -C "$REPO" cat-file -s "$C2:$d")" ]
	done
	[ "$(stat -c %h "$MNT/commits/$C2/")" -eq 3 ]
	[ "$(stat -c %h "$MNT/commits/$C2/tree/tool.sh")" -eq 1 ]
	[ "$(stat -c %h "$MNT/commits/$C2/tree/link")" -eq 1 ]
	[ "$(stat -c %h "$MNT/commits/$C2/tree/vendor/sub")" -eq 2 ]
	# The root: its five directories (no .odbfs/ here).
	[ "$(stat -c '%h %s' "$MNT")" = "7 0" ]
	# Other directories: nlink 1 ("unknown"), size 0.
	blob=$(git -C "$REPO" rev-parse "$C1:same1/a")
	for p in "$MNT/objects" "$MNT/objects/${blob:0:2}" "$MNT/refs" "$MNT/refs/heads"; do
		[ "$(stat -c '%h %s' "$p")" = "1 0" ] || { echo "$p: $(stat -c '%h %s' "$p")" >&2; false; }
	done
	# find's leaf optimisation trusts nlink: it finds every directory.
	[ "$(find "$MNT/commits/$C2/tree" -type d | wc -l)" -eq \
		"$(( $(git -C "$REPO" ls-tree -r -t "$C2" | awk '$2 == "tree" || $2 == "commit"' | wc -l) + 1 ))" ]
}
