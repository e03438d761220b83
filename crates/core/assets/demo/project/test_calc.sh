# Tests for calc.sh: one PASS or FAIL line per case; exits 1 if any case failed.
. ./calc.sh

failed=0

# check NAME EXPECTED ACTUAL
check() {
  if [ "$3" = "$2" ]; then
    echo "PASS $1"
  else
    echo "FAIL $1: expected $2, got $3"
    failed=1
  fi
}

check "add 2 3" 5 "$(add 2 3)"
check "sub 7 4" 3 "$(sub 7 4)"
check "mul 6 7" 42 "$(mul 6 7)"

exit $failed
