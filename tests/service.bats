#!/usr/bin/env bats
# Running under a supervisor (issue 30): make install's systemd units are
# ones systemd-analyze verify finds nothing in, and the daemon says
# READY=1 (sd_notify) only once its mount answers, from its main process
# as NotifyAccess=main wants, and STOPPING=1 when it stops.

load lib

setup() {
	repo=$BATS_TEST_TMPDIR/repo
	MNT=$BATS_TEST_TMPDIR/mnt
	small_repo "$repo" one
}

teardown() {
	[ -z "${LISTENER:-}" ] || kill "$LISTENER" 2>/dev/null || :
	mountpoint -q "$MNT" && fusermount3 -u "$MNT"
	unmount_odbfs "$MNT"
}

@test "make install puts both units in place; systemd-analyze verify finds nothing" {
	dest=$BATS_TEST_TMPDIR/dest
	make -C "$TOP" -s install PREFIX=/usr/local DESTDIR="$dest"
	for u in odbfs@.service odbfs-root@.service; do
		f=$dest/usr/local/lib/systemd/system/$u
		[ "$(stat -c %a "$f")" = 644 ]
		grep -qx 'Type=notify' "$f"
		grep -q '^ExecStart=/usr/local/bin/odbfs -f ' "$f"
		! grep -v '^#' "$f" | grep -q '@[A-Z]*@'
	done
	make -C "$TOP" -s uninstall PREFIX=/usr/local DESTDIR="$dest"
	[ -z "$(find "$dest" -type f)" ]
	command -v systemd-analyze >/dev/null ||
		skip "systemd-analyze is absent (package systemd): units not verified"
	# verify wants what ExecStart= names where it names it, and man: the
	# manual: an install whose PREFIX is real.
	prefix=$BATS_TEST_TMPDIR/prefix
	make -C "$TOP" -s install PREFIX="$prefix"
	for u in "odbfs@$(systemd-escape --path "$repo").service" \
		"odbfs-root@$(systemd-escape --path "$BATS_TEST_TMPDIR").service"; do
		run env MANPATH="$prefix/share/man" systemd-analyze verify \
			"$prefix/lib/systemd/system/$u"
		echo "$u: $output"
		[ "$status" -eq 0 ]
		[ -z "$output" ]
	done
}

# listen SOCKET: a supervisor's notification socket at SOCKET, in the
# background ($LISTENER); each message goes to SOCKET.log as "PID TEXT"
# (newlines as spaces), followed on READY=1 by what the mount answered
# at that moment ("mounted"/"not mounted", and "HEAD ok" if it listed).
listen() {
	python3 - "$1" "$MNT" >"$1.log" 2>&1 <<'PY' &
import os, socket, struct, sys
path, mnt = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
s.bind(path)
s.settimeout(30)
while True:
    msg, anc, _, _ = s.recvmsg(4096, socket.CMSG_SPACE(12))
    pid = [struct.unpack('iII', d)[0] for l, t, d in anc
           if l == socket.SOL_SOCKET and t == socket.SCM_CREDENTIALS]
    line = '%s %s' % (pid[0] if pid else '?', msg.decode().replace('\n', ' '))
    if 'READY=1' in msg.decode():
        line += ' mounted' if os.path.ismount(mnt) else ' not-mounted'
        try:
            os.stat(os.path.join(mnt, 'HEAD'))
            line += ' HEAD-ok'
        except OSError as e:
            line += ' HEAD-' + e.strerror
    print(line, flush=True)
    if 'STOPPING=1' in msg.decode():
        break
PY
	LISTENER=$!
	within_seconds 5 test -S "$1"
}

# reap: wait for the daemon, whose status goes to $ODBFS_STATUS, and
# leave its mount as it is (unmount_odbfs would take it).
reap() {
	ODBFS_STATUS=0
	wait "$ODBFS_PID" || ODBFS_STATUS=$?
	ODBFS_PID=
}

# stop_post UNIT REPO: run UNIT's ExecStopPost= for an instance of REPO
# mounted on $MNT, with the specifiers and variables systemd would fill in.
stop_post() {
	local line
	line=$(sed -n 's/^ExecStopPost=-//p' "$TOP/systemd/$1")
	[ -n "$line" ]
	line=${line//%f/$2}
	line=${line//'${MOUNTPOINT}'/$MNT}
	line=${line//'$$'/'$'}
	eval "$line" || :
}

@test "ExecStopPost= unmounts the instance's own mount, left by a killed warden, and nothing else" {
	repo=$(cd "$repo" && pwd -P)
	other=$BATS_TEST_TMPDIR/other
	small_repo "$other" two
	for unit in odbfs@.service odbfs-root@.service; do
		# Something else mounted on the path: left.
		mkdir -p "$MNT"
		mount -t tmpfs odbfs-test "$MNT"
		stop_post "$unit" "$repo"
		mountpoint -q "$MNT"
		umount "$MNT"
		# Another instance's odbfs mount there: left.
		mount_odbfs "$other" "$MNT"
		stop_post "$unit" "$repo"
		mountpoint -q "$MNT"
		[ -f "$MNT/HEAD/tree/file" ]
		unmount_odbfs "$MNT"
	done
	# Its own, left when the warden was killed: unmounted.
	mount_odbfs "$repo" "$MNT"
	kill -KILL "$(cat /proc/$ODBFS_PID/task/*/children)"
	within_seconds 2 gone "$ODBFS_PID"
	reap
	[ "$ODBFS_STATUS" -eq 1 ]
	grep -q " $MNT " /proc/mounts
	stop_post odbfs@.service "$repo"
	! grep -q " $MNT " /proc/mounts
	# The same for a --root mount.
	mkdir -p "$BATS_TEST_TMPDIR/root"
	git clone -q --bare "$repo" "$BATS_TEST_TMPDIR/root/r.git"
	root=$(cd "$BATS_TEST_TMPDIR/root" && pwd -P)
	"$ODBFS" -f --root "$root" "$MNT" 2>"$MNT.log" 3>&- &
	ODBFS_PID=$!
	within_seconds 5 mountpoint -q "$MNT"
	kill -KILL "$ODBFS_PID" "$(cat /proc/$ODBFS_PID/task/*/children)"
	reap
	grep -q " $MNT " /proc/mounts
	stop_post odbfs-root@.service "$root"
	! grep -q " $MNT " /proc/mounts
}

@test "READY=1 once the mount answers, STOPPING=1 on SIGTERM, both from the main process" {
	sock=$BATS_TEST_TMPDIR/notify
	listen "$sock"
	NOTIFY_SOCKET=$sock mount_odbfs "$repo" "$MNT"
	within_seconds 5 grep -q READY=1 "$sock.log"
	cat "$sock.log"
	grep -qx "$ODBFS_PID READY=1 STATUS=serving $repo on $MNT mounted HEAD-ok" "$sock.log"
	[ "$(grep -c READY=1 "$sock.log")" -eq 1 ]
	pid=$ODBFS_PID
	kill -TERM "$ODBFS_PID"
	unmount_odbfs "$MNT"
	[ "$ODBFS_STATUS" -eq 0 ]
	! mountpoint -q "$MNT"
	wait "$LISTENER"
	LISTENER=
	cat "$sock.log"
	grep -qx "$pid STOPPING=1 STATUS=stopping" "$sock.log"
}

@test "without NOTIFY_SOCKET nothing is sent; a --root mount says READY=1 too" {
	sock=$BATS_TEST_TMPDIR/notify
	listen "$sock"
	mount_odbfs "$repo" "$MNT"
	[ -f "$MNT/HEAD/tree/file" ]
	unmount_odbfs "$MNT"
	[ "$ODBFS_STATUS" -eq 0 ]
	[ ! -s "$sock.log" ]
	mkdir -p "$BATS_TEST_TMPDIR/root/g"
	git clone -q --bare "$repo" "$BATS_TEST_TMPDIR/root/g/r.git"
	mkdir -p "$MNT"
	NOTIFY_SOCKET=$sock "$ODBFS" -f --root "$BATS_TEST_TMPDIR/root" "$MNT" \
		2>"$MNT.log" 3>&- &
	ODBFS_PID=$!
	within_seconds 5 grep -q READY=1 "$sock.log"
	grep -q "^$ODBFS_PID READY=1 STATUS=serving .* mounted HEAD-" "$sock.log"
	[ -d "$MNT/g/r.git/HEAD/tree" ]
	unmount_odbfs "$MNT"
	[ "$ODBFS_STATUS" -eq 0 ]
	[ "$(grep -c READY=1 "$sock.log")" -eq 1 ]
}
