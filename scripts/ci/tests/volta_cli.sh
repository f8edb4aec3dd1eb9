# shellcheck shell=bash
# Shell helpers of the tests that drive the volta and volta-audit binaries (kill_loop_test.sh,
# full_disk_test.sh, flake_rerun_test.sh, ../compat_verify.sh). Source it; it sets nothing else.

# audit_value AUDIT DB SQL: the first row of SQL's result as `AUDIT query` prints it, its
# spaces squeezed and trimmed.
audit_value() {
  "$1" query --db "$2" --sql "$3" | sed -n 2p | tr -s ' ' | sed 's/^ //; s/ *$//'
}

# write_training_text FILE: 200 lines of a pangram, text enough for a few training steps.
write_training_text() {
  for _ in $(seq 200); do echo "the quick brown fox jumps over the lazy dog"; done >"$1"
}
