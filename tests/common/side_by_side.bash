# side_by_side.bash -- test cases that mostly wait (on a timeout, a sleep, mpirun's grace period) run side
# by side; sourced by tests/cli/cli_harness.bash and tests/mpi/mpi_harness.bash, not a test.
#   bg_run DIR CMD...  runs CMD (a function of the script that counts with ok/bad) in the background, in
#                      a subshell where T=DIR (a folder of its own, made here: the case's files go there,
#                      never into another case's); at most BG_MAX (default 6) cases at a time
#   bg_wait            waits for them, prints their messages and adds their counts to pass and fail
#                      (a case that left no count is a failure)
bg_dirs=()
bg_run() {
  local dir=$1
  shift
  mkdir -p "$dir" || { bad "cannot make $dir"; return; }
  while [ "$(jobs -rp | wc -l)" -ge "${BG_MAX:-6}" ]; do wait -n; done
  (T=$dir; pass=0; fail=0; "$@"; echo "$pass $fail" >"$dir/.counts") >"$dir/.log" 2>&1 &
  bg_dirs+=("$dir")
}
bg_wait() {
  local d p f
  wait
  for d in "${bg_dirs[@]}"; do
    if read -r p f 2>/dev/null <"$d/.counts"; then
      pass=$((pass + p)); fail=$((fail + f)); cat "$d/.log"
    else
      bad "a case run side by side ($d) left no count: $(cat "$d/.log")"
    fi
  done
  bg_dirs=()
}
