#!/bin/sh
# End-to-end checks of `run` and `inspect` through their command lines.
# Usage: cli_check.sh FIXTURE CLI WORKDIR [MPIRUN FLAGS...]
# With an mpirun command, the engine also runs as two MPI processes.
set -u
fixture=$1 cli=$2 work=$3
shift 3

fail() {
  echo "FAIL: $*"
  exit 1
}

# expect_error SUBSTRING CMD...: CMD exits 1 with one stderr line that
# contains SUBSTRING.
expect_error() {
  want=$1
  shift
  "$@" >"$work/stdout" 2>"$work/stderr"
  rc=$?
  [ "$rc" -eq 1 ] || fail "exit status $rc (expected 1) for: $*"
  [ "$(wc -l <"$work/stderr")" -eq 1 ] ||
    fail "expected one error line for: $*; got: $(cat "$work/stderr")"
  grep -qF -- "$want" "$work/stderr" ||
    fail "error lacks '$want': $(cat "$work/stderr")"
}

# expect_mpi_error NP WHAT PATTERN ERROR MPIRUN...: the engine run as NP MPI
# processes fails (not by the timeout) with PATTERN on stderr. WHAT names
# the run and ERROR the kind of error in the failure messages.
expect_mpi_error() {
  np=$1 what=$2 pattern=$3 error=$4
  shift 4
  timeout 120 "$@" -np "$np" "$cli" run "$e" --input "$x" >"$work/stdout" \
    2>"$work/stderr"
  rc=$?
  [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || fail "$what: exit status $rc"
  grep -q "$pattern" "$work/stderr" ||
    fail "no $error error: $(cat "$work/stderr")"
}

rm -rf "$work"
mkdir -p "$work"
"$fixture" make "$work" || fail "cannot build the test engine"
e=$work/engine
x="x=$work/x.npy"

"$cli" run "$e" --input "$x" --output-dir "$work/out" --json --warmup 1 \
  --iterations 3 >"$work/stdout" 2>"$work/stderr" ||
  fail "run failed: $(cat "$work/stderr")"
[ "$(wc -l <"$work/stdout")" -eq 1 ] || fail "--json printed more than one line"
grep -q '"latency_ms"' "$work/stdout" || fail "no latency_ms in $(cat "$work/stdout")"
"$fixture" compare "$work/out/y.npy" "$work/expected.npy" ||
  fail "in-process output differs from the reference"

"$cli" run "$e" --input "$x" >"$work/stdout" 2>"$work/stderr" ||
  fail "run without --output-dir failed: $(cat "$work/stderr")"
grep -q "latency: mean .* median .* p90 .* p99 " "$work/stdout" || fail "no latency line"

"$cli" inspect "$e" --json >"$work/inspect.json" || fail "inspect failed"
grep -q '"tp_role": "column"' "$work/inspect.json" || fail "inspect lacks tp_role"
"$cli" inspect "$e" >"$work/inspect.txt" || fail "inspect (text) failed"
grep -q "AllGather x1" "$work/inspect.txt" || fail "inspect lacks the AllGather"

expect_error "input 'x' (f32[3x4]) is missing" "$cli" run "$e"
expect_error "the engine has no input 'z'" "$cli" run "$e" --input "$x" \
  --input "z=$work/x.npy"
expect_error "--threads must be an integer" "$cli" run "$e" --input "$x" \
  --threads 0
expect_error "malformed --input" "$cli" run "$e" --input "$work/x.npy"
expect_error "--comm must be" "$cli" run "$e" --input "$x" --comm nccl
expect_error "holds f32[3x5]" "$cli" run "$e" --input "x=$work/expected.npy"
expect_error "engine.json: missing" "$cli" run "$work" --input "$x"
expect_error "engine.json: missing" "$cli" inspect "$work"

if [ $# -gt 0 ]; then
  timeout 120 "$@" -np 2 "$cli" run "$e" --input "$x" --output-dir \
    "$work/out-mpi" --json --iterations 2 >"$work/stdout" 2>"$work/stderr" ||
    fail "mpirun -np 2 failed: $(cat "$work/stderr")"
  [ "$(wc -l <"$work/stdout")" -eq 1 ] ||
    fail "under MPI, --json printed: $(cat "$work/stdout")"
  grep -q '"tp":2' "$work/stdout" || fail "no tp in $(cat "$work/stdout")"
  "$fixture" compare "$work/out-mpi/y.npy" "$work/expected.npy" ||
    fail "MPI output differs from the reference"

  expect_mpi_error 3 "mpirun -np 3 on a tp-2 engine" "run it with -np 2" \
    world-size "$@"

  rm "$e/rank1.plan"
  expect_mpi_error 2 "mpirun with a missing rank-1 plan" \
    "rank 1: rank1.plan: missing" missing-file "$@"
fi
echo "cli checks passed"
