#!/usr/bin/env bats
# The daemon's life: signals, busy and forced unmounts, many mounts.

load lib

setup() {
	repo=$BATS_TEST_TMPDIR/repo
	mnt=$BATS_TEST_TMPDIR/mnt
	git init -q "$repo"
	seq 1 100000 >"$repo/big"
	git -C "$repo" add big
	git -C "$repo" commit -qm big
	mkdir -p "$mnt"
}

teardown() {
	exec 4<&- 2>/dev/null || :
	cd "$BATS_TEST_TMPDIR"
	unmount_odbfs "$mnt"
	mountpoint -q "$mnt" && umount -l "$mnt"
	return 0
}

# stop_within SECONDS: fail if the daemon outlives SECONDS; never hang.
stop_within() {
	for _ in $(seq 1 $(($1 * 20))); do
		gone "$ODBFS_PID" && break
		sleep 0.05
	done
	if ! gone "$ODBFS_PID"; then
		# Where each of its threads waits, and what it said.
		echo "daemon $ODBFS_PID still there after $1 s:" >&2
		for t in /proc/"$ODBFS_PID"/task/*; do
			echo "  ${t##*/} $(cat "$t/comm" "$t/wchan" 2>/dev/null |
				tr '\n' ' ') $(awk '/^State/ { print $2 }' \
				"$t/status" 2>/dev/null)" >&2
		done
		ps -o pid,ppid,stat,wchan:32,cmd --ppid "$ODBFS_PID" >&2 || :
		cat "$mnt.log" >&2
		kill -9 "$ODBFS_PID"
		return 1
	fi
	wait "$ODBFS_PID" || ODBFS_STATUS=$?
	ODBFS_PID=
}

@test "SIGTERM and SIGINT unmount and exit 0 within a second when idle" {
	for sig in TERM INT; do
		mount_sig "$repo" "$mnt"
		ODBFS_STATUS=0
		kill -"$sig" "$ODBFS_PID"
		stop_within 1
		[ "$ODBFS_STATUS" -eq 0 ]
		! mountpoint -q "$mnt"
	done
}

@test "SIGHUP unmounts and exits 0; SIGUSR1 and SIGUSR2 leave the daemon serving" {
	mount_sig "$repo" "$mnt"
	id=$(git -C "$repo" rev-parse HEAD)
	kill -USR1 "$ODBFS_PID"
	kill -USR2 "$ODBFS_PID"
	sleep 0.2
	kill -0 "$ODBFS_PID"
	cmp "$mnt/objects/$id" <(git -C "$repo" cat-file commit "$id")
	ODBFS_STATUS=0
	kill -HUP "$ODBFS_PID"
	stop_within 1
	[ "$ODBFS_STATUS" -eq 0 ]
	! mountpoint -q "$mnt"
}

@test "SIGTERM with a file open: the mount is detached, the daemon exits 0" {
	# Decided behaviour: libfuse detaches the mount lazily (MNT_DETACH)
	# and the daemon ends; the open file then fails with ENOTCONN rather
	# than hanging its reader.
	mount_odbfs "$repo" "$mnt"
	id=$(git -C "$repo" rev-parse HEAD:big)
	exec 4<"$mnt/objects/$id"
	head -c 100 <&4 >/dev/null
	ODBFS_STATUS=0
	kill -TERM "$ODBFS_PID"
	stop_within 1
	[ "$ODBFS_STATUS" -eq 0 ]
	! mountpoint -q "$mnt"
	run cat <&4
	[ "$status" -ne 0 ] || [ -z "$output" ] || [[ "$output" == *"not connected"* ]]
}

@test "fusermount3 -u on a busy mount fails and the daemon keeps serving" {
	mount_odbfs "$repo" "$mnt"
	cd "$mnt/objects"
	run fusermount3 -u "$mnt"
	[ "$status" -ne 0 ]
	kill -0 "$ODBFS_PID"
	cmp "$mnt/HEAD/tree/big" "$repo/big"
	cd "$BATS_TEST_TMPDIR"
	unmount_odbfs "$mnt"
	[ "$ODBFS_STATUS" -eq 0 ]
}

@test "with -o auto_unmount, kill -9 leaves no stale mount" {
	mount_odbfs "$repo" "$mnt" -o auto_unmount
	kill -9 "$ODBFS_PID"
	for _ in $(seq 1 40); do gone "$ODBFS_PID" && break; sleep 0.05; done
	wait "$ODBFS_PID" || :
	ODBFS_PID=
	for _ in $(seq 1 40); do
		mountpoint -q "$mnt" || break
		sleep 0.05
	done
	! mountpoint -q "$mnt"
	! grep -q " $mnt " /proc/mounts
}

# fds PID: the descriptors PID holds, "fd target" one a line; pipes and
# sockets without their inode numbers, which differ from one daemon to
# the next. One process: it runs once a cycle.
fds() {
	local out
	out=$(find "/proc/$1/fd" -mindepth 1 -printf '%f %l\n') || return 1
	shopt -s extglob
	echo "${out//:\[+([0-9])\]/}"
}

# holders PATH: every "/proc/pid/fd/n target" of a descriptor, of any
# process, open on PATH or on something under it.
holders() {
	find /proc/[0-9]*/fd -mindepth 1 \( -lname "$1" -o -lname "$1/*" \) \
		-printf '%p %l\n' 2>/dev/null
	return 0
}

# Each daemon holds what the first held (nothing the shell leaks reaches
# it, nothing a daemon leaves grows), and when they are gone no process of
# the system holds a file of the repository or of the mount. Counted by
# process, not system-wide (file-nr), which the suite that runs beside
# this one moves by hundreds.
@test "100 mount and unmount cycles leave no mounts, daemons or descriptors" {
	local first now
	for i in $(seq 1 100); do
		mount_odbfs "$repo" "$mnt"
		[ -n "$(cat "$mnt/HEAD/message")" ]
		now=$(fds "$ODBFS_PID")
		[ "$i" -gt 1 ] || first=$now
		if [ "$now" != "$first" ]; then
			echo "daemon $i holds other descriptors than the first" >&2
			diff <(echo "$first") <(echo "$now") >&2
			return 1
		fi
		unmount_odbfs "$mnt"
		[ "$ODBFS_STATUS" -eq 0 ]
	done
	echo "# each daemon held $(grep -c '' <<<"$first") descriptors" >&3
	! grep -q " $mnt " /proc/mounts || return 1
	! pgrep -f "odbfs -f $repo" >/dev/null || return 1
	[ -z "$(holders "$repo")" ] || { holders "$repo" >&2; return 1; }
	[ -z "$(holders "$mnt")" ] || { holders "$mnt" >&2; return 1; }
}
