#!/usr/bin/env bash
# The HTTP server benchmark under an external load generator, as users benchmark servers:
# wrk (one thread, 64 keep-alive connections) in its own process against the server of
# benches/http (`--serve PEER K`: hyper on tokio, 2 workers, a deadline per request and K
# inner deadlines per request), tower's timeout with tokio's timer beside punctual-tower
# with default deadlines. Rounds interleave the peers; each run measures 5 s after a 1 s
# warm-up. Prints requests/s and the server process's CPU per request (every thread of
# it), and the ratio of punctual's to tokio's per K, as medians over the rounds.
#
# Not part of .ci/run: its numbers depend on the machine's load. Installs wrk from
# Debian's packages when missing. Run from anywhere: `bash ci/http_wrk.sh [ROUNDS]`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
rounds=${1:-3}
if ! command -v wrk >/dev/null 2>&1; then
    apt-get update >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y wrk >/dev/null
fi
exe=$(cargo bench -p punctual-benches --bench http --no-run 2>&1 |
    sed -n 's/.*Executable .*(\(.*\))$/\1/p' | tail -n 1)
[[ -x "$exe" ]] || { echo "http_wrk.sh: no benchmark binary" >&2; exit 1; }
peers=("tower timeout + tokio" "punctual-tower + deadline")
results=$(mktemp)
trap 'rm -f "$results"' EXIT
for ((round = 1; round <= rounds; round++)); do
    for k in 0 1 4 16; do
        for peer in "${peers[@]}"; do
            coproc SERVER { "$exe" --bench --serve "$peer" "$k"; }
            read -r port <&"${SERVER[0]}"
            url="http://127.0.0.1:$port/"
            wrk -t1 -c64 -d1s "$url" >/dev/null
            echo start >&"${SERVER[1]}"
            out=$(wrk -t1 -c64 -d5s "$url")
            echo stop >&"${SERVER[1]}"
            read -r cpu_us <&"${SERVER[0]}"
            wait "$SERVER_PID" 2>/dev/null || true
            requests=$(awk '/requests in/ { print $1 }' <<<"$out")
            rps=$(awk '/Requests\/sec/ { print $2 }' <<<"$out")
            per=$(awk -v c="$cpu_us" -v n="$requests" 'BEGIN { printf "%.2f", c / n }')
            printf '%s\t%s\t%s\t%s\n' "$peer" "$k" "$rps" "$per" | tee -a "$results"
        done
    done
done
echo
echo "K  requests/s (punctual / tokio)  server CPU per request (punctual / tokio), medians"
python3 - "$results" <<'PY'
import statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
for k in ["0", "1", "4", "16"]:
    def med(peer, col):
        return statistics.median(float(r[col]) for r in rows if r[0] == peer and r[1] == k)
    t, p = "tower timeout + tokio", "punctual-tower + deadline"
    print(f"{k:>2}  {med(p, 2):>9.0f} / {med(t, 2):>9.0f} = {med(p, 2) / med(t, 2):.2f}x"
          f"   {med(p, 3):>6.1f} / {med(t, 3):>6.1f} us = {med(p, 3) / med(t, 3):.2f}x")
PY
