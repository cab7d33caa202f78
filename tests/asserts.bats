#!/usr/bin/env bats
# The build the suites mount: odbfs-assert has its assertions live (the
# release odbfs has none: -DNDEBUG), and under tests/run the daemons of
# the suites are that build.

load lib

@test "odbfs-assert reaches assert's failure path from its code; the release odbfs never does" {
	[ -x "$TOP/odbfs-assert" ] || skip "odbfs-assert is not built (make odbfs-assert)"
	nm -u "$TOP/odbfs-assert" | grep -q ' __assert_fail\b'
	run bash -c "nm -u '$TOP/odbfs' | grep ' __assert_fail\b'"
	[ "$status" -eq 1 ]
	# Called from the code, not only linked: each a live assert().
	n=$(objdump -d --no-show-raw-insn "$TOP/odbfs-assert" |
		grep -c 'call.*<__assert_fail@plt>')
	echo "# $n calls of __assert_fail in odbfs-assert" >&3
	[ "$n" -gt 0 ]
	[ "$(objdump -d --no-show-raw-insn "$TOP/odbfs" |
		grep -c 'call.*<__assert_fail@plt>')" -eq 0 ]
}

@test "under tests/run, the daemon a suite mounts is odbfs-assert" {
	[ -n "${ODBFS_TEST_BINARY-}" ] || skip "run by tests/run only"
	[[ $ODBFS_TEST_BINARY == */odbfs-assert ]] || skip "ODBFS_TEST_BINARY=$ODBFS_TEST_BINARY"
	small_repo "$BATS_TEST_TMPDIR/repo" word
	mount_odbfs "$BATS_TEST_TMPDIR/repo" "$BATS_TEST_TMPDIR/mnt"
	[ "$(readlink "/proc/$ODBFS_PID/exe")" = "$TOP/odbfs-assert" ]
	[ "$(cat "$BATS_TEST_TMPDIR/mnt/HEAD/tree/file")" = word ]
}

teardown() {
	unmount_odbfs "$BATS_TEST_TMPDIR/mnt"
}
