#!/bin/sh
# run.sh REIN PROJECT: one `rein -p` in PROJECT with a fresh REIN_HOME, its first step a
# `bash` call (so the first checkpoint is waited for); prints what rein said of the
# checkpoint, the wall time and peak memory (/usr/bin/time), and the record's size.
# BENCHMARKS.md, "2026-12-07, issue 42", built its project from ~/.cargo/registry/src.
REIN=$1; P=$2; W=$(mktemp -d); PORT=${PORT:-18643}
HERE=$(dirname "$0")
python3 "$HERE/server.py" $PORT 2>/dev/null & SERVER=$!
sleep 0.5
REIN_HOME=$W/home HOME=$W /usr/bin/time -f "%e s wall, %M KiB max RSS" \
  "$REIN" -p hi --yes --model fake --base-url http://127.0.0.1:$PORT/v1 --cwd "$P" > $W/out 2> $W/err
grep -i "checkpoint\|wall" $W/err | cut -c1-150
du -sh $W/home/checkpoints | cut -f1
kill $SERVER; rm -rf $W
