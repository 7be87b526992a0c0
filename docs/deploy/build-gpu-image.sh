#!/usr/bin/env bash
# Build the course's GPU image with repo2docker, from the committed tree: binder/ as for the CPU
# image, but with binder/requirements-gpu.txt as binder/requirements.txt (PyPI's CUDA build of
# torch instead of the CPU-only one) and a binder/start that no longer sets SEQLEARN_DEVICE=cpu,
# so seqlearn picks the GPU when the pod has one. The repository itself is left untouched.
#   docs/deploy/build-gpu-image.sh registry.example.edu/seqlearn-base:2026.1-gpu
set -euo pipefail
image=${1:?usage: $0 IMAGE:TAG}
root=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
src=$(mktemp -d)
trap 'rm -rf "$src"' EXIT
git -C "$root" archive HEAD | tar -x -C "$src"
mv "$src/binder/requirements-gpu.txt" "$src/binder/requirements.txt"
sed -i 's/ SEQLEARN_DEVICE=cpu//' "$src/binder/start"
if grep -q SEQLEARN_DEVICE "$src/binder/start"; then
  echo "binder/start still sets SEQLEARN_DEVICE: update this script" >&2
  exit 1
fi
jupyter-repo2docker --no-run --user-id 1000 --user-name jovyan --target-repo-dir /srv/seqlearn \
  --image-name "$image" "$src"
