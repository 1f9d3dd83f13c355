#!/bin/bash
# slurmfleet agent lab-native-1712345678901-7: cloud lab, template native, pyxis launch.
set -eo pipefail

# Slurm starts the job with only the variables of the request; builds still want USER and
# HOME (git refuses to run without HOME).
USER="${USER:-$(id -un)}"
HOME="${HOME:-$(getent passwd "$USER" | cut -d: -f6)}"
export USER HOME

# Runs inside the container: checks the image's Java, moves the secret from the environment
# into a 0600 file (never onto a command line), then starts the agent with the arguments
# it is given. Remoting works in /tmp/{agent} inside the container; remoteFS is the
# working directory.
# shellcheck disable=SC2016 # $1, $@ and $JENKINS_SECRET expand inside the container
in_container='job_umask="$(umask)"
umask 077
dir="$1"
shift
# agent.jar needs Java 17 or newer: say so here, not as a JVM error later.
java_cmd="$1"
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
  echo "slurmfleet: cannot tell the version of Java \"$java_cmd\" in the container image on $SLURMD_NODENAME \
($java_first): the image must hold Java at that path (the jenkins/inbound-agent layout): set pyxis.containerImage" >&2
  exit 1
fi
if [ "$java_major" -lt 17 ]; then
  echo "slurmfleet: \"$java_cmd\" in the container image on $SLURMD_NODENAME is Java $java_version; \
the Jenkins agent needs Java 17 or newer: use a pyxis.containerImage with Java 17 or newer" >&2
  exit 1
fi

mkdir -p -- "$dir"
trap "rm -rf -- \"$dir\"" EXIT
trap "exit 143" TERM
trap "exit 130" INT
printf "%s\n" "$JENKINS_SECRET" > "$dir/secret"
unset JENKINS_SECRET
umask "$job_umask"
"$@" -secret "@$dir/secret" -workDir "$dir"'

# One agent, on this node, in a step that overlaps the allocation: builds may use all of it.
srun -N1 -n1 --overlap --nodelist="$SLURMD_NODENAME" \
  --container-image=/images/agent.sqsh \
  --container-mount-home \
  /bin/sh -c "$in_container" slurmfleet-agent "/tmp/$JENKINS_AGENT_NAME" \
  /opt/java/openjdk/bin/java -jar /usr/share/jenkins/agent.jar \
  -url "$JENKINS_URL" -name "$JENKINS_AGENT_NAME" -webSocket -noReconnectAfter 10m
