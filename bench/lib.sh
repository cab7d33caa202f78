# bench/lib.sh: helpers the bench scripts share (sourced by bench/run.sh
# and bench/scale.sh). The caller sets top (the checkout), table (the
# Markdown file rows go to) and mnts=() (mount_at adds to it; cleanup
# unmounts what it holds).

cleanup() {
	local m
	for m in "${mnts[@]}"; do fusermount3 -u "$m" 2>/dev/null || :; done
}
row() { printf '| %s |\n' "$*" | tee -a "$table"; }
say() { echo "$@" | tee -a "$table"; }

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }
# secs CMD...: wall seconds of one run of CMD.
secs() {
	local t0=$EPOCHREALTIME
	"$@" >/dev/null
	local t1=$EPOCHREALTIME
	awk -v a="${t0/./}" -v b="${t1/./}" 'BEGIN { printf "%.4f\n", (b - a) / 1e6 }'
}
# med N CMD...: median seconds of N runs.
med() {
	local n=$1
	shift
	for ((i = 0; i < n; i++)); do secs "$@"; done | median
}

mount_at() {	# mount_at REPO MNT [opts]: daemonized odbfs
	local r=$1 m=$2
	shift 2
	mkdir -p "$m"
	fusermount3 -u "$m" 2>/dev/null || :
	"$top/odbfs" "$@" "$r" "$m"
	mnts+=("$m")
}
daemon_pid() { pgrep -f "odbfs .* $1\$" | head -1; }
rss_mb() { awk -v k="${2:-VmRSS}:" '$1 == k { printf "%.1f", $2 / 1024 }' "/proc/$1/status"; }
# stat_of MNT KEY: a counter of the daemon's .odbfs/stats.
stat_of() { awk -v k="$2" '$1 == k { print $2 }' "$1/.odbfs/stats"; }

# kb_of PID FIELD: FIELD of /proc/PID/status (kB) in $kb, 0 once PID is
# gone; no process started, so that it can sample every 100 ms.
kb_of() {
	local k v _
	kb=0
	while read -r k v _; do
		[ "$k" = "$2:" ] && { kb=$v; return 0; }
	done <"/proc/$1/status" 2>/dev/null || :
}
# watch_rss CPID DPID [CAP_KB]: until process CPID ends, DPID's RssAnon
# every 100 ms; the largest in $peak_kb. Past CAP_KB (0: no cap), CPID is
# sent SIGTERM (timeout(1) passes it on to its command) and $capped set,
# so that a runaway daemon stops before the machine runs out of memory.
watch_rss() {
	local cpid=$1 dpid=$2 cap=${3:-0}
	peak_kb=0 capped=
	while kill -0 "$cpid" 2>/dev/null; do
		kb_of "$dpid" RssAnon
		((kb > peak_kb)) && peak_kb=$kb
		if ((cap > 0 && kb > cap)) && [ -z "$capped" ]; then
			capped=1
			kill -TERM "$cpid" 2>/dev/null || :
		fi
		sleep 0.1
	done
}

# made DIR WHAT CMD...: unless an earlier run made DIR (DIR/.done), make
# it with CMD (which removes DIR first); DIR/.done holds the seconds it took.
made() {
	local dir=$1 what=$2 t0
	shift 2
	[ -f "$dir/.done" ] && return 0
	echo "generating $what..." >&2
	t0=$EPOCHREALTIME
	"$@" >&2
	awk -v a="${t0/./}" -v b="${EPOCHREALTIME/./}" 'BEGIN { printf "%.1f\n", (b - a) / 1e6 }' >"$dir/.done"
}
