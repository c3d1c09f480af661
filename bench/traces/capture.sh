#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR MIT
# Re-capture the bundled traces (bench/traces/*.strace.gz) on this machine.
# Each is `strace -f -tt -e trace=memory,process -o FILE program...`, then
# anonymised (paths under /root and /home/<user> become <HOME>) and gzip'd.
# Usage: bench/traces/capture.sh [outdir]   (default: bench/traces)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=${1:-$here}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cap() { # name program...
	local name=$1
	shift
	strace -f -tt -e trace=memory,process -o "$tmp/$name.txt" "$@" >/dev/null
	sed -E -e 's#/root(/[^",)]*)?#<HOME>\1#g' -e 's#/home/[^/",)]+#<HOME>#g' \
		"$tmp/$name.txt" | gzip -9n >"$out/$name.strace.gz"
	echo "$name: $(wc -l <"$tmp/$name.txt") lines -> $out/$name.strace.gz"
}
cc -O2 -pthread -o "$tmp/allocheavy" "$here/gen/allocheavy.c"
cap node-codegen node "$here/gen/codegen.js"
cap python-threads /usr/bin/python3 "$here/gen/threads.py"
cap gcc-compile gcc -O2 -I "$repo/include" -c "$repo/lib/luf.c" -o "$tmp/luf.o"
cap allocheavy "$tmp/allocheavy"
