#!/usr/bin/env bash
# The test command: installs what is missing (Debian packages), builds warnings-clean, starts the
# real Slurm testbed (testbed/testbed.sh) and runs every test, unit and integration.
#   scripts/test.sh              normal build in build/
#   scripts/test.sh --sanitize   the same under AddressSanitizer + UBSan, in build-asan/
# Must run as root (the testbed creates a rootfs and starts daemons).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/scripts/install-deps.sh"
"$top/scripts/build.sh" "$@"
dir="$top/build"; [ "${1:-}" = --sanitize ] && dir="$top/build-asan"

"$top/testbed/testbed.sh" start > /dev/null
eval "$("$top/testbed/testbed.sh" env)"
export SLURMRESTD_URL SLURMRESTD_SOCKET SLURM_USER SLURM_JWT_KEY TESTBED_ROOT TESTBED_SUITE SLURM_API_VERSION
unset SLURM_JWT  # tests mint their own tokens

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# unit tests in parallel; integration tests one at a time, since they share the two testbed nodes
ctest --test-dir "$dir" -L unit -j "$(nproc)" --output-on-failure
if [ "$TESTBED_APPTAINER" = 1 ]; then
  ctest --test-dir "$dir" -L integration --output-on-failure
else
  # Apptainer agents are tested where Debian packages apptainer (the sid testbed, Slurm 26.05);
  # the launch they test does not depend on Slurm's version.
  echo "Not run here: the tests labelled 'integration-apptainer' ($TESTBED_SUITE's testbed has no apptainer)"
  ctest --test-dir "$dir" -L integration -LE apptainer --output-on-failure
fi
