#!/bin/bash
# slurmfleet agent lab-apptainer-custom-java-1712345678901-7: cloud lab, template apptainer-custom-java, apptainer launch.
set -eo pipefail

# Slurm starts the job with only the variables of the request; builds still want USER and
# HOME (git refuses to run without HOME).
USER="${USER:-$(id -un)}"
HOME="${HOME:-$(getent passwd "$USER" | cut -d: -f6)}"
export USER HOME

workdir=/tmp/jenkins
agent_dir=/tmp/jenkins/agents/lab-apptainer-custom-java-1712345678901-7
secret_file="$agent_dir/secret"

# The agent's private directory: remoteFS and remoting -workDir, so two agents on one node
# never share a workspace. It is removed when the job ends, however it ends.
job_umask="$(umask)"
umask 077
mkdir -p -- "$workdir/agents"
if [ -L "$workdir/agents" ] || [ ! -O "$workdir/agents" ]; then
  echo "slurmfleet: $workdir/agents must be a directory owned by $USER" >&2
  exit 1
fi
mkdir -m 0700 -- "$agent_dir"
cleanup() {
  rm -rf -- "$agent_dir"
}
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT
trap 'exit 129' HUP

# The secret goes from the environment into a 0600 file, never onto a command line where
# anyone on the node could read it; builds do not inherit it.
printf '%s\n' "$JENKINS_SECRET" > "$secret_file"
unset JENKINS_SECRET
# Builds create files as the job would without us (shared caches, published artifacts).
umask "$job_umask"

# One agent, on this node, in a step that overlaps the allocation: builds may use all of it.
srun -N1 -n1 --overlap --nodelist="$SLURMD_NODENAME" \
  apptainer exec --bind "$agent_dir" /images/tools.sif \
  /usr/lib/jvm/java-21/bin/java -jar /opt/agent.jar \
  -url "$JENKINS_URL" -name "$JENKINS_AGENT_NAME" -secret "@$secret_file" \
  -webSocket -workDir "$agent_dir" -noReconnectAfter 10m
