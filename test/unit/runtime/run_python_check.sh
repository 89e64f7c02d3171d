#!/bin/sh
# Usage: run_python_check.sh PYTHON SCRIPT ARGS...
# Runs SCRIPT with PYTHON, or exits 77 (ctest's skip code here) when PYTHON
# does not exist, so that machines without the test interpreter skip the
# cross-checks instead of failing them.
python=$1
shift
if ! command -v "$python" >/dev/null 2>&1; then
  echo "SKIP: Python interpreter '$python' not found (set TPC_PYTHON)"
  exit 77
fi
exec "$python" "$@"
