#!/usr/bin/env bash
# Builds the Debian package curlpow_VERSION_ARCH.deb with dpkg-deb: the `curlpow` binary, the C
# libraries (libdcurl.so, libccurl.so with their sonames), headers and pkg-config files, man
# pages and bash/zsh/fish completions generated from the command line itself, and the systemd
# units curlpow-serve.service and curlpow-worker.service (user `curlpow` by sysusers.d, settings
# in /etc/default/curlpow-serve and /etc/default/curlpow-worker). Sources in packaging/.
#
#   scripts/package-deb.sh [--out DIR] [--features LIST] [--no-build]
#
#   --out DIR        where the .deb goes (default: the current folder)
#   --features LIST  cargo features beside the default ones (default: opencl, so the package
#                    has both GPU backends and depends on an OpenCL ICD loader; '' for a
#                    wgpu-only package)
#   --no-build       package what `cargo build --release` already built (CARGO_TARGET_DIR or
#                    target/release), as it is
#
# Needs dpkg-deb (dpkg) and gzip. Install: dpkg -i curlpow_*.deb; then, for a service,
# edit /etc/default/curlpow-serve and `systemctl enable --now curlpow-serve`.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out=$PWD
features=opencl
build=1
die() {
    echo "package-deb.sh: $*" >&2
    exit 2
}
while [ $# -gt 0 ]; do
    case "$1" in
    --out)
        [ $# -ge 2 ] || die "--out needs a value"
        out=$2
        shift 2
        ;;
    --features)
        [ $# -ge 2 ] || die "--features needs a value"
        features=$2
        shift 2
        ;;
    --no-build)
        build=
        shift
        ;;
    -h | --help)
        sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    *) die "unknown argument '$1' (see --help)" ;;
    esac
done
command -v dpkg-deb >/dev/null || die "dpkg-deb not found (apt-get install dpkg)"

version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$root/Cargo.toml" | head -1)
arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null ||
    gcc -print-multiarch 2>/dev/null || echo "$(uname -m)-linux-gnu")
release="${CARGO_TARGET_DIR:-$root/target}/release"
if [ -n "$build" ] && [[ ",$features," == *,opencl,* ]] &&
    ! grep -q 'libOpenCL\.so ' <<<"$(ldconfig -p 2>/dev/null)" &&
    ! pkg-config --exists OpenCL 2>/dev/null; then
    die "building with OpenCL links libOpenCL.so: apt-get install ocl-icd-opencl-dev (or --features '' for a package without the OpenCL backend)"
fi
if [ -n "$build" ]; then
    # One release build for the binary and both libraries (cargo's features unify across them).
    (cd "$root" && cargo build --release --locked -p curlpow -p curlpow-dcurl -p curlpow-ccurl \
        ${features:+--features "$(echo "$features" | sed 's/\([^,]*\)/curlpow\/\1/g')"})
fi
bin="$release/curlpow"
[ -x "$bin" ] || die "$bin not found (cargo build --release)"

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
pkg="$stage/curlpow"
doc="$pkg/usr/share/doc/curlpow"
install -d "$pkg/DEBIAN" "$pkg/usr/bin" "$doc" "$pkg/usr/share/man/man1" \
    "$pkg/usr/lib/systemd/system" "$pkg/usr/lib/sysusers.d" "$pkg/etc/default" \
    "$pkg/usr/share/bash-completion/completions" "$pkg/usr/share/zsh/vendor-completions" \
    "$pkg/usr/share/fish/vendor_completions.d"

install -m 0755 "$bin" "$pkg/usr/bin/curlpow"
bash "$root/scripts/install-c.sh" --destdir "$pkg" --prefix /usr --libdir "/usr/lib/$multiarch" \
    --from "$release" >/dev/null

# Man pages and completions from the binary's own command-line definition.
gen="$stage/generated"
"$bin" generate-docs "$gen"
for page in "$gen"/man/*.1; do
    gzip -9n <"$page" >"$pkg/usr/share/man/man1/$(basename "$page").gz"
done
install -m 0644 "$gen/completions/curlpow.bash" "$pkg/usr/share/bash-completion/completions/curlpow"
install -m 0644 "$gen/completions/_curlpow" "$pkg/usr/share/zsh/vendor-completions/_curlpow"
install -m 0644 "$gen/completions/curlpow.fish" "$pkg/usr/share/fish/vendor_completions.d/curlpow.fish"

# The services.
p="$root/packaging"
install -m 0644 "$p/systemd/curlpow-serve.service" "$p/systemd/curlpow-worker.service" \
    "$pkg/usr/lib/systemd/system/"
install -m 0644 "$p/curlpow.sysusers" "$pkg/usr/lib/sysusers.d/curlpow.conf"
install -m 0600 "$p/default/curlpow-serve" "$pkg/etc/default/curlpow-serve"
install -m 0600 "$p/default/curlpow-worker" "$pkg/etc/default/curlpow-worker"
install -m 0755 "$p/deb/postinst" "$p/deb/prerm" "$p/deb/postrm" "$pkg/DEBIAN/"

# Documents: the copyright file Debian asks for, the changelog, the README.
{
    cat <<EOF
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: curlpow

Files: *
Copyright: 2026 The curlpow authors
License: MIT or Apache-2.0

License: MIT
EOF
    sed 's/^$/./; s/^/ /' "$root/LICENSE-MIT"
    echo
    echo "License: Apache-2.0"
    echo " On Debian systems the full text is in /usr/share/common-licenses/Apache-2.0."
} >"$doc/copyright"
gzip -9n <"$root/CHANGELOG.md" >"$doc/changelog.gz"
install -m 0644 "$root/README.md" "$doc/README.md"

# Dependencies: the newest glibc symbol version the ELF files use; with the OpenCL backend
# (linked to libOpenCL.so.1) an OpenCL ICD loader, any of them: ocl-icd's, or another package
# providing libopencl1 (NVIDIA's, Khronos'). No vendor's driver is required or recommended: with
# none, the GPU backends find no device and the CPU searches. Vulkan's loader is opened at run
# time: recommended, not required.
glibc=$(objdump -T "$pkg/usr/bin/curlpow" "$pkg/usr/lib/$multiarch"/lib*.so.*.* 2>/dev/null |
    grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -1)
depends="libc6 (>= ${glibc:-2.34}), libgcc-s1"
# (The headers are read whole first: `grep -q` stopping early would end objdump with SIGPIPE,
# which pipefail turns into "not linked".)
needed=$(objdump -p "$pkg/usr/bin/curlpow")
if grep -q 'NEEDED.*libOpenCL' <<<"$needed"; then
    depends="$depends, ocl-icd-libopencl1 | libopencl1"
fi
cat >"$pkg/DEBIAN/control" <<EOF
Package: curlpow
Version: $version
Architecture: $arch
Maintainer: ${DEBFULLNAME:-curlpow maintainers} <${DEBEMAIL:-curlpow@localhost}>
Section: utils
Priority: optional
Installed-Size: $(du -sk --exclude=DEBIAN "$pkg" | cut -f1)
Depends: $depends
Recommends: libvulkan1
Suggests: mesa-vulkan-drivers, pocl-opencl-icd, rabbitmq-server
Description: IOTA Curl-P-81 proof-of-work on CPU SIMD and GPUs
 curlpow finds IOTA proof-of-work nonces with a bit-sliced AVX-512/AVX2 CPU search and
 wgpu (Vulkan) or OpenCL GPU kernels, every nonce checked on the host. A GPU is used
 once its vendor's Vulkan or OpenCL driver is installed; \`curlpow doctor\` says what is
 missing.
 .
 This package has the curlpow command (pow, hash, verify, bench, devices, doctor, attach), its
 remote-PoW server (curlpow serve, IRI's attachToTangle API) and RabbitMQ worker (curlpow
 worker, dcurl's protocol) as systemd services, and the C library libdcurl.so/libccurl.so
 with dcurl's and ccurl's APIs, headers and pkg-config files.
EOF
printf '/etc/default/curlpow-serve\n/etc/default/curlpow-worker\n' >"$pkg/DEBIAN/conffiles"
echo "activate-noawait ldconfig" >"$pkg/DEBIAN/triggers"

mkdir -p "$out"
deb="$out/curlpow_${version}_${arch}.deb"
dpkg-deb --root-owner-group -Zxz --build "$pkg" "$deb" >/dev/null
echo "$deb"
