#!/usr/bin/env bash
# Installs every build, test and testbed dependency from Debian's packages. Idempotent: packages
# already installed are skipped, and nothing is fetched when all are present.
set -euo pipefail

PACKAGES=(
  build-essential cmake pkg-config ninja-build
  libcurl4-openssl-dev nlohmann-json3-dev libsimdjson-dev libxxhash-dev libyaml-cpp-dev libsqlite3-dev
  libspdlog-dev libfmt-dev libcli11-dev libssl-dev libcpp-httplib-dev
  libgtest-dev libgmock-dev
  shellcheck clang-format
  groovy default-jre-headless
  debootstrap util-linux curl ca-certificates python3
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "[deps] all ${#PACKAGES[@]} packages present"
  exit 0
fi
echo "[deps] installing: ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "[deps] done"
