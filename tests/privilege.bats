#!/usr/bin/env bats
# Least privilege once mounted (issue 30): the daemon that reads
# repositories holds the owner's uid and gid as real, effective, saved
# and file system ids, no capability, no_new_privs and a seccomp filter,
# and a forbidden call made inside it (setuid, mount, ptrace) fails with
# EPERM; its warden, the one process left with root, unmounts when it
# ends, by a signal, an unmount or a kill, and holds no group; killed
# itself, the daemon ends too; the same for --root mounts and for a
# daemon a user started; -o clone_fd is refused. Needs root: two users are made if
# missing.

load lib

setup() {
	users_setup
	uid=$(id -u "$USER1") gid=$(id -g "$USER1")
}

teardown() {
	users_teardown
}

# user_repo DIR: a repository of 20 commits, USER1's.
user_repo() {
	make_history "$1" >/dev/null && chown -R "$USER1": "$1"
}

# status_of PID KEY: the fields of KEY: in /proc/PID/status, one space
# apart.
status_of() {
	awk -v k="$2:" '$1 == k { $1 = ""; print substr($0, 2) }' "/proc/$1/status"
}

# warden_of PID: the daemon's one child, its warden.
warden_of() {
	local w
	w=$(cat "/proc/$1/task/"*/children)
	[ "$(echo $w | wc -w)" -eq 1 ] || { echo "children of $1: $w" >&2; return 1; }
	echo $w
}

# jailed PID UID GID: PID holds UID and GID four times over, no
# capability, no_new_privs, one seccomp filter, and is not dumpable.
jailed() {
	local k
	[ "$(status_of "$1" Uid)" = "$2 $2 $2 $2" ]
	[ "$(status_of "$1" Gid)" = "$3 $3 $3 $3" ]
	for k in CapInh CapPrm CapEff CapBnd CapAmb; do
		[ "$(status_of "$1" $k)" = 0000000000000000 ] ||
			{ echo "$k: $(status_of "$1" $k)" >&2; return 1; }
	done
	[ "$(status_of "$1" NoNewPrivs)" = 1 ]
	[ "$(status_of "$1" Seccomp)" = 2 ]
	[ "$(status_of "$1" Seccomp_filters)" = 1 ]
	# Not dumpable: /proc/PID/ stays root's, the owner cannot look in.
	[ "$(stat -c %u "/proc/$1/mem")" = 0 ]
}

# syscall_in PID NR ARGS...: what system call NR returns inside PID, and
# its errno, "RESULT ERRNO", called from one of PID's own threads (gdb).
syscall_in() {
	local pid=$1 nr=$2 args=
	shift 2
	[ $# -eq 0 ] || args=$(printf ', %s' "$@")
	timeout 60 gdb -p "$pid" -batch -nx \
		-ex "print ((long (*)(long, ...))syscall)($nr$args)" \
		-ex 'print *((int *(*)(void))__errno_location)()' 2>/dev/null |
		awk '/^\$1 = / { r = $3 } /^\$2 = / { e = $3 } END { print r, e }'
}

@test "root mounts a user's repository: the daemon has the user's ids four times, nothing more" {
	user_repo "$BASE/repo"
	mount_odbfs "$BASE/repo" "$MNT" -o allow_other
	check_mount_objects "$BASE/repo" "$MNT"
	echo "daemon: $(grep -E '^(Uid|Gid|Groups|Cap|NoNew|Seccomp)' "/proc/$ODBFS_PID/status" | tr '\n\t' '  ')"
	jailed "$ODBFS_PID" "$uid" "$gid"
	[ "$(status_of "$ODBFS_PID" Groups)" = "$(id -G "$USER1" | tr ' ' '\n' | sort -n | xargs)" ]
	# The warden is root with CAP_SYS_ADMIN alone (to unmount), no group, and
	# holds nothing of the daemon's: no repository file, no /dev/fuse,
	# only the pipe it waits on.
	w=$(warden_of "$ODBFS_PID")
	echo "warden: $(grep -E '^(Uid|Cap|NoNew|Seccomp)' "/proc/$w/status" | tr '\n\t' '  ')"
	[ "$(status_of "$w" Uid)" = "0 0 0 0" ]
	[ "$(status_of "$w" Gid)" = "0 0 0 0" ]
	# None of the owner's groups, which the daemon took before forking.
	[ -z "$(status_of "$w" Groups)" ]
	[ "$(status_of "$w" CapEff)" = 0000000000200000 ]
	[ "$(status_of "$w" CapBnd)" = 0000000000200000 ]
	[ "$(status_of "$w" NoNewPrivs)" = 1 ]
	[ "$(ls "/proc/$w/fd" | sort -n | tr '\n' ' ')" = "0 1 2 3 " ]
	[[ $(readlink "/proc/$w/fd/3") == pipe:* ]]
	# Files still read through the daemon, as the owner.
	cmp "$MNT/HEAD/tree/README" "$BASE/repo/README"
	run_as "$USER2" cat "$MNT/HEAD/tree/README" >/dev/null
}

@test "inside the daemon setuid(0), mount, ptrace, an open to write and PROT_EXEC fail with EPERM, and so does a no-op setresuid" {
	command -v gdb >/dev/null || skip "gdb is absent: nothing can call inside the daemon"
	user_repo "$BASE/repo"
	mount_odbfs "$BASE/repo" "$MNT"
	# gdb's calls work in there: getpid(2) answers.
	[ "$(syscall_in "$ODBFS_PID" 39 | cut -d' ' -f1)" = "$ODBFS_PID" ]
	# setuid(0) (EPERM for any user), and setresuid(-1, -1, -1), which
	# changes nothing and which every process may make: the filter's.
	[ "$(syscall_in "$ODBFS_PID" 105 0)" = "-1 1" ]
	[ "$(syscall_in "$ODBFS_PID" 117 -1 -1 -1)" = "-1 1" ]
	# mount(2) with no path: EFAULT from the kernel, EPERM from the filter.
	[ "$(syscall_in "$ODBFS_PID" 165 0 0 0 0 0)" = "-1 1" ]
	# ptrace(2) of no process: ESRCH from the kernel, EPERM from it.
	[ "$(syscall_in "$ODBFS_PID" 101 16 0 0 0)" = "-1 1" ]
	# A file of the owner's opened to write: the owner's ids could,
	# the filter does not let them.
	touch "$BASE/repo/mine"
	chown "$USER1": "$BASE/repo/mine"
	[ "$(syscall_in "$ODBFS_PID" 257 -100 "\"$BASE/repo/mine\"" 1 0)" = "-1 1" ]
	[ "$(syscall_in "$ODBFS_PID" 257 -100 "\"$BASE/repo/new\"" 65 384)" = "-1 1" ]
	[ ! -e "$BASE/repo/new" ]
	# Opened to read, it is the kernel's to say: a number.
	[ "$(syscall_in "$ODBFS_PID" 257 -100 "\"$BASE/repo/mine\"" 0 0 | cut -d' ' -f1)" -gt 2 ]
	# execve(2) and a fork (clone without CLONE_THREAD).
	[ "$(syscall_in "$ODBFS_PID" 59 0 0 0)" = "-1 1" ]
	[ "$(syscall_in "$ODBFS_PID" 56 17 0 0 0 0)" = "-1 1" ]
	# No page made executable: mmap(2) and mprotect(2) with PROT_EXEC,
	# while the same without it is the kernel's.
	[ "$(syscall_in "$ODBFS_PID" 9 0 4096 5 34 -1 0)" = "-1 1" ]
	page=$(syscall_in "$ODBFS_PID" 9 0 4096 3 34 -1 0 | cut -d' ' -f1)
	[ "$page" -gt 0 ]
	[ "$(syscall_in "$ODBFS_PID" 10 "$page" 4096 5)" = "-1 1" ]
	[ "$(syscall_in "$ODBFS_PID" 10 "$page" 4096 1 | cut -d' ' -f1)" = 0 ]
	# The daemon serves on, and ends as it should.
	cmp "$MNT/HEAD/tree/README" "$BASE/repo/README"
	jailed "$ODBFS_PID" "$uid" "$gid"
	stop TERM
	[ "$ODBFS_STATUS" -eq 0 ]
	! mountpoint -q "$MNT"
}

# stop SIG: send SIG to the daemon and wait for it: its status in
# $ODBFS_STATUS. No unmount of ours: the mount must be gone by then.
stop() {
	kill -"$1" "$ODBFS_PID"
	ODBFS_STATUS=0
	wait "$ODBFS_PID" || ODBFS_STATUS=$?
	ODBFS_PID=
}

@test "SIGTERM, SIGINT: the mount is gone when the daemon exits 0; SIGKILL: gone at once after" {
	user_repo "$BASE/repo"
	for sig in TERM INT; do
		mount_sig "$BASE/repo" "$MNT"
		w=$(warden_of "$ODBFS_PID")
		ls "$MNT/HEAD/tree" >/dev/null
		stop "$sig"
		[ "$ODBFS_STATUS" -eq 0 ] || { echo "SIG$sig: $ODBFS_STATUS" >&2; false; }
		# Gone before the daemon's exit, not after: no wait here.
		! mountpoint -q "$MNT"
		! grep -q " $MNT " /proc/mounts
		gone "$w"
	done
	# The warden ignores what a supervisor's stop sends to every process.
	mount_odbfs "$BASE/repo" "$MNT"
	w=$(warden_of "$ODBFS_PID")
	kill -TERM "$w"
	sleep 0.2
	kill -0 "$w"
	mountpoint -q "$MNT"
	ls "$MNT/HEAD/tree" >/dev/null
	# Killed, the daemon leaves no dead mount behind.
	stop KILL
	within_a_second bash -c "! mountpoint -q '$MNT'"
	within_a_second gone "$w"
	# Unmounted by the user: the daemon exits 0 and the warden with it.
	mount_odbfs "$BASE/repo" "$MNT"
	w=$(warden_of "$ODBFS_PID")
	fusermount3 -u "$MNT"
	unmount_odbfs "$MNT"
	[ "$ODBFS_STATUS" -eq 0 ]
	gone "$w"
}

@test "the warden killed: the daemon ends at once with status 1 and says the mount is left" {
	user_repo "$BASE/repo"
	mount_odbfs "$BASE/repo" "$MNT"
	w=$(warden_of "$ODBFS_PID")
	ls "$MNT/HEAD/tree" >/dev/null
	kill -KILL "$w"
	within_a_second gone "$ODBFS_PID"
	ODBFS_STATUS=0
	wait "$ODBFS_PID" || ODBFS_STATUS=$?
	ODBFS_PID=
	cat "$MNT.log"
	[ "$ODBFS_STATUS" -eq 1 ]
	grep -q "$MNT: the warden, which unmounts, was killed by signal 9; the mount is left" "$MNT.log"
	# Left, but no longer served: nothing reads through it.
	grep -q " $MNT " /proc/mounts
	! ls "$MNT/HEAD/tree" 2>/dev/null
	umount -l "$MNT"
}

@test "--root: the daemon has the root's owner's ids; another user's repository is left out" {
	mkdir "$BASE/forge"
	user_repo "$BASE/forge/a"
	make_history "$BASE/forge/b" >/dev/null
	chown -R "$USER2": "$BASE/forge/b"
	chown "$USER1": "$BASE/forge"
	mkdir -p "$MNT"
	"$ODBFS" -f --root "$BASE/forge" "$MNT" 2>"$MNT.log" 3>&- &
	ODBFS_PID=$!
	within_seconds 5 mountpoint -q "$MNT"
	check_mount_objects "$BASE/forge/a" "$MNT/a"
	# Read as USER1, USER2's is refused: absent once tried.
	! ls "$MNT/b/HEAD" 2>/dev/null
	grep -q "b: .*not served" "$MNT.log"
	jailed "$ODBFS_PID" "$uid" "$gid"
	w=$(warden_of "$ODBFS_PID")
	[ "$(status_of "$w" Uid)" = "0 0 0 0" ]
	stop TERM
	[ "$ODBFS_STATUS" -eq 0 ]
	! mountpoint -q "$MNT"
}

@test "read as root (owner=root): uid 0 stays, every capability goes" {
	make_history "$BASE/repo" >/dev/null
	mount_odbfs "$BASE/repo" "$MNT" -o owner=root
	check_mount_objects "$BASE/repo" "$MNT"
	jailed "$ODBFS_PID" 0 0
	[ -z "$(status_of "$ODBFS_PID" Groups)" ]
}

@test "started by a user (fusermount3): no_new_privs and the filter too; its warden unmounts" {
	runuser -u "$USER1" -- test -r /dev/fuse -a -w /dev/fuse ||
		skip "$USER1 cannot open /dev/fuse here: no user mounts"
	user_repo "$BASE/repo"
	chown "$USER1": "$MNT"
	runuser -u "$USER1" -- "$ODBFS" -f "$BASE/repo" "$MNT" 2>"$MNT.log" 3>&- &
	ODBFS_PID=$!
	within_seconds 5 mountpoint -q "$MNT"
	pid=$(pgrep -P "$ODBFS_PID" -x odbfs || echo "$ODBFS_PID")
	jailed "$pid" "$uid" "$gid"
	runuser -u "$USER1" -- cat "$MNT/HEAD/tree/README" >/dev/null
	kill -TERM "$pid"
	ODBFS_STATUS=0
	wait "$ODBFS_PID" || ODBFS_STATUS=$?
	ODBFS_PID=
	[ "$ODBFS_STATUS" -eq 0 ]
	! mountpoint -q "$MNT"
}

@test "-o clone_fd is refused at start, with a line that says why" {
	user_repo "$BASE/repo"
	run "$ODBFS" -f -o clone_fd "$BASE/repo" "$MNT"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ $output == *"-o clone_fd is not supported"* ]]
	! mountpoint -q "$MNT"
}
