#!/usr/bin/env bash
# The demo: installs what is missing, builds, starts the real Slurm testbed, then drives it only
# through slurmrestd with the slurmfleet CLI: ping, then submit one job, follow it and print its
# output. Then the Jenkins side: `slurmfleet serve` watches a Jenkins whose queue holds 3 builds,
# runs one inbound agent per build as a Slurm job on the testbed, and removes node and job after
# each build. The Jenkins is the project's test-only stand-in (tests/jenkins/standin/), since no
# real Jenkins runs on the test machine; a real one is configured the same way (docs/jenkins.md).
# Must run as root (the testbed creates a rootfs and starts daemons).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/scripts/install-deps.sh"
"$top/scripts/build.sh" slurmfleet jenkins_standin_main
sf="$top/build/src/cli/slurmfleet"
standin="$top/build/tests/jenkins/standin/jenkins_standin_main"

work=$(mktemp -d)
daemon_pid="" standin_pid="" instance="demo$(date +%s)"
# "ID NAME" of every pending or running Slurm job that carries this demo instance's tag.
live_jobs() {
  "$sf" jobs list --json | python3 -c '
import json, sys
tag = "slurmfleet:" + sys.argv[1] + ":"
for j in json.load(sys.stdin):
    if j.get("comment", "").startswith(tag) and j.get("state") in ("PENDING", "RUNNING", "SUSPENDED"):
        print(j["job_id"], j["name"])' "$instance"
}
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
# stats_field EXPR: a Python expression over the stand-in's GET /standin/stats (as `s`).
stats_field() {
  curl -fsS "${jenkins_url}standin/stats" | python3 -c 'import json, sys; s = json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"
}
# wait_for SECONDS DESCRIPTION COMMAND...: polls COMMAND every 0.5 s until it succeeds.
wait_for() {
  local limit=$1 what=$2; shift 2
  local deadline=$((SECONDS + limit))
  until "$@"; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "timed out after ${limit}s waiting for $what" >&2
      [ -f "$work/serve.log" ] && { echo "--- slurmfleet serve log (last 40 lines)" >&2; tail -40 "$work/serve.log" >&2; }
      return 1
    fi
    sleep 0.5
  done
}

stop_daemon() {  # SIGTERM: the daemon drains and exits 0
  [ -n "$daemon_pid" ] || return 0
  kill -TERM "$daemon_pid" 2>/dev/null || true
  local rc=0; wait "$daemon_pid" || rc=$?
  daemon_pid=""
  return "$rc"
}
stop_standin() {
  [ -n "$standin_pid" ] || return 0
  kill -TERM "$standin_pid" 2>/dev/null || true
  wait "$standin_pid" || true
  standin_pid=""
}
cleanup() {
  local rc=$?
  stop_daemon || true
  stop_standin
  if [ "$rc" -ne 0 ]; then
    # a failed run leaves nothing of this demo in Slurm either
    if [ -n "${SLURMFLEET_SLURM_URL:-}" ]; then
      { live_jobs || true; } | while read -r id _; do "$sf" jobs cancel "$id" > /dev/null || true; done
    fi
    echo "demo failed (exit $rc); its files and logs are in $work" >&2
  else
    rm -rf "$work"
  fi
}
trap cleanup EXIT

echo "== starting the Slurm testbed (first run: about 30 s)"
"$top/testbed/testbed.sh" start > /dev/null
eval "$("$top/testbed/testbed.sh" env)"
unset SLURM_JWT
# tokens are minted from the testbed's jwt_key for its user, renewed ahead of expiry
export SLURMFLEET_SLURM_URL="$SLURMRESTD_URL" SLURMFLEET_JWT_KEY="$SLURM_JWT_KEY" SLURMFLEET_USER="$SLURM_USER"

echo; echo "== slurmfleet ping"
"$sf" ping

script="$work/job.sh"
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

# ---- The Jenkins side ----------------------------------------------------------------------

echo; echo "== Jenkins agents on Slurm"
echo "   The Jenkins here is slurmfleet's stand-in for Jenkins' HTTP API (tests/jenkins/standin/),"
echo "   because no real Jenkins runs on this test machine. slurmfleet does not know the difference:"
echo "   a real Jenkins is configured the same way (jenkins.url, user and API token; docs/jenkins.md)."
echo "   Its agent (standin-java, playing agent.jar) runs in real Slurm jobs on the testbed."

# The stand-in agent, as `java`, and a dummy agent.jar, where the testbed's jobs see them.
agent_dir=/opt/slurmfleet-standin
install -d "$TESTBED_ROOT$agent_dir"
install -m 0755 "$top/tests/jenkins/standin/standin-java" "$TESTBED_ROOT$agent_dir/java"
printf 'PK stand-in agent.jar' > "$TESTBED_ROOT$agent_dir/agent.jar"
chmod 0644 "$TESTBED_ROOT$agent_dir/agent.jar"

echo; echo "== starting the stand-in Jenkins with 3 queued builds for label 'linux'"
"$standin" --port 0 --token-file "$work/jenkins.token" --print-url \
  --enqueue demo/build-1:linux:5 --enqueue demo/build-2:linux:5 --enqueue demo/build-3:linux:5 \
  > "$work/standin.url" 2> "$work/standin.log" &
standin_pid=$!
wait_for 10 "the stand-in Jenkins" test -s "$work/standin.url"
jenkins_url=$(head -1 "$work/standin.url")
echo "stand-in Jenkins at $jenkins_url (queue: 3 freestyle builds of 5 s, label linux)"

port=$(free_port)
api_token=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
(umask 077; printf 'read demo %s\n' "$api_token" > "$work/api-tokens"; printf '%s\n' "$api_token" > "$work/api.token")
cat > "$work/slurmfleet.yaml" <<YAML
jenkins:
  url: $jenkins_url
  credentials: {user: admin, apiTokenFile: $work/jenkins.token}
  pollMs: 500
  clouds:
    - slurm:
        name: testbed
        slurmRestApiUrl: $SLURMRESTD_URL
        credentials: {user: $SLURM_USER, jwtKeyFile: $SLURM_JWT_KEY}
        maxAgents: 4
        jobTemplates:
          - name: cpu
            label: linux
            workingDirectory: /tmp/jenkins
            memoryPerNode: 100
            instanceCap: 3
            agentLaunch: {javaPath: $agent_dir/java, jarPath: $agent_dir/agent.jar}
daemon:
  listen: 127.0.0.1:$port
  stateFile: $work/state.db
  apiTokensFile: $work/api-tokens
  instance: $instance
  pollFastMs: 500
YAML
export SLURMFLEET_DAEMON_URL="http://127.0.0.1:$port" SLURMFLEET_API_TOKEN_FILE="$work/api.token"

echo; echo "== slurmfleet serve --config $work/slurmfleet.yaml (instance $instance)"
"$sf" validate --config "$work/slurmfleet.yaml"
"$sf" serve --config "$work/slurmfleet.yaml" 2> "$work/serve.log" &
daemon_pid=$!
daemon_up() { curl -fsS -o /dev/null "$SLURMFLEET_DAEMON_URL/api/v1/health" 2>/dev/null; }
wait_for 30 "slurmfleet serve to answer" daemon_up
builds_done() {
  local n
  n=$(stats_field 'len(s["completedBuilds"])') || return 1
  [ "$n" != "$last_done" ] && { echo "  $n of 3 builds completed"; last_done=$n; }
  [ "$n" -ge 3 ]
}
last_done=""
wait_for 180 "the 3 builds to complete" builds_done
echo "results: $(stats_field '", ".join(b["job"] + " #" + str(b["number"]) + " " + b["result"] + " on " + b["builtOn"] for b in s["completedBuilds"])')"
[ "$(stats_field 'all(b["result"] == "SUCCESS" for b in s["completedBuilds"])')" = True ] \
  || { echo "a build did not succeed" >&2; exit 1; }

no_nodes() { [ "$(stats_field 'len(s["nodes"])')" = 0 ]; }
no_live_agents() { [[ "$("$sf" agents)" == "no live agents"* ]]; }
no_live_jobs() { [ -z "$(live_jobs)" ]; }
# after its one build, each agent's node is deleted and its Slurm job cancelled
wait_for 60 "every agent to end" no_live_agents
wait_for 60 "the Jenkins nodes to be deleted" no_nodes
wait_for 60 "the Slurm jobs to end" no_live_jobs

echo; echo "== slurmfleet agents --all"
"$sf" agents --all
echo; echo "== slurmfleet activities"
"$sf" activities --limit 1000

echo; echo "== stopping slurmfleet (SIGTERM) and the stand-in Jenkins, checking that nothing is left"
nodes="$(stats_field 'len(s["nodes"])') nodes left in the stand-in Jenkins (created $(stats_field 's["nodesCreated"]'), at most $(stats_field 's["maxNodesSeen"]') at once)"
stop_daemon || { echo "slurmfleet serve did not exit cleanly" >&2; exit 1; }
stop_standin
echo "slurmfleet serve drained and exited 0; the stand-in Jenkins stopped"
echo "$nodes"
left=$(live_jobs)
echo "$(printf '%s' "$left" | grep -c .) live Slurm jobs carry the tag slurmfleet:$instance"
[ -z "$left" ] || { echo "left in Slurm: $left" >&2; exit 1; }
