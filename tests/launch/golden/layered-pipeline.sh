#!/bin/bash
# slurmfleet agent lab-native-1712345678901-7: cloud lab, template native, native launch.
set -eo pipefail

# Slurm starts the job with only the variables of the request; builds still want USER and
# HOME (git refuses to run without HOME).
USER="${USER:-$(id -un)}"
HOME="${HOME:-$(getent passwd "$USER" | cut -d: -f6)}"
export USER HOME

slurmfleet_workdir='/scratch/jenkins ci'
slurmfleet_agent_dir='/scratch/jenkins ci/agents/lab-native-1712345678901-7'
slurmfleet_secret_file="$slurmfleet_agent_dir/secret"
# The cleanup removes $slurmfleet_agent_dir: a setup script cannot point it elsewhere.
readonly slurmfleet_workdir slurmfleet_agent_dir slurmfleet_secret_file

# The agent's private directory: remoteFS and remoting -workDir, so two agents on one node
# never share a workspace. It is removed when the job ends, however it ends.
job_umask="$(umask)"
umask 077
mkdir -p -- "$slurmfleet_workdir/agents"
if [ -L "$slurmfleet_workdir/agents" ] || [ ! -O "$slurmfleet_workdir/agents" ]; then
  echo "slurmfleet: $slurmfleet_workdir/agents must be a directory owned by $USER" >&2
  exit 1
fi
mkdir -m 0700 -- "$slurmfleet_agent_dir"
slurmfleet_cleanup() {
  rm -rf -- "$slurmfleet_agent_dir"
}
trap slurmfleet_cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT
trap 'exit 129' HUP

# The secret goes from the environment into a 0600 file, never onto a command line where
# anyone on the node could read it; builds do not inherit it.
printf '%s\n' "$JENKINS_SECRET" > "$slurmfleet_secret_file"
unset JENKINS_SECRET
# Builds create files as the job would without us (shared caches, published artifacts).
umask "$job_umask"

# `module` as a login shell has it: a job submitted through slurmrestd inherits none.
if ! command -v module > /dev/null 2>&1; then
  for modules_init in /etc/profile.d/lmod.sh /etc/profile.d/modules.sh /etc/profile.d/z00_lmod.sh; do
    if [ -r "$modules_init" ]; then
      set +e
      # shellcheck source=/dev/null
      . "$modules_init"
      set -e
      break
    fi
  done
fi

# Setup script of the template.
module load java/21
export GRADLE_OPTS='-Xmx2g'
# Our cleanup again, should the setup script have set traps of its own.
trap slurmfleet_cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT
trap 'exit 129' HUP

# agent.jar needs Java 17 or newer: say so here, not as a JVM error later.
java_cmd=/opt/jdk-17/bin/java
java_says="$("$java_cmd" -version 2>&1)" || true
java_version=
java_rest=${java_says#*\ version\ \"}
if [ "$java_rest" != "$java_says" ]; then
  java_version=${java_rest%%\"*}
fi
java_major=${java_version%%[!0-9]*}
if [ "$java_major" = 1 ]; then  # "1.8.0_392" is Java 8
  java_major=${java_version#1.}
  java_major=${java_major%%[!0-9]*}
fi
if [ -z "$java_major" ]; then
  java_nl="
"
  java_first=${java_says%%"$java_nl"*}
  echo "slurmfleet: cannot tell the version of Java \"$java_cmd\" on $SLURMD_NODENAME \
($java_first): set the template's javaPath, or load Java in its setupScript" >&2
  exit 1
fi
if [ "$java_major" -lt 17 ]; then
  echo "slurmfleet: \"$java_cmd\" on $SLURMD_NODENAME is Java $java_version; \
the Jenkins agent needs Java 17 or newer: set the template's javaPath, or load a newer Java in its setupScript" >&2
  exit 1
fi

# One agent, on this node, in a step that overlaps the allocation: builds may use all of it.
srun -N1 -n1 --overlap --nodelist="$SLURMD_NODENAME" \
  "$java_cmd" -jar /opt/jenkins/agent.jar \
  -url "$JENKINS_URL" -name "$JENKINS_AGENT_NAME" -secret "@$slurmfleet_secret_file" \
  -webSocket -workDir "$slurmfleet_agent_dir" -noReconnectAfter 10m
