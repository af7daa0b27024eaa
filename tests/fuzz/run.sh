#!/bin/sh
# Fuzzes one target for a bounded time: run.sh TARGET CORPUS SECONDS [DICT].
# libFuzzer adds what it finds to the corpus directory it is given, so it
# works on a scratch copy and the tree stays as it is; a crashing input is
# written to the current directory as crash-<sha1> (ctest: the build's
# tests/fuzz) for `TARGET crash-<sha1>` to reproduce.
set -eu
target=$1 corpus=$2 seconds=$3 dict=${4:-}
# In memory where the machine has /dev/shm: the targets that write files
# (cache, kernelspec, optimus) then run ten times the inputs.
scratch=$(mktemp -d -p /dev/shm 2>/dev/null || mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cp -R "$corpus" "$scratch/corpus"
mkdir "$scratch/tmp"
# -timeout: an input that takes seconds is a hang worth reporting;
# -rss_limit_mb: a parser that allocates without bound is one too.
set -- -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
[ -z "$dict" ] || set -- "$@" -dict="$dict"
TMPDIR="$scratch/tmp" "$target" "$@" "$scratch/corpus"
