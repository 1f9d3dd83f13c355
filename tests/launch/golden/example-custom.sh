#!/bin/bash
set -eo pipefail
umask 077
secret_file="$(mktemp)"
trap 'rm -f -- "$secret_file"' EXIT
printf '%s\n' "$JENKINS_SECRET" > "$secret_file"
unset JENKINS_SECRET
srun -N1 -n1 java -jar /opt/jenkins/agent.jar -url "$JENKINS_URL" \
  -name "$JENKINS_AGENT_NAME" -secret "@$secret_file" -webSocket \
  -workDir "/tmp/jenkins/$JENKINS_AGENT_NAME" -noReconnectAfter 10m
