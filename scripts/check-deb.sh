#!/usr/bin/env bash
# Installs a curlpow .deb with `dpkg -i` into a throwaway root (a temporary folder with its own
# dpkg database: no container, nothing written to /) and runs it from there: `curlpow pow` on
# the example transaction, checked with `curlpow verify`; both GPU backends in the binary (an
# OpenCL ICD loader in Depends, PoCL's and lavapipe's devices listed) and `curlpow doctor`
# answering; the man pages, completions, units,
# C headers, libraries and pkg-config files in place; a C program built with pkg-config
# against the installed library, run. Exits non-zero on the first thing missing or wrong.
#
#   scripts/check-deb.sh [DEB]     (default: build one with scripts/package-deb.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
deb=${1:-}
if [ -z "$deb" ]; then
    deb=$(bash scripts/package-deb.sh --out "$tmp")
fi
[ -f "$deb" ] || { echo "check-deb.sh: $deb not found" >&2; exit 2; }
dpkg-deb --info "$deb"
# The OpenCL backend is built in: the package depends on an ICD loader, any of them.
depends=$(dpkg-deb --field "$deb" Depends)
echo "$depends" | grep -Eq '(^|, )ocl-icd-libopencl1 \| libopencl1(,|$)' ||
    { echo "check-deb.sh: Depends lacks the OpenCL ICD loader: $depends" >&2; exit 1; }

# A dpkg database of its own: the package goes into $r alone. Its dependencies (libc) are the
# host's, which runs the binary; maintainer scripts run outside a chroot with DPKG_ROOT=$r.
r="$tmp/root"
mkdir -p "$r/var/lib/dpkg/info" "$r/var/lib/dpkg/updates" "$r/var/lib/dpkg/triggers"
: >"$r/var/lib/dpkg/status"
: >"$r/var/lib/dpkg/available"
dpkg --root="$r" --log=/dev/null --force-depends --force-not-root --force-script-chrootless \
    -i "$deb"
dpkg --root="$r" -s curlpow | grep -q '^Status: install ok installed'

multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null ||
    gcc -print-multiarch 2>/dev/null || echo "$(uname -m)-linux-gnu")
lib="$r/usr/lib/$multiarch"
for f in usr/bin/curlpow \
    usr/share/man/man1/curlpow.1.gz usr/share/man/man1/curlpow-pow.1.gz \
    usr/share/man/man1/curlpow-serve.1.gz usr/share/man/man1/curlpow-worker.1.gz \
    usr/share/bash-completion/completions/curlpow usr/share/zsh/vendor-completions/_curlpow \
    usr/share/fish/vendor_completions.d/curlpow.fish \
    usr/lib/systemd/system/curlpow-serve.service usr/lib/systemd/system/curlpow-worker.service \
    usr/lib/sysusers.d/curlpow.conf etc/default/curlpow-serve etc/default/curlpow-worker \
    usr/include/dcurl.h usr/include/ccurl.h usr/include/curlpow.h \
    usr/share/doc/curlpow/copyright; do
    [ -e "$r/$f" ] || { echo "check-deb.sh: /$f is missing from the package" >&2; exit 1; }
done
for l in dcurl ccurl; do
    [ -f "$lib/lib$l.so.0.1.0" ] && [ -L "$lib/lib$l.so.0" ] && [ -L "$lib/lib$l.so" ] ||
        { echo "check-deb.sh: lib$l.so and its links are missing" >&2; exit 1; }
done
# The settings files may hold a broker password: root only.
for f in etc/default/curlpow-serve etc/default/curlpow-worker; do
    mode=$(stat -c %a "$r/$f")
    [ "$mode" = 600 ] || { echo "check-deb.sh: /$f is mode $mode, expected 600" >&2; exit 1; }
done
gzip -t "$r"/usr/share/man/man1/*.gz
zcat "$r/usr/share/man/man1/curlpow-pow.1.gz" | grep -q 'mwm'
grep -q 'curlpow' "$r/usr/share/bash-completion/completions/curlpow"
if command -v systemd-analyze >/dev/null; then
    # The units' syntax (their binary is the package's /usr/bin/curlpow, absent on the host:
    # checked above), and systemd's exposure score of their hardening.
    for u in curlpow-serve curlpow-worker; do
        unit="$r/usr/lib/systemd/system/$u.service"
        out=$(systemd-analyze verify --man=no --recursive-errors=no "$unit" 2>&1 |
            grep -v 'Command /usr/bin/curlpow is not executable' || true)
        [ -z "$out" ] || { echo "check-deb.sh: $u.service: $out" >&2; exit 1; }
        systemd-analyze security --offline=yes "$unit" 2>&1 | tail -1
    done
fi

# The installed binary runs: PoW on the example transaction, verified.
bin="$r/usr/bin/curlpow"
"$bin" --version
"$bin" pow --mwm 9 --backend cpu examples/transaction.trytes >"$tmp/done.trytes"
"$bin" verify --mwm 9 "$tmp/done.trytes"

# Both GPU backends: the packaged binary lists PoCL's OpenCL device and lavapipe's Vulkan one
# (software drivers, so --software), where they are installed.
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$tmp/runtime}"
mkdir -p -m 0700 "$XDG_RUNTIME_DIR"
"$bin" devices --software --json >"$tmp/devices.json"
for be in opencl:/etc/OpenCL/vendors/pocl.icd wgpu:/usr/share/vulkan/icd.d/lvp_icd.*.json; do
    name=${be%%:*}
    # shellcheck disable=SC2086
    if ! ls ${be#*:} >/dev/null 2>&1; then
        echo "check-deb.sh: skipped: no software driver for $name here (${be#*:})"
    elif ! grep -q "\"backend\": \"$name\"" "$tmp/devices.json"; then
        echo "check-deb.sh: the packaged binary lists no $name device:" >&2
        cat "$tmp/devices.json" >&2
        exit 1
    fi
done
"$bin" devices --software
# `curlpow doctor` answers: exit 0 (a GPU usable, or none), 1 (a GPU that cannot be used).
rc=0
"$bin" doctor >"$tmp/doctor.txt" || rc=$?
cat "$tmp/doctor.txt"
[ "$rc" -le 1 ] && tail -1 "$tmp/doctor.txt" | grep -q '^doctor: ' ||
    { echo "check-deb.sh: curlpow doctor exited $rc" >&2; exit 1; }

# A C program against the installed library, built with pkg-config.
if command -v cc >/dev/null && command -v pkg-config >/dev/null; then
    prog=$(sed -n '/^```c$/,/^```$/p' docs/c-api.md | awk '/^\/\* pow.c:/{p=1} p&&/^```$/{exit} p')
    printf '%s\n' "$prog" >"$tmp/pow.c"
    flags=$(PKG_CONFIG_SYSROOT_DIR="$r" PKG_CONFIG_LIBDIR="$lib/pkgconfig" pkg-config --cflags --libs dcurl)
    # shellcheck disable=SC2086
    cc -std=c11 -Wall -Werror "$tmp/pow.c" $flags -o "$tmp/pow"
    LD_LIBRARY_PATH="$lib" "$tmp/pow" 9 <examples/transaction.trytes >"$tmp/c.trytes"
    "$bin" verify --mwm 9 "$tmp/c.trytes"
fi
echo "check-deb.sh: $(basename "$deb") installs into a throwaway root and runs"
