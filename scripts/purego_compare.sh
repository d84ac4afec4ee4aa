#!/bin/sh
# Runs scripts/demo.star (5 epochs on the embedded MNIST subset) with the
# cgo build ($1) and the pure-Go build ($2) and checks that every cost
# they print agrees within 1e-5 relative and that the test errors are
# equal. Called by make test-purego.
set -e
cgo=$1 pure=$2
a=$(mktemp) b=$(mktemp)
trap 'rm -f "$a" "$b"' EXIT
"$cgo" run scripts/demo.star 2>&1 | grep -E 'cost|test error' >"$a"
"$pure" run scripts/demo.star 2>&1 | grep -E 'cost|test error' >"$b"
paste -d '|' "$a" "$b" | awk -F'|' '
  { n++
    na = split($1, x, ":"); nb = split($2, y, ":")
    if (x[1] != y[1]) { print "line " n " differs: " $1 " / " $2; bad = 1; next }
    if (x[1] ~ /test error/) { if ($1 != $2) { print "test errors differ: " $1 " / " $2; bad = 1 }; next }
    d = x[2] - y[2]; if (d < 0) d = -d; m = x[2]; if (m < 0) m = -m
    if (d > 1e-5 * m + 1e-7) { print "cost differs beyond 1e-5: " $1 " / " $2; bad = 1 }
  }
  END { if (n == 0) { print "no costs printed"; exit 1 }
        if (bad) exit 1
        print "demo.star: " n " printed values of the cgo and pure-Go builds agree within 1e-5" }'
