#!/usr/bin/env bats
# A miss costs no system call: strace the daemon while a client stats
# 10 000 missing ids and check that nothing but FUSE request and reply
# traffic shows up (no stat family, no open, no getdents, no yield).

load lib

setup() {
	command -v strace >/dev/null || skip "strace is not installed"
	repo=$BATS_TEST_TMPDIR/repo
	git init -q "$repo"
	for i in 1 2 3; do
		echo "$i" >"$repo/f$i"
		git -C "$repo" add "f$i"
		git -C "$repo" commit -qm "c$i"
	done
	git -C "$repo" repack -dq
	echo loose >"$repo/loose"
	git -C "$repo" hash-object -w "$repo/loose" >/dev/null
	mnt=$BATS_TEST_TMPDIR/mnt
}

teardown() {
	[ -n "${STRACE_PID:-}" ] && kill "$STRACE_PID" 2>/dev/null
	unmount_odbfs "$mnt"
}

@test "stat of 10000 missing ids makes no syscall beyond FUSE traffic" {
	# negative_timeout=0: every stat reaches the daemon.
	mount_odbfs "$repo" "$mnt" -o negative_timeout=0
	awk 'BEGIN { srand(7); for (i = 0; i < 10000; i++) {
		s = ""; for (j = 0; j < 5; j++) s = s sprintf("%08x", int(rand() * 4294967296))
		print s } }' >"$BATS_TEST_TMPDIR/ids"
	# Warm every worker thread up before tracing.
	for id in $(head -50 "$BATS_TEST_TMPDIR/ids"); do [ -e "$mnt/objects/$id" ] || :; done

	strace -f -qq -c -o "$BATS_TEST_TMPDIR/trace" -p "$ODBFS_PID" 3>&- &
	STRACE_PID=$!
	sleep 1
	misses=0
	while read -r id; do
		[ -e "$mnt/objects/$id" ] || misses=$((misses + 1))
	done <"$BATS_TEST_TMPDIR/ids"
	sleep 0.2
	kill -INT "$STRACE_PID"
	wait "$STRACE_PID" || :
	STRACE_PID=
	[ "$misses" -eq 10000 ]
	cat "$BATS_TEST_TMPDIR/trace" >&3
	# The daemon must have been traced: it read 10000 requests.
	reads=$(awk '$NF == "read" { print $4 }' "$BATS_TEST_TMPDIR/trace")
	[ "${reads:-0}" -ge 10000 ]
	# Never a file system call or a yield or sleep, not even once.
	! grep -Ew 'stat|lstat|fstat|newfstatat|statx|access|faccessat|faccessat2|open|openat|getdents|getdents64|readlink|sched_yield|nanosleep|clock_nanosleep' \
		"$BATS_TEST_TMPDIR/trace"
	# Beside reading requests and writing replies, nothing per miss: what
	# else shows (libfuse starting a worker thread) happens a few times.
	awk '$NF != "read" && $NF != "writev" && $NF != "total" && $4 ~ /^[0-9]+$/ &&
		$4 >= 100 { print "per-miss syscall: " $NF; bad = 1 } END { exit bad }' \
		"$BATS_TEST_TMPDIR/trace"
}
