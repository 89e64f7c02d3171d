#!/bin/sh
# Usage: mpi_kill_check.sh LIMIT_SECONDS MPIRUN [MPIRUN ARGS...]
# Runs the given mpirun command line, in which one rank kills itself. It must
# end with a non-zero status within LIMIT_SECONDS. A hang is cut short at
# 3 x LIMIT_SECONDS. (mpirun passes on the killed rank's status, 137 for
# SIGKILL, so the status alone cannot tell a hang from the expected end.)
limit=$1
shift
start=$(date +%s)
timeout -k 5 $((limit * 3)) "$@"
rc=$?
elapsed=$(( $(date +%s) - start ))
echo "mpirun exited with status $rc after ${elapsed}s (limit ${limit}s)"
if [ "$rc" -eq 0 ]; then
  echo "FAIL: mpirun reported success although a rank was killed"
  exit 1
fi
if [ "$elapsed" -gt "$limit" ]; then
  echo "FAIL: the job took longer than ${limit}s to stop (hung?)"
  exit 1
fi
echo "OK"
exit 0
