#!/usr/bin/env bash
# Build KenLM's lmplz, the estimate peer of bench/ngram.py, from the sources in the kenlm sdist
# (the version the `kenlm` extra pins) into build/kenlm/build/bin/lmplz.
# Needs cmake, a C++ compiler and Boost; on Debian or Ubuntu:
#   apt-get install cmake g++ libboost-program-options-dev libboost-system-dev libboost-thread-dev \
#                   libboost-test-dev zlib1g-dev libbz2-dev liblzma-dev
set -euo pipefail
cd "$(dirname "$0")/.."
out=build/kenlm
version=$(sed -n 's/.*"kenlm==\([0-9.]*\)".*/\1/p' pyproject.toml)
mkdir -p "$out"
python3 -m pip download --quiet --no-deps --no-binary kenlm "kenlm==$version" -d "$out"
tar xzf "$out/kenlm-$version.tar.gz" -C "$out"
cmake -S "$out/kenlm-$version" -B "$out/build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$out/build" --target lmplz -j"$(nproc)" >/dev/null
echo "built $out/build/bin/lmplz"
