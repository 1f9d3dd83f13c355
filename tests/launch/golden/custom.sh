#!/bin/bash
# A site script: starts the agent its own way.
set -eo pipefail
umask 077
secret_file="$(mktemp)"
trap 'rm -f -- "$secret_file"' EXIT
printf '%s\n' "$JENKINS_SECRET" > "$secret_file"
unset JENKINS_SECRET
srun -N1 -n1 java -jar /opt/jenkins/agent.jar -url "$JENKINS_URL" \
  -name "$JENKINS_AGENT_NAME" -secret "@$secret_file" -webSocket
