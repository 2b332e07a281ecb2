#!/bin/bash
# Packs this host's build of weakscale and Debian's Open MPI into .dev16/bundle.tar.xz, relocatable
# (OPAL_PREFIX, PMIX_INSTALL_PREFIX), for a machine that has neither: the lent device machine (its
# 16 CPU cores). Run from the repository root after scripts/build.sh; .dev16/ is not tracked (add
# /.dev16/ to .git/info/exclude). Then, with the device tool: run `bash scripts/device/run1.sh` then `bash scripts/device/run2.sh`
# carrying .dev16 (results/device16/README.md).
set -euo pipefail
root=.dev16/root
rm -rf "$root" && mkdir -p "$root"/usr/bin "$root"/usr/lib/x86_64-linux-gnu "$root"/usr/share "$root"/etc "$root"/bin
cp -a /usr/bin/orterun /usr/bin/orted /usr/bin/ompi_info "$root"/usr/bin/
ln -s orterun "$root"/usr/bin/mpirun
cp -a /usr/lib/x86_64-linux-gnu/openmpi /usr/lib/x86_64-linux-gnu/pmix2 "$root"/usr/lib/x86_64-linux-gnu/
rm -rf "$root"/usr/lib/x86_64-linux-gnu/openmpi/include
cp -a /usr/share/openmpi "$root"/usr/share/
cp -a /etc/openmpi "$root"/etc/
cp build/cli/weakscale build/engine/weakscale-engine build/harness/calibrate/weakscale-calibrate-mpi "$root"/bin/
# Every shared library these need, but the C library's own (the target has its own, newer).
for f in "$root"/bin/* "$root"/usr/bin/orterun "$root"/usr/bin/orted "$root"/usr/bin/ompi_info \
         $(find "$root"/usr/lib/x86_64-linux-gnu/openmpi "$root"/usr/lib/x86_64-linux-gnu/pmix2 -name '*.so*' -type f); do
  ldd "$f" 2>/dev/null | awk '$3 ~ /^\// {print $3}'
done | sort -u | grep -vE '/(libc|libm|libpthread|libdl|librt|ld-linux-x86-64)\.so|/openmpi/|/pmix2/' |
  while read -r lib; do cp -L "$lib" "$root"/usr/lib/x86_64-linux-gnu/; done
cp scripts/device/env.sh .dev16/env.sh
tar cJf .dev16/bundle.tar.xz -C .dev16 root
rm -rf "$root"
ls -la .dev16/bundle.tar.xz
