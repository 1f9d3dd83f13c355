#!/usr/bin/env bash
# Records real slurmrestd responses from the project's testbed into tests/slurm/testdata/<version>/,
# for the unit tests of the dialects and the REST client. Re-run after a Slurm upgrade:
#   sudo testbed/testbed.sh start && tests/slurm/record_testdata.sh
# Volatile fields stay as recorded; the tests assert on the shapes and on values set here.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
eval "$("$top/testbed/testbed.sh" env 2>/dev/null)"
out="$top/tests/slurm/testdata"
H="X-SLURM-USER-TOKEN: $SLURM_JWT"

get() { curl -s -H "$H" "$SLURMRESTD_URL$1"; }
post() { curl -s -X POST -H "$H" -H 'Content-Type: application/json' --data-binary "$2" "$SLURMRESTD_URL$1"; }
del() { curl -s -X DELETE -H "$H" -H 'Content-Type: application/json' --data-binary "$2" "$SLURMRESTD_URL$1"; }
# rec NAME curl-args...: the body goes to NAME.json and the HTTP status to NAME.status
rec() { local name=$1; shift; curl -s -o "$d/$name.json" -w '%{http_code}\n' "$@" > "$d/$name.status"; }
job_id() { python3 -c 'import json,sys; print(json.load(sys.stdin)["job_id"])'; }
wait_state() {  # version id state...
  for _ in $(seq 1 100); do
    s=$(get "/slurm/$1/jobs/state/?job_id=$2" | python3 -c 'import json,sys; j=json.load(sys.stdin)["jobs"]; print(j[0]["state"][0] if j else "")')
    for want in "${@:3}"; do [ "$s" = "$want" ] && return 0; done
    sleep 0.2
  done
  echo "job $2 never reached $*" >&2; return 1
}

for v in v0.0.42 v0.0.43 v0.0.44 v0.0.45; do
  d="$out/$v"; mkdir -p "$d"; p="/slurm/$v"
  echo "recording $v" >&2
  rec ping -H "$H" "$SLURMRESTD_URL$p/ping/"
  job='{"job":{"name":"rec-'$v'","partition":"debug","current_working_directory":"/home/ci/jobs","environment":["PATH=/usr/bin:/bin"],"cpus_per_task":1,"memory_per_node":{"set":true,"number":100},"time_limit":{"set":true,"number":5},"comment":"slurmfleet:rec","script":"#!/bin/bash\necho hello\nsleep 60\n"}}'
  rec submit -X POST -H "$H" -H 'Content-Type: application/json' --data-binary "$job" "$SLURMRESTD_URL$p/job/submit"
  id=$(job_id < "$d/submit.json")
  wait_state "$v" "$id" RUNNING
  rec job_running -H "$H" "$SLURMRESTD_URL$p/job/$id"
  rec jobs_state -H "$H" "$SLURMRESTD_URL$p/jobs/state/?job_id=$id"
  rec jobs -H "$H" "$SLURMRESTD_URL$p/jobs/"
  lu=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["last_update"]["number"])' < "$d/jobs.json")
  sleep 1.1
  rec jobs_unchanged -H "$H" "$SLURMRESTD_URL$p/jobs/?update_time=$((lu + 1))"
  rec cancel -X DELETE -H "$H" -H 'Content-Type: application/json' --data-binary '{"jobs":["'"$id"'"]}' "$SLURMRESTD_URL$p/jobs/"
  wait_state "$v" "$id" CANCELLED
  rec cancel_again -X DELETE -H "$H" -H 'Content-Type: application/json' --data-binary '{"jobs":["'"$id"'"]}' "$SLURMRESTD_URL$p/jobs/"
  rec job_cancelled -H "$H" "$SLURMRESTD_URL$p/job/$id"
  rec job_unknown -H "$H" "$SLURMRESTD_URL$p/job/999999"
  rec cancel_unknown -X DELETE -H "$H" -H 'Content-Type: application/json' --data-binary '{"jobs":["999999"]}' "$SLURMRESTD_URL$p/jobs/"
  rec submit_wrong_type -X POST -H "$H" -H 'Content-Type: application/json' --data-binary '{"job":{"name":"rec-bad","current_working_directory":"/tmp","environment":["PATH=/bin"],"cpus_per_task":"two","script":"#!/bin/bash\ntrue\n"}}' "$SLURMRESTD_URL$p/job/submit"
  rec submit_empty -X POST -H "$H" -H 'Content-Type: application/json' --data-binary '{}' "$SLURMRESTD_URL$p/job/submit"
  rec ping_bad_token -H "X-SLURM-USER-TOKEN: garbage" "$SLURMRESTD_URL$p/ping/"
  rec jobs_bad_token -H "X-SLURM-USER-TOKEN: garbage" "$SLURMRESTD_URL$p/jobs/"
  rec jobs_no_token "$SLURMRESTD_URL$p/jobs/"
  het='{"script":"#!/bin/bash\nsleep 60\n","jobs":[{"name":"rec-het","current_working_directory":"/home/ci/jobs","environment":["PATH=/usr/bin:/bin"],"memory_per_node":{"set":true,"number":100}},{"name":"rec-het","current_working_directory":"/home/ci/jobs","environment":["PATH=/usr/bin:/bin"],"memory_per_node":{"set":true,"number":100}}]}'
  rec submit_het -X POST -H "$H" -H 'Content-Type: application/json' --data-binary "$het" "$SLURMRESTD_URL$p/job/submit"
  hid=$(job_id < "$d/submit_het.json")
  wait_state "$v" "$hid" RUNNING PENDING
  sleep 6  # the backfill scheduler (bf_interval=5) starts het jobs
  rec job_het -H "$H" "$SLURMRESTD_URL$p/job/$hid"
  del "$p/jobs/" '{"jobs":["'"$hid"'"]}' > /dev/null
done
echo "recorded into $out" >&2
