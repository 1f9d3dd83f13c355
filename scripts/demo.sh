#!/usr/bin/env bash
# The demo: installs what is missing, builds, starts the real Slurm testbed, then drives it only
# through slurmrestd with the slurmfleet CLI: ping, then submit one job, follow it and print its
# output. Must run as root (the testbed creates a rootfs and starts daemons).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/scripts/install-deps.sh"
"$top/scripts/build.sh" slurmfleet
sf="$top/build/src/cli/slurmfleet"

echo "== starting the Slurm testbed (first run: about 30 s)"
"$top/testbed/testbed.sh" start > /dev/null
eval "$("$top/testbed/testbed.sh" env)"
unset SLURM_JWT
# tokens are minted from the testbed's jwt_key for its user, renewed ahead of expiry
export SLURMFLEET_SLURM_URL="$SLURMRESTD_URL" SLURMFLEET_JWT_KEY="$SLURM_JWT_KEY" SLURMFLEET_USER="$SLURM_USER"

echo; echo "== slurmfleet ping"
"$sf" ping

script=$(mktemp); trap 'rm -f "$script"' EXIT
cat > "$script" <<'JOB'
#!/bin/bash
echo "hello from Slurm job $SLURM_JOB_ID on $(hostname), user $(id -un)"
srun -N1 -n1 bash -c 'echo "one task on $SLURMD_NODENAME"'
JOB
echo; echo "== slurmfleet jobs submit --follow"
"$sf" jobs submit --script "$script" --name slurmfleet-demo --cwd "/home/$SLURM_USER/jobs" \
  --job '{"memory_per_node": 100, "time_limit": 5}' --follow --output-root "$TESTBED_ROOT"

echo; echo "== slurmfleet jobs list --prefix slurmfleet-demo"
"$sf" jobs list --prefix slurmfleet-demo | tail -5
