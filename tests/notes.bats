#!/usr/bin/env bats
# Notes say roles, and the names they give exist (tools/notecheck): each
# function written name() and each file written x.c or x.h in a file's
# head note or a function's note is one of the project, of the system's
# headers, or cited on purpose (tools/notecheck.allow). Then notecheck
# itself, on a throwaway file, fails and passes when it should.

load lib

@test "every function and file the notes of fs/, store/, tools/ and bench/ name exists" {
	run "$TOP/tools/notecheck"
	echo "$output" >&2
	[ "$status" -eq 0 ]
}

@test "every name in tools/notecheck.allow is not odbfs's own and says why" {
	local name why
	while read -r name why; do
		[[ $name == "#"* || -z $name ]] && continue
		[ -n "$why" ]
		if [[ $name == *"()" ]] && grep -q "^${name%()}(" \
			"$TOP"/fs/*.[ch] "$TOP"/store/*.[ch] "$TOP"/tools/*.c; then
			echo "$name is odbfs's own" >&2
			return 1
		fi
		[ -z "$(cd "$TOP" && git ls-files "*/$name" "$name")" ]
	done <"$TOP/tools/notecheck.allow"
}

# note FILE TEXT: FILE holds a head note of TEXT and a function whose note
# is TEXT too, with a comment inside it (no note) that names nothing real.
note() {
	cat >"$1" <<-EOF
		/*
		 * $2
		 */
		#include <stdio.h>

		/*
		 * $2
		 */
		static int
		f(void)
		{
			/* gone_in_a_body() and gone.c: not a note */
			return 0;
		}
	EOF
}

@test "notecheck: names that exist pass: project, system, man pages, allowed" {
	note "$BATS_TEST_TMPDIR/t.c" "odb_open() in store/odb.c, odbstore/log.h, \
view*.c, odbfs_lookup()/_open(), fstat(2), malloc_trim(), <linux/magic.h>, \
fuse_lowlevel.h, u32(len), is_git_directory() of setup.c"
	run "$TOP/tools/notecheck" "$BATS_TEST_TMPDIR/t.c"
	echo "$output" >&2
	[ "$status" -eq 0 ]
	[ "$output" = "notecheck: 1 files, every name in their notes exists" ]
}

@test "notecheck: names that exist nowhere fail, each at its line" {
	note "$BATS_TEST_TMPDIR/t.c" "odb_gone() in store/gone.c, odb_open()/_gone(), \
nothing*.c, gone_too(odb, id), unknown.h"
	run "$TOP/tools/notecheck" "$BATS_TEST_TMPDIR/t.c"
	echo "$output" >&2
	[ "$status" -eq 1 ]
	f=$BATS_TEST_TMPDIR/t.c
	diff - <(printf '%s\n' "$output") <<-EOF
		$f:2: odb_gone()
		$f:2: odb_gone()
		$f:2: gone_too()
		$f:2: store/gone.c
		$f:2: nothing*.c
		$f:2: unknown.h
		$f:7: odb_gone()
		$f:7: odb_gone()
		$f:7: gone_too()
		$f:7: store/gone.c
		$f:7: nothing*.c
		$f:7: unknown.h
		notecheck: 12 names in notes exist nowhere (see the top of tools/notecheck)
	EOF
}

@test "notecheck: over a whole tree, an allowed name that no note cites fails" {
	local t=$BATS_TEST_TMPDIR/tree
	mkdir -p "$t/tools" "$t/fs"
	cp "$TOP/tools/notecheck" "$t/tools/"
	printf '%s\t%s\n' 'load_idx()' "git's packfile.c: cited" \
		'packfile.c' "git's: cited" 'unused()' "git's: cited by none" \
		>"$t/tools/notecheck.allow"
	note "$t/fs/a.c" "as git's load_idx() in packfile.c"
	run "$t/tools/notecheck"
	echo "$output" >&2
	[ "$status" -eq 1 ]
	[ "$output" = "tools/notecheck.allow:3: unused(): cited by no note
notecheck: 1 name in notes exists nowhere (see the top of tools/notecheck)" ]
	sed -i '3d' "$t/tools/notecheck.allow"
	run "$t/tools/notecheck"
	echo "$output" >&2
	[ "$status" -eq 0 ]
}
