#!/usr/bin/env bats
# .odbfs/metrics (issue 30): the figures of .odbfs/stats in Prometheus's
# text exposition format, read with the parser of the Python client that
# Prometheus's authors publish (python3-prometheus-client), which a
# scraper's parse agrees with. Every family has its HELP and TYPE, every
# counter ends in _total, each repository's series carry its git directory
# as repository="...", the values are those .odbfs/stats shows, and they
# move as a client reads.

load lib

# Debian's module is for Debian's python, whatever python3 PATH finds.
PYTHON=/usr/bin/python3

setup() {
	MNT=$BATS_TEST_TMPDIR/mnt
	"$PYTHON" -c 'import prometheus_client' ||
		skip "python3-prometheus-client is not installed (.ci/deps)"
}

teardown() {
	mountpoint -q "$MNT" && fusermount3 -u "$MNT"
	unmount_odbfs "$MNT"
}

# samples FILE: each sample of the metrics in FILE, one a line
# "NAME LABEL VALUE" (NAME without odbfs_ and _total, LABEL the value of
# its repository or root label), after checking what every family must
# have; fails if the parser does, or a check does.
samples() {
	"$PYTHON" - "$1" <<'PY'
import re, sys
from prometheus_client.parser import text_string_to_metric_families

text = open(sys.argv[1]).read()
helps = set(re.findall(r'^# HELP (\S+) ', text, re.M))
types = dict(re.findall(r'^# TYPE (\S+) (\S+)$', text, re.M))
assert text.endswith('\n'), 'no final newline'
for fam in text_string_to_metric_families(text):
    assert fam.type in ('counter', 'gauge'), (fam.name, fam.type)
    exposed = fam.name + ('_total' if fam.type == 'counter' else '')
    assert exposed in helps and types.get(exposed) == fam.type, exposed
    assert fam.documentation, fam.name
    assert fam.samples, fam.name
    for s in fam.samples:
        assert s.name.startswith('odbfs_'), s.name
        assert (fam.type == 'counter') == s.name.endswith('_total'), s.name
        assert s.value >= 0 and s.value == int(s.value), s
        assert len(s.labels) == 1, s.labels
        (key, label), = s.labels.items()
        assert key in ('repository', 'root'), s.labels
        name = s.name[len('odbfs_'):]
        if name.endswith('_total'):
            name = name[:-len('_total')]
        print(name, label, int(s.value))
PY
}

# metric FILE NAME LABEL: the value samples FILE gives NAME for LABEL.
metric() {
	samples "$1" | awk -v n="$2" -v l="$3" '$1 == n && $2 == l { print $3 }'
}

# agree STATS SAMPLES LABEL: every line "NAME VALUE" of the .odbfs/stats
# copy STATS has a sample NAME for LABEL in SAMPLES, equal to VALUE but
# for the figures that reading .odbfs/stats itself moved (a lookup, an
# open, reads of its bytes, a node), which may be ahead, and the nodes,
# which the kernel may forget meanwhile.
agree() {
	local name value got
	while read -r name value; do
		got=$(awk -v n="$name" -v l="$3" '$1 == n && $2 == l { print $3 }' "$2")
		[ -n "$got" ] || { echo "no $name for $3" >&2; return 1; }
		case $name in
		lookups|opens|reads) [ "$got" -ge "$value" ] && [ "$got" -le $((value + 4)) ] ;;
		# A gauge: the kernel may forget a node between the two reads.
		nodes) [ "$got" -ge $((value - 4)) ] && [ "$got" -le $((value + 4)) ] ;;
		bytes_served) [ "$got" -ge "$value" ] && [ "$got" -le $((value + 4096)) ] ;;
		*) [ "$got" -eq "$value" ] ;;
		esac || { echo "$name for $3: $got in the metrics, $value in stats" >&2; return 1; }
	done <"$1"
}

@test "a mount's .odbfs/metrics parses, and says what .odbfs/stats says" {
	repo=$BATS_TEST_TMPDIR/repo
	make_history "$repo"
	git -C "$repo" repack -adq
	add_commits "$repo" 21 22
	gitdir=$(cd "$repo/.git" && pwd -P)
	mount_odbfs "$repo" "$MNT"
	cp "$MNT/.odbfs/metrics" "$BATS_TEST_TMPDIR/before"
	check_mount_objects "$repo" "$MNT"
	[ "$(stat -c %a "$MNT/.odbfs/metrics")" = 400 ]
	cp "$MNT/.odbfs/stats" "$BATS_TEST_TMPDIR/stats"
	cp "$MNT/.odbfs/metrics" "$BATS_TEST_TMPDIR/metrics"
	samples "$BATS_TEST_TMPDIR/metrics" >"$BATS_TEST_TMPDIR/samples"
	# Every figure of .odbfs/stats, and nothing else, all of one label.
	[ "$(cut -d' ' -f1 "$BATS_TEST_TMPDIR/stats")" = \
		"$(cut -d' ' -f1 "$BATS_TEST_TMPDIR/samples")" ]
	[ "$(cut -d' ' -f2 "$BATS_TEST_TMPDIR/samples" | sort -u)" = "$gitdir" ]
	agree "$BATS_TEST_TMPDIR/stats" "$BATS_TEST_TMPDIR/samples" "$gitdir"
	[ "$(metric "$BATS_TEST_TMPDIR/metrics" packs "$gitdir")" -eq 1 ]
	[ "$(metric "$BATS_TEST_TMPDIR/metrics" loose_objects "$gitdir")" -gt 0 ]
	# Reading every object moved what it should.
	for n in hits reads bytes_served rebuilds cache_hits; do
		before=$(metric "$BATS_TEST_TMPDIR/before" $n "$gitdir")
		after=$(metric "$BATS_TEST_TMPDIR/metrics" $n "$gitdir")
		[ "$after" -gt "$before" ] || { echo "$n: $before, then $after" >&2; false; }
	done
	[ "$(metric "$BATS_TEST_TMPDIR/metrics" hits "$gitdir")" -ge \
		"$(git -C "$repo" cat-file --batch-all-objects --batch-check | wc -l)" ]
}

@test "the man page's cron line leaves a copy node_exporter's user can read" {
	id nobody >/dev/null 2>&1 || skip "no user nobody to read as"
	repo=$BATS_TEST_TMPDIR/repo
	make_history "$repo"
	mount_odbfs "$repo" "$MNT"
	# Where nobody can reach: bats's own directories are root's only.
	dir=$(mktemp -d /tmp/odbfs-textfile.XXXXXX)
	chmod 755 "$dir"
	line=$(grep -F 'root  install' "$TOP/man/odbfs.1" | sed 's/\\-/-/g' |
		sed 's/^.*  root  //')
	[ -n "$line" ]
	line=${line//\/mnt\/git/$MNT}
	line=${line//\/var\/lib\/node_exporter/$dir}
	echo "$line"
	bash -c "$line"
	[ ! -e "$dir/odbfs.prom.tmp" ]
	runuser -u nobody -- cat "$dir/odbfs.prom" >"$BATS_TEST_TMPDIR/read"
	rm -rf "$dir"
	samples "$BATS_TEST_TMPDIR/read" >/dev/null
}

@test "a --root mount's metrics have a series per repository, with its git directory" {
	root=$BATS_TEST_TMPDIR/root
	make_history "$root/team/one"
	git init -q --bare -b main "$root/two.git"
	git -C "$root/team/one" push -q "$root/two.git" HEAD:refs/heads/main
	# A label value the format must escape: a quote and a backslash.
	git init -q --bare "$root/odd\"na\\me.git"
	root=$(cd "$root" && pwd -P)
	mkdir -p "$MNT"
	"$ODBFS" -f --root "$root" "$MNT" 2>"$MNT.log" 3>&- &
	ODBFS_PID=$!
	within_seconds 5 mountpoint -q "$MNT"
	check_mount_objects "$root/team/one" "$MNT/team/one"
	ls "$MNT/two.git/HEAD/tree" "$MNT/odd\"na\\me.git" >/dev/null
	cp "$MNT/team/one/.odbfs/stats" "$BATS_TEST_TMPDIR/one.stats"
	cp "$MNT/.odbfs/stats" "$BATS_TEST_TMPDIR/root.stats"
	cp "$MNT/.odbfs/metrics" "$BATS_TEST_TMPDIR/metrics"
	samples "$BATS_TEST_TMPDIR/metrics" >"$BATS_TEST_TMPDIR/samples"
	# Each repository's counters, and its store's figures, under its label.
	grep -v '^\(nodes\|cells\|cache_hits\|cache_misses\) ' "$BATS_TEST_TMPDIR/one.stats" \
		>"$BATS_TEST_TMPDIR/one.own"
	agree "$BATS_TEST_TMPDIR/one.own" "$BATS_TEST_TMPDIR/samples" "$root/team/one/.git"
	[ "$(awk -v l="$root/two.git" '$2 == l && $1 == "packs"' "$BATS_TEST_TMPDIR/samples" |
		wc -l)" -eq 1 ]
	grep -qF "odbfs_lookups_total{repository=\"$root/odd\\\"na\\\\me.git\"} " \
		"$BATS_TEST_TMPDIR/metrics"
	# The mount's own figures under the root's label, once.
	for n in repositories repositories_open nodes cells cache_hits; do
		[ "$(awk -v n="$n" -v l="$root" '$1 == n && $2 == l' "$BATS_TEST_TMPDIR/samples" |
			wc -l)" -eq 1 ]
	done
	[ "$(metric "$BATS_TEST_TMPDIR/metrics" repositories "$root")" -eq 3 ]
	[ "$(metric "$BATS_TEST_TMPDIR/metrics" repositories_open "$root")" -eq \
		"$(awk '$1 == "repositories_open" { print $2 }' "$BATS_TEST_TMPDIR/root.stats")" ]
	# What .odbfs/stats of the root counts, the series count between them.
	sum=$(awk '$1 == "misses" { s += $3 } END { print s }' "$BATS_TEST_TMPDIR/samples")
	[ "$sum" -eq "$(awk '$1 == "misses" { print $2 }' "$BATS_TEST_TMPDIR/root.stats")" ]
	sum=$(awk '$1 == "rebuilds" { s += $3 } END { print s }' "$BATS_TEST_TMPDIR/samples")
	[ "$sum" -gt 0 ]
	[ "$sum" -eq "$(awk '$1 == "rebuilds" { print $2 }' "$BATS_TEST_TMPDIR/root.stats")" ]
	# Inside a repository: its own series, and the mount's nodes.
	samples "$MNT/team/one/.odbfs/metrics" >"$BATS_TEST_TMPDIR/inside"
	[ "$(cut -d' ' -f2 "$BATS_TEST_TMPDIR/inside" | sort -u)" = \
		"$(printf '%s\n' "$root" "$root/team/one/.git" | sort)" ]
	grep -q "^nodes $root " "$BATS_TEST_TMPDIR/inside"
	grep -q "^packs $root/team/one/.git " "$BATS_TEST_TMPDIR/inside"
}

@test "a repository whose path is not UTF-8 leaves the metrics valid, and two such stay two" {
	root=$BATS_TEST_TMPDIR/root
	make_history "$root/good"
	git init -q --bare "$root/bad"$'\xff'".git"
	git init -q --bare "$root/bad"$'\xfe'".git"
	# A path that holds U+FFFD itself is told from a byte replaced.
	git init -q --bare "$root/bad"$'\xef\xbf\xbd'"FF.git"
	root=$(cd "$root" && pwd -P)
	mkdir -p "$MNT"
	"$ODBFS" -f --root "$root" "$MNT" 2>"$MNT.log" 3>&- &
	ODBFS_PID=$!
	within_seconds 5 mountpoint -q "$MNT"
	ls "$MNT/good/HEAD/tree" "$MNT/bad"$'\xff'".git" "$MNT/bad"$'\xfe'".git" \
		"$MNT/bad"$'\xef\xbf\xbd'"FF.git" >/dev/null
	cp "$MNT/.odbfs/metrics" "$BATS_TEST_TMPDIR/metrics"
	iconv -f UTF-8 -t UTF-8 "$BATS_TEST_TMPDIR/metrics" >/dev/null
	samples "$BATS_TEST_TMPDIR/metrics" >"$BATS_TEST_TMPDIR/samples"
	awk '$1 == "lookups" { print $2 }' "$BATS_TEST_TMPDIR/samples" | sort >"$BATS_TEST_TMPDIR/labels"
	cat "$BATS_TEST_TMPDIR/labels"
	r=$'\xef\xbf\xbd'
	[ "$(cat "$BATS_TEST_TMPDIR/labels")" = "$(printf '%s\n' "$root" \
		"$root/bad${r}EF${r}BF${r}BDFF.git" "$root/bad${r}FE.git" \
		"$root/bad${r}FF.git" "$root/good/.git" | sort)" ]
}
