#!/usr/bin/env bats
# Who calls whom, from the built objects' symbols (tools/modcheck): no
# module uses, directly or through others, a module that uses it, and the
# store uses nothing of fs/ or tools/. Then modcheck itself, on throwaway
# objects, fails and passes when it should.

load lib

# objects DIR OBJECT:SOURCE...: write each SOURCE to DIR/OBJECT's .c and
# compile it to DIR/OBJECT.
objects() {
	local dir=$1 f o
	shift
	for f in "$@"; do
		o=$dir/${f%%:*}
		mkdir -p "$(dirname "$o")"
		printf '%s\n' "${f#*:}" >"${o%.o}.c"
		cc -c -o "$o" "${o%.o}.c" || return 1
	done
}

@test "no module of fs/, store/ or tools/ uses one that uses it; the store uses nothing above it" {
	cd "$TOP"
	run tools/modcheck
	echo "$output" >&2
	[ "$status" -eq 0 ]
}

@test "modcheck: two objects that use each other fail, with the symbols of each use" {
	d=$BATS_TEST_TMPDIR
	objects "$d" \
		'fs/a.o:int b_get(void); int a_get(void) { return b_get(); }' \
		'fs/b.o:int a_get(void); int b_get(void) { return 1; } int b_more(void) { return a_get(); }' \
		'fs/c.o:int a_get(void); int main(void) { return a_get(); }'
	run "$TOP/tools/modcheck" "$d/fs/a.o" "$d/fs/b.o" "$d/fs/c.o"
	echo "$output" >&2
	[ "$status" -eq 1 ]
	[[ $output == *"cycle among 2 modules: $d/fs/a.c $d/fs/b.c"* ]]
	[[ $output == *"$d/fs/a.c -> $d/fs/b.c: b_get"* ]]
	[[ $output == *"$d/fs/b.c -> $d/fs/a.c: a_get"* ]]
	[[ $output == *"$d/fs/a.c -> $d/fs/b.c -> $d/fs/a.c"* ]]
	# c uses a, but nothing uses c: it is in no cycle.
	[[ $output != *"fs/c.c ->"* ]]
}

@test "modcheck: a cycle through three objects fails and is named whole" {
	d=$BATS_TEST_TMPDIR
	objects "$d" \
		'store/a.o:int b(void); int a(void) { return b(); }' \
		'store/b.o:int c(void); int b(void) { return c(); }' \
		'store/c.o:int a(void); int c(void) { return a(); }'
	run "$TOP/tools/modcheck" "$d"/store/[abc].o
	echo "$output" >&2
	[ "$status" -eq 1 ]
	[[ $output == *"$d/store/a.c -> $d/store/b.c -> $d/store/c.c -> $d/store/a.c"* ]]
}

@test "modcheck: objects that use others one way pass" {
	d=$BATS_TEST_TMPDIR
	objects "$d" \
		'fs/a.o:int b_get(void); int a_get(void) { return b_get(); }' \
		'fs/b.o:int b_get(void) { return 1; }' \
		'store/s.o:int s(void) { return 2; }' \
		'fs/c.o:int a_get(void); int s(void); int main(void) { return a_get() + s(); }'
	run "$TOP/tools/modcheck" "$d"/fs/*.o "$d/store/s.o"
	echo "$output" >&2
	[ "$status" -eq 0 ]
	[[ $output == "modcheck: 4 modules, no cycle"* ]]
}

@test "modcheck: a store object that uses fs/ or tools/ fails, though in no cycle" {
	d=$BATS_TEST_TMPDIR
	objects "$d" \
		'fs/f.o:int f(void) { return 1; }' \
		'tools/t.o:int t(void) { return 1; }' \
		'store/s.o:int f(void); int t(void); int s(void) { return f() + t(); }'
	run "$TOP/tools/modcheck" "$d/fs/f.o" "$d/tools/t.o" "$d/store/s.o"
	echo "$output" >&2
	[ "$status" -eq 1 ]
	[[ $output == *"$d/store/s.c uses $d/fs/f.c, above the store: f"* ]]
	[[ $output == *"$d/store/s.c uses $d/tools/t.c, above the store: t"* ]]
	[[ $output != *cycle* ]]
}

@test "modcheck: without arguments, an object older than its source is an error; one without a source is left out" {
	d=$BATS_TEST_TMPDIR
	objects "$d" \
		'fs/a.o:int b(void); int a(void) { return b(); }' \
		'fs/b.o:int b(void) { return 1; }' \
		'fs/gone.o:int a(void); int gone(void) { return a(); }'
	rm "$d/fs/gone.c"
	cd "$d"
	run "$TOP/tools/modcheck"
	echo "$output" >&2
	[ "$status" -eq 0 ]
	touch -d '+1 minute' fs/a.c
	run "$TOP/tools/modcheck"
	echo "$output" >&2
	[ "$status" -eq 2 ]
	[[ $output == *"fs/a.o: older than fs/a.c"* ]]
}
