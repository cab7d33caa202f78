#!/usr/bin/env bats
# Started by root (an fstab line with allow_other), odbfs reads a
# repository as the user who owns it: what that user's alternates, objects
# symlink or .git file name is shown only if that user could read it.
# Root is taken back to mount; once mounted the daemon holds the owner's
# ids alone (tests/privilege.bats) and its warden unmounts; .odbfs/ is
# for the mount's owner only. Needs root: two users are made if missing.

load lib

setup() {
	users_setup
}

teardown() {
	users_teardown
}

# secret_repo DIR: a repository only root can enter; prints the id of an
# object it holds that no other repository here does.
secret_repo() {
	small_repo "$1" secret >/dev/null &&
		echo "top secret" | git -C "$1" hash-object -w --stdin &&
		chmod 700 "$1"
}

# user_repo DIR SECRET: a repository of USER1 whose alternates name the
# objects of the root-only repository SECRET.
user_repo() {
	small_repo "$1" mine &&
		echo "$2/.git/objects" >"$1/.git/objects/info/alternates" &&
		chown -R "$USER1": "$1"
}

# check_own_objects USER REPO: each object USER's git sees in REPO reads
# through $MNT, as USER2 (allow_other), the same as git cat-file prints.
check_own_objects() {
	local user=$1 repo=$2 id type size n=0
	while read -r id type size; do
		n=$((n + 1))
		cmp <(git -C "$repo" cat-file "$type" "$id") \
			<(run_as "$USER2" cat "$MNT/objects/$id")
	done < <(run_as "$user" git -C "$repo" cat-file --batch-all-objects \
		--batch-check 2>/dev/null)
	[ "$n" -ge 3 ]
}

# ids_of PID Uid|Gid: real, effective, saved and file system ids.
ids_of() {
	awk -v k="$2:" '$1 == k { print $2, $3, $4, $5 }' "/proc/$1/status"
}

effective_uid() {
	ids_of "$1" Uid | cut -d' ' -f2
}

# wait_daemon: wait at most 20 s for $ODBFS_PID; its status in
# $ODBFS_STATUS.
wait_daemon() {
	local dog
	(sleep 20 && kill -KILL "$ODBFS_PID") 2>/dev/null 3>&- &
	dog=$!
	ODBFS_STATUS=0
	wait "$ODBFS_PID" || ODBFS_STATUS=$?
	ODBFS_PID=
	kill "$dog" 2>/dev/null || :
}

# fails_to_mount REPO [options...]: odbfs exits 1 without mounting; its
# message in $output.
fails_to_mount() {
	local repo=$1
	shift
	run timeout 20 "$ODBFS" -f "$@" "$repo" "$MNT" 3>&-
	echo "$output"
	[ "$status" -eq 1 ]
	! grep -qs " $MNT " /proc/mounts
}

@test "alternates into a directory only root reads show nothing from it" {
	sid=$(secret_repo "$BASE/secret")
	user_repo "$BASE/user" "$BASE/secret"
	# The object is there for root and not for the owner.
	git -C "$BASE/user" cat-file -e "$sid"
	! run_as "$USER1" git -C "$BASE/user" cat-file -e "$sid" 2>/dev/null

	mount_odbfs "$BASE/user" "$MNT" -o allow_other
	run stat "$MNT/objects/$sid"
	[ "$status" -ne 0 ]
	[[ $output == *"No such file or directory"* ]]
	! ls "$MNT/objects/${sid:0:2}" 2>/dev/null | grep -qx "$sid"
	check_own_objects "$USER1" "$BASE/user"
	# Said once, with the reason the system gave.
	logged_once "alternate $BASE/secret/.git/objects: Permission denied: ignored"
	unmount_odbfs "$MNT"
	[ "$ODBFS_STATUS" -eq 0 ]

	# Read as root, the same mount shows it: the identity hid it.
	mount_odbfs "$BASE/user" "$MNT" -o allow_other,owner=root
	cmp <(git -C "$BASE/user" cat-file blob "$sid") "$MNT/objects/$sid"
}

@test "a root-owned .git file naming a user's git directory reads as that user" {
	sid=$(secret_repo "$BASE/secret")
	user_repo "$BASE/user" "$BASE/secret"
	mkdir "$BASE/wt"
	echo "gitdir: $BASE/user/.git" >"$BASE/wt/.git"

	mount_odbfs "$BASE/wt" "$MNT" -o allow_other
	[ "$(effective_uid "$ODBFS_PID")" = "$(id -u "$USER1")" ]
	[ ! -e "$MNT/objects/$sid" ]
	check_own_objects "$USER1" "$BASE/user"
}

@test "objects/ a symlink into a directory only root reads: the mount fails" {
	small_repo "$BASE/user" mine
	mkdir -m 700 "$BASE/vault"
	mv "$BASE/user/.git/objects" "$BASE/vault/objects"
	ln -s "$BASE/vault/objects" "$BASE/user/.git/objects"
	chown -hR "$USER1": "$BASE/user"

	fails_to_mount "$BASE/user" -o allow_other
	[[ $output == *"$BASE/user: "*"(reading as user $USER1, its owner)" ]]
	# As root, the same repository mounts.
	mount_odbfs "$BASE/user" "$MNT" -o owner=root
	check_mount_objects "$BASE/user" "$MNT"
}

@test "a .git file whose gitdir: only root reads: the mount fails" {
	mkdir -m 700 "$BASE/vault"
	small_repo "$BASE/vault/repo" hidden
	mkdir "$BASE/wt"
	echo "gitdir: $BASE/vault/repo/.git" >"$BASE/wt/.git"
	chown -R "$USER1": "$BASE/wt"

	fails_to_mount "$BASE/wt" -o allow_other
	[ "$output" = "odbfs: $BASE/wt: $BASE/wt/.git names $BASE/vault/repo/.git: Permission denied (reading as user $USER1, its owner)" ]
	mount_odbfs "$BASE/wt" "$MNT" -o owner=root
	check_mount_objects "$BASE/vault/repo" "$MNT"
}

@test "a repository owned by root is read as root, as before" {
	small_repo "$BASE/repo" rooted
	mount_odbfs "$BASE/repo" "$MNT" -o allow_other
	[ "$(ids_of "$ODBFS_PID" Uid)" = "0 0 0 0" ]
	[ "$(stat -c %u:%g "$MNT/objects")" = 0:0 ]
	check_mount_objects "$BASE/repo" "$MNT"
	[ ! -s "$MNT.log" ]
}

@test "while mounted the daemon is the owner, and the owner cannot trace it" {
	sid=$(secret_repo "$BASE/secret")
	user_repo "$BASE/user" "$BASE/secret"
	mount_odbfs "$BASE/user" "$MNT" -o allow_other
	uid=$(id -u "$USER1") gid=$(id -g "$USER1")
	# Real, effective, saved and file system ids: the owner's alone.
	[ "$(ids_of "$ODBFS_PID" Uid)" = "$uid $uid $uid $uid" ]
	[ "$(ids_of "$ODBFS_PID" Gid)" = "$gid $gid $gid $gid" ]
	[ "$(stat -c %u:%g "$MNT/objects" "$MNT/HEAD" "$MNT/.odbfs")" = \
		"$(printf '%s\n' "$uid:$gid" "$uid:$gid" "$uid:$gid")" ]
	grep -q "reading as user $USER1, its owner" "$MNT.log"
	# Not dumpable: the owner cannot read its memory, nor trace it. It
	# can signal it, which ends the mount of its own repository (the
	# warden unmounts), as removing the repository would.
	! run_as "$USER1" cat "/proc/$ODBFS_PID/environ" 2>/dev/null
	if command -v gdb >/dev/null; then
		run_as "$USER1" gdb -batch -p "$ODBFS_PID" 2>&1 |
			grep -q "ptrace: Operation not permitted"
	fi
	kill -0 "$ODBFS_PID"
}

@test "with fs.suid_dumpable=1 the serving daemon is still not dumpable" {
	local old
	old=$(sysctl -n fs.suid_dumpable)
	sid=$(secret_repo "$BASE/secret")
	user_repo "$BASE/user" "$BASE/secret"
	sysctl -qw fs.suid_dumpable=1
	mount_odbfs "$BASE/user" "$MNT" -o allow_other || {
		sysctl -qw fs.suid_dumpable="$old"
		return 1
	}
	sysctl -qw fs.suid_dumpable="$old"
	# Root took back its ids to mount and gave them up again after.
	[ "$(awk '$1 == "Uid:" { print $3 }' "/proc/$ODBFS_PID/status")" = "$(id -u "$USER1")" ]
	# Not dumpable: /proc/PID/ stays root's, the owner cannot look in.
	[ "$(stat -c %u "/proc/$ODBFS_PID/fd" "/proc/$ODBFS_PID/mem" | sort -u)" = 0 ]
	! run_as "$USER1" ls "/proc/$ODBFS_PID/fd" >/dev/null 2>&1
}

@test "fusermount3 -u: the daemon reading as the owner exits 0" {
	sid=$(secret_repo "$BASE/secret")
	user_repo "$BASE/user" "$BASE/secret"
	mount_odbfs "$BASE/user" "$MNT" -o allow_other
	[ "$(effective_uid "$ODBFS_PID")" = "$(id -u "$USER1")" ]
	fusermount3 -u "$MNT"
	wait_daemon
	[ "$ODBFS_STATUS" -eq 0 ]
	! mountpoint -q "$MNT"
	! grep -qs " $MNT " /proc/mounts
}

@test "SIGTERM: the daemon reading as the owner ends, its warden unmounts as root" {
	command -v strace >/dev/null || skip "needs strace"
	sid=$(secret_repo "$BASE/secret")
	user_repo "$BASE/user" "$BASE/secret"
	# strace exits with the daemon's status; it tells how it unmounted.
	printf '#!/bin/sh\nexec strace -f -qq -o %s -e trace=umount2,execve %s "$@"\n' \
		"$BASE/trace" "$ODBFS" >"$BASE/traced"
	chmod +x "$BASE/traced"
	ODBFS=$BASE/traced mount_odbfs "$BASE/user" "$MNT" -o allow_other
	pid=$(pgrep -P "$ODBFS_PID")
	[ "$(effective_uid "$pid")" = "$(id -u "$USER1")" ]
	ls "$MNT/objects" >/dev/null
	kill -TERM "$pid"
	wait_daemon
	cat "$MNT.log" "$BASE/trace"
	[ "$ODBFS_STATUS" -eq 0 ]
	! grep -qs " $MNT " /proc/mounts
	! mountpoint -q "$MNT"
	# By umount2(2) in the warden, root, not in the daemon, and not
	# through fusermount3.
	grep -q "^[0-9]* *umount2(\"$MNT\", MNT_DETACH|UMOUNT_NOFOLLOW) = 0" "$BASE/trace"
	! grep -q "^$pid *umount2" "$BASE/trace"
	! grep -q fusermount "$BASE/trace"
}

@test ".odbfs/ is for the mount's owner and root only" {
	sid=$(secret_repo "$BASE/secret")
	user_repo "$BASE/user" "$BASE/secret"
	mount_odbfs "$BASE/user" "$MNT" -o allow_other
	[ "$(stat -c %a "$MNT/.odbfs" "$MNT/.odbfs/repository" "$MNT/.odbfs/stats" \
		"$MNT/.odbfs/format" | tr '\n' ' ')" = "500 400 400 400 " ]
	run timeout 20 su -s /bin/sh "$USER2" -c "ls -a '$MNT'; cat '$MNT/.odbfs/repository'"
	echo "$output"
	[ "$status" -ne 0 ]
	[[ $output == *".odbfs"* ]]
	[[ $output == *"$MNT/.odbfs/repository: Permission denied"* ]]
	[[ $output != *"$BASE/user"* ]]
	! run_as "$USER2" ls "$MNT/.odbfs" 2>/dev/null
	! run_as "$USER2" cat "$MNT/.odbfs/stats" 2>/dev/null
	# The owner, whose uid the files show, and root read it.
	[ "$(run_as "$USER1" cat "$MNT/.odbfs/repository")" = "$BASE/user/.git" ]
	[ "$(cat "$MNT/.odbfs/repository")" = "$BASE/user/.git" ]
	run_as "$USER1" grep -q "^lookups " "$MNT/.odbfs/stats"
}

@test "-o nometa: there is no .odbfs" {
	small_repo "$BASE/repo" rooted
	mount_odbfs "$BASE/repo" "$MNT" -o allow_other,nometa
	[ "$(LC_ALL=C ls -A "$MNT" | tr '\n' ' ')" = "HEAD commits objects refs tags trees " ]
	run stat "$MNT/.odbfs"
	[ "$status" -ne 0 ]
	[[ $output == *"No such file or directory"* ]]
	[ ! -e "$MNT/.odbfs/stats" ]
	check_mount_objects "$BASE/repo" "$MNT"
}

@test "-o nometa: /proc/mounts names no repository, only odbfs" {
	small_repo "$BASE/repo" rooted
	mount_odbfs "$BASE/repo" "$MNT" -o allow_other,nometa
	# Every user reads /proc/mounts; the source field is the fsname.
	[ "$(run_as "$USER2" awk -v m="$MNT" '$2 == m { print $1, $3 }' /proc/mounts)" = "odbfs fuse.odbfs" ]
	! grep -F "$BASE/repo" /proc/mounts
	! grep -F "$BASE/repo" /proc/self/mountinfo
	unmount_odbfs "$MNT"
	# Without nometa the repository is still named, for the admin.
	mount_odbfs "$BASE/repo" "$MNT" -o allow_other
	grep -qF "odbfs:$BASE/repo/.git $MNT " /proc/mounts
}

@test "-o owner=USER reads as USER; an unknown user fails" {
	small_repo "$BASE/repo" rooted
	mount_odbfs "$BASE/repo" "$MNT" -o allow_other,owner="$USER2"
	[ "$(effective_uid "$ODBFS_PID")" = "$(id -u "$USER2")" ]
	[ "$(stat -c %u "$MNT/objects")" = "$(id -u "$USER2")" ]
	check_mount_objects "$BASE/repo" "$MNT"
	unmount_odbfs "$MNT"
	fails_to_mount "$BASE/repo" -o owner=odbfs-no-such-user
	[ "$output" = "odbfs: owner=odbfs-no-such-user: no such user" ]
}

@test "-o owner=USER who cannot enter .git: the mount fails saying so" {
	small_repo "$BASE/repo" rooted
	chmod 700 "$BASE/repo/.git"
	fails_to_mount "$BASE/repo" -o owner="$USER2"
	[ "$output" = "odbfs: $BASE/repo: not a git repository: $BASE/repo/.git/objects: Permission denied (reading as user $USER2)" ]
}

@test "a repository whose work tree and .git two users own: the mount fails" {
	small_repo "$BASE/repo" shared
	chown "$USER1": "$BASE/repo"
	chown -R "$USER2": "$BASE/repo/.git"
	fails_to_mount "$BASE/repo"
	[ "$output" = "odbfs: $BASE/repo: owned by two users, $USER1 and $USER2: choose one with -o owner=USER" ]
}

# groups_of PID: the supplementary groups, space separated.
groups_of() {
	awk '$1 == "Groups:" { $1 = ""; print substr($0, 2) }' "/proc/$1/status"
}

# unknown_uid: a uid that the user database does not know.
unknown_uid() {
	local uid=4242
	while getent passwd "$uid" >/dev/null; do
		uid=$((uid + 1))
	done
	echo "$uid"
}

@test "an owner with no passwd entry and group root: read with nogroup, no other group" {
	uid=$(unknown_uid)
	nogroup=$(getent group nogroup | cut -d: -f3)
	[ -n "$nogroup" ] || nogroup=65534
	small_repo "$BASE/repo" nobody
	chown -R "$uid:0" "$BASE/repo"
	mount_odbfs "$BASE/repo" "$MNT" -o allow_other
	cat "$MNT.log"
	[ "$(ids_of "$ODBFS_PID" Uid)" = "$uid $uid $uid $uid" ]
	[ "$(ids_of "$ODBFS_PID" Gid)" = "$nogroup $nogroup $nogroup $nogroup" ]
	[ -z "$(groups_of "$ODBFS_PID")" ]
	[ "$(stat -c %u:%g "$MNT/objects")" = "$uid:$nogroup" ]
	check_mount_objects "$BASE/repo" "$MNT"
}

@test "an owner with no passwd entry reads with the group of its entry, no other group" {
	uid=$(unknown_uid)
	small_repo "$BASE/repo" nobody
	chown -R "$uid:$uid" "$BASE/repo"
	mount_odbfs "$BASE/repo" "$MNT" -o allow_other
	[ "$(ids_of "$ODBFS_PID" Uid)" = "$uid $uid $uid $uid" ]
	[ "$(ids_of "$ODBFS_PID" Gid)" = "$uid $uid $uid $uid" ]
	[ -z "$(groups_of "$ODBFS_PID")" ]
	grep -q "reading as user $uid, its owner" "$MNT.log"
}

# vault_repo DIR: a repository of root's in DIR/repo, DIR only root enters;
# prints the id of an object no other repository here holds.
vault_repo() {
	mkdir -m 700 "$1" &&
		small_repo "$1/repo" vault >/dev/null &&
		echo "in the vault" | git -C "$1/repo" hash-object -w --stdin
}

# user_link NAME TARGET: $BASE/home/NAME, a symlink of USER1's to TARGET,
# in a directory of USER1's.
user_link() {
	mkdir -p "$BASE/home" && chown "$USER1": "$BASE/home" &&
		ln -s "$2" "$BASE/home/$1" && chown -h "$USER1": "$BASE/home/$1"
}

@test "a root-owned .git file whose gitdir: goes through a user's symlink to root's: refused" {
	vid=$(vault_repo "$BASE/vault")
	user_link link "$BASE/vault"
	mkdir "$BASE/wt"
	echo "gitdir: $BASE/home/link/repo/.git" >"$BASE/wt/.git"
	# Root's git would follow it; the user's cannot.
	git -C "$BASE/wt" cat-file -e "$vid"

	fails_to_mount "$BASE/wt" -o allow_other
	[ "$output" = "odbfs: $BASE/wt: $BASE/wt/.git names $BASE/home/link/repo/.git: Permission denied (reading as user $USER1, owner of $BASE/home)" ]
}

@test "a root-owned .git symlink that goes through a user's symlink to root's: refused" {
	vid=$(vault_repo "$BASE/vault")
	user_link link "$BASE/vault"
	mkdir "$BASE/wt"
	ln -s "$BASE/home/link/repo/.git" "$BASE/wt/.git"
	git -C "$BASE/wt" cat-file -e "$vid"

	fails_to_mount "$BASE/wt" -o allow_other
	[ "$output" = "odbfs: $BASE/wt: $BASE/wt/.git: Permission denied (reading as user $USER1, owner of $BASE/home)" ]
}

@test "a root-owned commondir file that goes through a user's symlink to root's: refused" {
	vid=$(vault_repo "$BASE/vault")
	user_link link "$BASE/vault"
	# A linked worktree's git directory, all root's but its commondir.
	git -C "$BASE/vault/repo" worktree add -q "$BASE/wt"
	gd=$(git -C "$BASE/wt" rev-parse --absolute-git-dir)
	mv "$gd" "$BASE/gd"
	echo "$BASE/home/link/repo/.git" >"$BASE/gd/commondir"
	chmod 755 "$BASE/gd"

	fails_to_mount "$BASE/gd" -o allow_other
	[ "$output" = "odbfs: $BASE/gd: $BASE/gd/commondir names $BASE/home/link/repo/.git: Permission denied (reading as user $USER1, owner of $BASE/home)" ]
}

@test "a root-owned .git file through a user's symlink to what the user reads: read as the user" {
	small_repo "$BASE/open/repo" open
	user_link link "$BASE/open"
	mkdir "$BASE/wt"
	echo "gitdir: $BASE/home/link/repo/.git" >"$BASE/wt/.git"

	mount_odbfs "$BASE/wt" "$MNT" -o allow_other
	cat "$MNT.log"
	[ "$(effective_uid "$ODBFS_PID")" = "$(id -u "$USER1")" ]
	grep -q "reading as user $USER1, owner of $BASE/home\$" "$MNT.log"
	check_own_objects "$USER1" "$BASE/open/repo"
}

GROUP=odbfstestdevs

# shared_repo DIR: a repository of root's that group $GROUP, with USER1 in
# it, may write (git init --shared=group).
shared_repo() {
	getent group "$GROUP" >/dev/null || groupadd "$GROUP"
	id -nG "$USER1" | grep -qw "$GROUP" || usermod -aG "$GROUP" "$USER1"
	git init -q --shared=group "$1" && chgrp -R "$GROUP" "$1" &&
		echo shared >"$1/file" && git -C "$1" add file &&
		git -C "$1" commit -q -m shared
}

@test "a root repository its group may write, with alternates into root's: refused" {
	vid=$(vault_repo "$BASE/vault")
	shared_repo "$BASE/shared"
	# A member of the group names root's objects in root's file, which
	# the group may write as git --shared=group would leave it.
	alt=$BASE/shared/.git/objects/info/alternates
	install -m 664 -g "$GROUP" /dev/null "$alt"
	run_as "$USER1" sh -c "echo '$BASE/vault/repo/.git/objects' >'$BASE/shared/.git/objects/info/alternates'"
	git -C "$BASE/shared" cat-file -e "$vid"

	fails_to_mount "$BASE/shared" -o allow_other
	[ "$output" = "odbfs: $BASE/shared: $BASE/shared/.git is writable by group $GROUP, so root does not read it: choose a user with -o owner=USER" ]
	# Read as a user, it mounts, without root's objects.
	mount_odbfs "$BASE/shared" "$MNT" -o allow_other,owner="$USER2"
	[ ! -e "$MNT/objects/$vid" ]
	cmp <(git -C "$BASE/shared" cat-file commit HEAD) \
		"$MNT/objects/$(git -C "$BASE/shared" rev-parse HEAD)"
	unmount_odbfs "$MNT"
	# And as root when root says so.
	mount_odbfs "$BASE/shared" "$MNT" -o owner=root
	cmp <(git -C "$BASE/shared" cat-file blob "$vid") "$MNT/objects/$vid"
}

@test "a root repository whose objects/info alone its group may write: refused, naming it" {
	vid=$(vault_repo "$BASE/vault")
	shared_repo "$BASE/shared"
	find "$BASE/shared" -type d -exec chmod g-w {} +
	chmod g+w "$BASE/shared/.git/objects/info"
	fails_to_mount "$BASE/shared" -o allow_other
	[ "$output" = "odbfs: $BASE/shared: $BASE/shared/.git/objects/info is writable by group $GROUP, so root does not read it: choose a user with -o owner=USER" ]
	# Nothing the group may change: read as root.
	chmod g-w "$BASE/shared/.git/objects/info"
	mount_odbfs "$BASE/shared" "$MNT" -o allow_other
	[ "$(effective_uid "$ODBFS_PID")" = 0 ]
	check_mount_objects "$BASE/shared" "$MNT"
}

@test "a root repository whose refs/heads alone its group may write: refused, naming it; a ref linked to root's file is never shown" {
	local secret
	vid=$(vault_repo "$BASE/vault")
	secret=$(git -C "$BASE/vault/repo" rev-parse HEAD)
	shared_repo "$BASE/shared"
	find "$BASE/shared" -type d -exec chmod g-w {} +
	chmod g+w "$BASE/shared/.git/refs/heads"
	# A member of the group links a ref to a file only root may read.
	run_as "$USER1" ln -s "$BASE/vault/repo/.git/$(git -C "$BASE/vault/repo" symbolic-ref HEAD)" \
		"$BASE/shared/.git/refs/heads/leak"
	fails_to_mount "$BASE/shared" -o allow_other
	[ "$output" = "odbfs: $BASE/shared: $BASE/shared/.git/refs/heads is writable by group $GROUP, so root does not read it: choose a user with -o owner=USER" ]
	# Read as a user, the link leads nowhere that user may read.
	mount_odbfs "$BASE/shared" "$MNT" -o allow_other,owner="$USER2"
	[ "$(readlink "$MNT/refs/heads/leak" 2>/dev/null)" != "../../commits/$secret" ]
	[ ! -e "$MNT/refs/heads/leak" ]
}

@test "a root repository whose alternates file a user owns is read as that user" {
	vid=$(vault_repo "$BASE/vault")
	small_repo "$BASE/repo" rooted
	echo "$BASE/vault/repo/.git/objects" >"$BASE/repo/.git/objects/info/alternates"
	chown "$USER1": "$BASE/repo/.git/objects/info/alternates"

	mount_odbfs "$BASE/repo" "$MNT" -o allow_other
	[ "$(effective_uid "$ODBFS_PID")" = "$(id -u "$USER1")" ]
	grep -q "reading as user $USER1, owner of $BASE/repo/.git/objects/info/alternates\$" "$MNT.log"
	[ ! -e "$MNT/objects/$vid" ]
	check_own_objects "$USER1" "$BASE/repo"
}

@test "a root repository with a loose object directory of a user's: read as that user" {
	vid=$(vault_repo "$BASE/vault")
	small_repo "$BASE/repo" rooted
	# The user may put a link to any pack or object of root's in it.
	d=$(ls -d "$BASE"/repo/.git/objects/?? | head -n 1)
	chown "$USER1": "$d"
	mount_odbfs "$BASE/repo" "$MNT" -o allow_other
	[ "$(effective_uid "$ODBFS_PID")" = "$(id -u "$USER1")" ]
	grep -q "reading as user $USER1, owner of $d\$" "$MNT.log"
}
