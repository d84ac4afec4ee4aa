#!/bin/sh
# Installs what `make build-cuda` needs on a Debian machine: Debian's CUDA
# toolkit (nvcc, to compile the kernels to PTX; the CUDA driver API
# headers and stub library gorgonia.org/cu links against), which lives in
# the non-free component. Enables that component when it is missing.
# Idempotent: does nothing when nvcc is installed. Retries while another
# apt holds the dpkg lock.
set -e
if command -v nvcc >/dev/null 2>&1 && [ -e /usr/include/cuda.h ]; then exit 0; fi
SUDO=$( [ "$(id -u)" = 0 ] || echo sudo )
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
list=/etc/apt/sources.list.d/blocks-nonfree.sources
if ! grep -rqs 'non-free' /etc/apt/sources.list /etc/apt/sources.list.d/ ; then
  echo "enabling Debian's non-free component ($list)"
  $SUDO tee "$list" >/dev/null <<SRC
Types: deb
URIs: http://deb.debian.org/debian
Suites: $codename $codename-updates
Components: contrib non-free non-free-firmware
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
fi
try() {
  for i in $(seq 1 60); do
    if "$@"; then return 0; fi
    echo "apt busy or failed; retrying in 20 s ($i/60)" >&2
    sleep 20
  done
  return 1
}
try $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
echo "installing nvidia-cuda-toolkit (large: several GB; once per machine)"
try $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nvidia-cuda-toolkit nvidia-cuda-dev >/dev/null
