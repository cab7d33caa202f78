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
