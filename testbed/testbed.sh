#!/usr/bin/env bash
# testbed.sh — the project's real Slurm: munged, slurmctld, slurmd (two virtual nodes by default)
# and slurmrestd with JWT auth, in a Debian rootfs made by debootstrap. Runs as root on a Debian 12
# host without Docker or systemd. Each daemon lives in its own private mount namespace that
# pivot_root()s into the rootfs (apptainer refuses a chroot), so nothing stays mounted on the host
# and stopping is just killing the processes whose root is the rootfs.
#
#   testbed.sh start            set up if needed, start if needed, print `export` lines
#   testbed.sh stop [--purge]   stop every testbed process (--purge also deletes the rootfs)
#   testbed.sh status           exit 0 when every daemon runs
#   testbed.sh token [USER] [LIFESPAN_S]   print a fresh JWT (only the token)
#   testbed.sh exec CMD...      run CMD inside the testbed (e.g. `exec squeue`)
#   testbed.sh env              print the `export` lines of the running testbed
#   testbed.sh restart-daemon slurmrestd|slurmctld [DOWN_S]
#                               stop one daemon, wait DOWN_S seconds (default 0), start it again
#                               keeping the cluster's state (for fault tests)
#
# Knobs: TESTBED_SUITE [sid] (sid = Slurm 26.05, API v0.0.42-45; trixie = Slurm 24.11, v0.0.40-42)
#        TESTBED_ROOT [/var/lib/slurmfleet-testbed/$SUITE]  TESTBED_NODES [2]  TESTBED_USER [ci]
#        TESTBED_REST_PORT [6820]  TESTBED_MIRROR [the host's apt mirror]
#        TESTBED_APPTAINER [1 on sid, 0 on trixie: Debian trixie has no apptainer package]
#        TESTBED_APT_CACHE [/var/cache/slurmfleet-testbed-apt]  TESTBED_TOKEN_LIFESPAN [86400]
# `env` also prints SLURM_API_VERSION, the newest API version the suite serves (v0.0.45 on sid,
# v0.0.42 on trixie): the integration tests speak it; and TESTBED_APPTAINER, 1 when the rootfs has
# apptainer, so that Slurm jobs can run Apptainer images.
# A warm re-run on a healthy testbed changes nothing. When a daemon is down or slurm.conf changed,
# every testbed process is stopped and the cluster starts from an empty state: recovered state
# would show the killed jobs as RUNNING forever.
# SC2016: single-quoted code runs inside the rootfs; SC2086: package lists are meant to split.
# shellcheck disable=SC2016,SC2086
set -euo pipefail

SUITE=${TESTBED_SUITE:-sid}
R=${TESTBED_ROOT:-/var/lib/slurmfleet-testbed/$SUITE}
NODES=${TESTBED_NODES:-2}
TUSER=${TESTBED_USER:-ci}
REST_PORT=${TESTBED_REST_PORT:-6820}
LIFESPAN=${TESTBED_TOKEN_LIFESPAN:-86400}
APPTAINER=${TESTBED_APPTAINER:-}
APT_CACHE=${TESTBED_APT_CACHE-/var/cache/slurmfleet-testbed-apt}
# environment-modules: sites load Java with `module load` in an agent's setupScript; so do the tests
PKGS="slurmctld slurmd slurmrestd slurm-client slurm-wlm-jwt-plugin munge environment-modules"
URL="http://127.0.0.1:$REST_PORT"
# slurmrestd also listens here (inside the rootfs; the host sees it under $R), as sites that put
# it behind a local socket run it
REST_SOCKET=/run/slurmrestd/slurmrestd.socket
# the newest API version the suite's slurmrestd serves: what the integration tests speak
case $SUITE in trixie) API_VERSION=v0.0.42 ;; *) API_VERSION=v0.0.45 ;; esac

T0=$(date +%s%N)
log() { local d=$((($(date +%s%N) - T0) / 100000000)); printf '[testbed %3d.%ds] %s\n' $((d / 10)) $((d % 10)) "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

[ "$(id -u)" = 0 ] || die "must run as root (it creates a rootfs and starts daemons)"
case "$SUITE:$APPTAINER" in
  trixie:1) die "TESTBED_APPTAINER=1 needs TESTBED_SUITE=sid: Debian trixie has no apptainer package" ;;
  trixie:) APPTAINER=0 ;;
  *:) APPTAINER=1 ;;
  *:0 | *:1) ;;
  *) die "TESTBED_APPTAINER is '$APPTAINER'; use 1 (install apptainer in the rootfs) or 0" ;;
esac
# Slurm clients authenticate as $SLURM_JWT's user when it is set: keep a caller's token out of the
# admin commands run here.
unset SLURM_JWT

# Runs "$@" inside the rootfs in a private mount namespace. TB_PIDFILE: where the final pid goes.
PIVOT='set -e
R=$1; shift
mount --make-rprivate /
mount --rbind "$R" "$R"
mount -t proc proc "$R/proc"
mount -t sysfs sysfs "$R/sys"
mount --rbind /dev "$R/dev"
[ -z "${TB_APT_CACHE:-}" ] || mount --bind "$TB_APT_CACHE" "$R/var/cache/apt/archives"
cd "$R"; mkdir -p .oldroot; pivot_root . .oldroot; cd /; umount -l /.oldroot
[ -z "${TB_PIDFILE:-}" ] || echo $$ > "$TB_PIDFILE"
exec "$@"'
tb() { unshare --mount --propagation private bash -c "$PIVOT" tb "$R" "$@"; }

testbed_pids() {  # every process whose root directory is the rootfs
  local d
  for d in /proc/[0-9]*; do
    [ "${d#/proc/}" = "$$" ] && continue
    [ "$d/root" -ef "$R" ] 2>/dev/null && echo "${d#/proc/}"
  done
  return 0
}

pid_alive() { local f="$R$1"; [ -s "$f" ] && [ "/proc/$(cat "$f")/root" -ef "$R" ] 2>/dev/null; }
node_names() { seq -f 'n%g' 1 "$NODES"; }
new_token() { tb /usr/bin/scontrol token "username=$1" "lifespan=$2" | sed -n 's/^SLURM_JWT=//p'; }

all_running() {
  [ -d "$R" ] || return 1
  pid_alive /run/munge/munged.pid && pid_alive /run/slurmctld.pid && pid_alive /run/slurmrestd.pid || return 1
  local n; for n in $(node_names); do pid_alive "/run/slurmd-$n.pid" || return 1; done
}

cmd_stop() {
  [ -d "$R" ] || { log "$R does not exist"; return 0; }
  local pids want p c i
  pids=$(testbed_pids)
  # REST front end first, then node daemons, then the controller (it saves state), then the rest
  for want in slurmrestd slurmd slurmctld ''; do
    for p in $pids; do
      c=$(cat "/proc/$p/comm" 2>/dev/null) || continue
      if [ -z "$want" ] || [ "$c" = "$want" ]; then kill -TERM "$p" 2>/dev/null || true; fi
    done
    pids=$(testbed_pids); [ -z "$pids" ] && break
    [ -z "$want" ] || sleep 0.3
  done
  for i in $(seq 1 25); do pids=$(testbed_pids); [ -z "$pids" ] && break; sleep 0.2; done
  for p in $pids; do kill -KILL "$p" 2>/dev/null || true; done
  sleep 0.2
  rm -f "$R"/run/*.pid "$R"/run/munge/munged.pid "$R"/run/munge/munge.socket.2* 2>/dev/null || true
  [ -z "$(testbed_pids)" ] || die "testbed processes still running: $(testbed_pids | tr '\n' ' ')"
  log "stopped"
  if [ "${1:-}" = --purge ]; then
    grep -q " ${R}[/ ]" /proc/self/mountinfo && die "refusing to purge: something is mounted below $R"
    rm -rf --one-file-system "$R"; log "removed $R"
  fi
}

host_mirror() {
  { awk '/^URIs:/ && $2 !~ /security/ {print $2}' /etc/apt/sources.list.d/*.sources 2>/dev/null || true
    awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^(https?|file):/ && $i !~ /security/) print $i }' \
      /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null || true; } | head -1
}

make_rootfs() {
  local need=""
  command -v debootstrap >/dev/null || need="$need debootstrap"
  command -v curl >/dev/null || need="$need curl"
  if [ -n "$need" ]; then
    log "installing on the host:$need"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $need >/dev/null
  fi
  [ -z "$APT_CACHE" ] || mkdir -p "$APT_CACHE/partial"
  if [ ! -f "$R/.bootstrapped" ]; then
    local mirror=${TESTBED_MIRROR:-$(host_mirror)}
    [ -n "$mirror" ] || die "no Debian mirror in the host's apt sources; set TESTBED_MIRROR"
    if [ -e "$R" ]; then
      grep -q " ${R}[/ ]" /proc/self/mountinfo && die "$R has mounts on it; run '$0 stop' first"
      rm -rf --one-file-system "$R"
    fi
    mkdir -p "$(dirname "$R")"
    log "debootstrap --variant=minbase $SUITE (about 35 s)"
    debootstrap --variant=minbase ${APT_CACHE:+--cache-dir="$APT_CACHE"} "$SUITE" "$R" "$mirror" \
      > /tmp/slurmfleet-testbed-debootstrap.log 2>&1 || die "debootstrap failed: /tmp/slurmfleet-testbed-debootstrap.log"
    touch "$R/.bootstrapped"
  fi
  # mirrors may serve a sid Release file past its Valid-Until
  echo 'Acquire::Check-Valid-Until "false";' > "$R/etc/apt/apt.conf.d/99testbed"
  echo 'APT::Install-Recommends "false";' >> "$R/etc/apt/apt.conf.d/99testbed"
  printf '#!/bin/sh\nexit 101\n' > "$R/usr/sbin/policy-rc.d"; chmod 755 "$R/usr/sbin/policy-rc.d"
  cp -L /etc/resolv.conf "$R/etc/resolv.conf" 2>/dev/null || true
  printf '127.0.0.1 localhost %s\n::1 localhost ip6-localhost\n' "$(hostname -s)" > "$R/etc/hosts"

  local want="$PKGS" missing="" p
  [ "$APPTAINER" = 1 ] && want="$want apptainer"
  for p in $want; do
    tb /usr/bin/dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
  done
  if [ -n "$missing" ]; then
    log "installing in the rootfs:$missing"
    export TB_APT_CACHE="$APT_CACHE"
    tb /usr/bin/apt-get update -qq > /tmp/slurmfleet-testbed-apt.log 2>&1 || die "apt-get update failed: /tmp/slurmfleet-testbed-apt.log"
    tb /usr/bin/env DEBIAN_FRONTEND=noninteractive /usr/bin/apt-get install -y -q $missing \
      >> /tmp/slurmfleet-testbed-apt.log 2>&1 || die "apt-get install failed: /tmp/slurmfleet-testbed-apt.log"
    unset TB_APT_CACHE
    tb /usr/bin/apt-get clean
  fi

  # users: the job user, a second plain user (for ownership tests) and slurmrestd's own user
  tb /bin/sh -c "id slurmrest >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin slurmrest
for u in $TUSER other; do id \$u >/dev/null 2>&1 || useradd --create-home --shell /bin/bash \$u; mkdir -p /home/\$u/jobs; chown \$u: /home/\$u/jobs; done
[ -s /etc/munge/munge.key ] || { mungekey --create --keyfile=/etc/munge/munge.key && chown munge: /etc/munge/munge.key && chmod 600 /etc/munge/munge.key; }
mkdir -p /etc/slurm /var/spool/slurmctld /var/spool/slurmd /var/log/slurm /run/munge
chown slurm: /var/spool/slurmctld /var/log/slurm; chown munge: /run/munge
[ -s /etc/slurm/jwt_hs256.key ] || dd if=/dev/urandom of=/etc/slurm/jwt_hs256.key bs=32 count=1 2>/dev/null
chown slurm: /etc/slurm/jwt_hs256.key; chmod 600 /etc/slurm/jwt_hs256.key"
}

write_conf() {  # prints 1 when slurm.conf changed
  local hw cpus mem hn conf i
  hw=$(tb /usr/sbin/slurmd -C | head -1)
  field() { echo "$hw" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
  cpus=$(field CPUs)
  mem=$((($(field RealMemory) - 256) / NODES))
  hn=$(hostname -s)
  conf=$(mktemp)
  {
    echo "# generated by slurmfleet testbed/testbed.sh"
    echo "ClusterName=testbed"
    echo "SlurmctldHost=$hn(127.0.0.1)"
    echo "SlurmUser=slurm"
    echo "AuthType=auth/munge"
    echo "CredType=cred/munge"
    echo "AuthAltTypes=auth/jwt"
    echo "AuthAltParameters=jwt_key=/etc/slurm/jwt_hs256.key"
    echo "StateSaveLocation=/var/spool/slurmctld"
    echo "SlurmdSpoolDir=/var/spool/slurmd/%n"
    echo "SlurmctldPidFile=/run/slurmctld.pid"
    echo "SlurmdPidFile=/run/slurmd-%n.pid"
    echo "SlurmctldLogFile=/var/log/slurm/slurmctld.log"
    echo "SlurmdLogFile=/var/log/slurm/slurmd-%n.log"
    echo "SlurmctldPort=6817"
    echo "MailProg=/bin/true"
    # no systemd and no cgroups inside the testbed
    echo "ProctrackType=proctrack/linuxproc"
    echo "TaskPlugin=task/none"
    echo "JobAcctGatherType=jobacct_gather/none"
    echo "AccountingStorageType=accounting_storage/none"
    echo "SchedulerType=sched/backfill"
    echo "SchedulerParameters=bf_interval=5"
    echo "SelectType=select/cons_tres"
    echo "SelectTypeParameters=CR_Core_Memory"
    echo "DefMemPerCPU=100"
    echo "MaxJobCount=${TESTBED_MAX_JOBS:-20000}"
    echo "MinJobAge=${TESTBED_MIN_JOB_AGE:-300}"
    echo "MpiDefault=none"
    echo "ReturnToService=2"
    for i in $(seq 1 "$NODES"); do
      echo "NodeName=n$i NodeHostname=$hn NodeAddr=127.0.0.1 Port=$((6817 + i)) CPUs=$cpus RealMemory=$mem State=UNKNOWN"
    done
    echo "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP"
  } > "$conf"
  echo "CgroupPlugin=disabled" > "$R/etc/slurm/cgroup.conf"
  if cmp -s "$conf" "$R/etc/slurm/slurm.conf"; then rm -f "$conf"; echo 0; else
    mv "$conf" "$R/etc/slurm/slurm.conf"; echo 1; fi
  chmod 644 "$R/etc/slurm/slurm.conf" "$R/etc/slurm/cgroup.conf"
}

start_daemons() {
  cmd_stop >/dev/null 2>&1 || true
  rm -rf "$R"/var/spool/slurmctld/* "$R"/var/spool/slurmd/*
  log "starting munged, slurmctld, slurmd x$NODES, slurmrestd"
  tb /usr/sbin/runuser -u munge -- /usr/sbin/munged
  tb /bin/sh -c 'munge -n | unmunge >/dev/null' || die "munge self-test failed"
  tb /usr/sbin/slurmctld
  local i n
  for i in $(seq 1 50); do tb /usr/bin/scontrol ping 2>/dev/null | grep -q UP && break; sleep 0.2; done
  tb /usr/bin/scontrol ping | grep -q UP || die "slurmctld does not answer: $R/var/log/slurm/slurmctld.log"
  for n in $(node_names); do tb /usr/sbin/slurmd -N "$n"; done
  : > "$R/var/log/slurm/slurmrestd.log"
  start_slurmrestd
}

wait_ready() {
  local token=$1 code="" i st bad=""
  # /ping answers 200 even for a rejected token; jobs/state proves the JWT path. v0.0.42 is the one
  # version both 24.11 and 26.05 serve.
  for i in $(seq 1 100); do
    code=$(curl -s -o /dev/null -w '%{http_code}' -H "X-SLURM-USER-TOKEN: $token" "$URL/slurm/v0.0.42/jobs/state" || true)
    [ "$code" = 200 ] && break; sleep 0.2
  done
  [ "$code" = 200 ] || die "slurmrestd answered '$code': $R/var/log/slurm/slurmrestd.log"
  for i in $(seq 1 100); do
    st=$(tb /usr/bin/sinfo -h -o '%t' | sort -u | tr '\n' ' ')
    bad=$(echo "$st" | tr ' ' '\n' | grep -vxE 'idle|mix|alloc|comp|' || true)
    [ -z "$bad" ] && break; sleep 0.2
  done
  [ -z "$bad" ] || die "nodes not usable ('$st'): $R/var/log/slurm/slurmd-*.log"
}

print_env() {
  cat <<EOT
export SLURMRESTD_URL=$URL
export SLURM_USER=$TUSER
export SLURM_JWT=$1
export SLURM_JWT_KEY=$R/etc/slurm/jwt_hs256.key
export TESTBED_ROOT=$R
export TESTBED_SUITE=$SUITE
export SLURM_API_VERSION=$API_VERSION
export TESTBED_APPTAINER=$([ -x "$R/usr/bin/apptainer" ] && echo 1 || echo 0)
export SLURMRESTD_SOCKET=$R$REST_SOCKET
EOT
}

start_slurmrestd() {
  # slurmrestd binds after it dropped to its user
  mkdir -p "$R${REST_SOCKET%/*}"; rm -f "$R$REST_SOCKET"; tb chown slurmrest: "${REST_SOCKET%/*}"
  # slurmrestd does not daemonize: its own session, stdio to its log. SLURM_JWT=daemon with
  # rest_auth/jwt forwards each caller's token; -s openapi/slurmctld because 24.11 dies loading the
  # slurmdbd plugin without a slurmdbd.
  ( cd / && TB_PIDFILE=/run/slurmrestd.pid exec setsid unshare --mount --propagation private \
      bash -c "$PIVOT" tb "$R" /usr/bin/env SLURM_JWT=daemon /usr/sbin/slurmrestd -u slurmrest -g slurmrest \
      -a rest_auth/jwt -s openapi/slurmctld "127.0.0.1:$REST_PORT" "unix:$REST_SOCKET" ) >> "$R/var/log/slurm/slurmrestd.log" 2>&1 < /dev/null &
  local i; for i in $(seq 1 50); do [ -s "$R/run/slurmrestd.pid" ] && break; sleep 0.1; done
}

cmd_restart_daemon() {
  local name=$1 down=${2:-0} pidfile i
  case "$name" in
    slurmrestd) pidfile=/run/slurmrestd.pid ;;
    slurmctld) pidfile=/run/slurmctld.pid ;;
    *) die "restart-daemon takes slurmrestd or slurmctld, not '$name'" ;;
  esac
  all_running || die "testbed is not running"
  kill -TERM "$(cat "$R$pidfile")"
  for i in $(seq 1 50); do pid_alive "$pidfile" || break; sleep 0.1; done
  pid_alive "$pidfile" && kill -KILL "$(cat "$R$pidfile")"
  rm -f "$R$pidfile"
  log "$name stopped; down for $down s"
  sleep "$down"
  if [ "$name" = slurmrestd ]; then
    start_slurmrestd
  else
    tb /usr/sbin/slurmctld  # recovers its saved state: running jobs stay running
    for i in $(seq 1 50); do tb /usr/bin/scontrol ping 2>/dev/null | grep -q UP && break; sleep 0.2; done
  fi
  wait_ready "$(new_token "$TUSER" 600)"
  log "$name is back"
}

cmd_start() {
  make_rootfs
  local changed; changed=$(write_conf)
  if [ "$changed" = 0 ] && all_running; then log "already running"; else start_daemons; fi
  local token; token=$(new_token "$TUSER" "$LIFESPAN")
  wait_ready "$token"
  print_env "$token" > "$R/root/testbed.env"; chmod 600 "$R/root/testbed.env"
  log "ready: $(tb /usr/sbin/slurmctld -V), $NODES nodes, $URL, user $TUSER"
  log "JWT key (for minting): $R/etc/slurm/jwt_hs256.key"
  cat "$R/root/testbed.env"
}

case "${1:-start}" in
  start) cmd_start ;;
  stop) shift; cmd_stop "${1:-}" ;;
  status) all_running ;;
  token) all_running || die "testbed is not running"; new_token "${2:-$TUSER}" "${3:-$LIFESPAN}" ;;
  exec) shift; tb "$@" ;;
  env) all_running || die "testbed is not running"; print_env "$(new_token "$TUSER" "$LIFESPAN")" ;;
  restart-daemon) cmd_restart_daemon "${2:-}" "${3:-0}" ;;
  *) die "unknown command '$1' (start|stop [--purge]|status|token [USER] [LIFESPAN]|exec CMD...|env|restart-daemon NAME [DOWN_S])" ;;
esac
