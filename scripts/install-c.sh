#!/usr/bin/env bash
# Installs curlpow's C library like any other: the headers (dcurl.h, ccurl.h, curlpow.h), the
# libraries under their versioned names (libdcurl.so.0.1.0, soname libdcurl.so.0, and the plain
# libdcurl.so that dcurl's users load by name; the same for libccurl), and pkg-config files
# (dcurl.pc, ccurl.pc, curlpow.pc). docs/c-api.md shows a program built against it.
#
#   scripts/install-c.sh [--prefix DIR] [--libdir DIR] [--destdir DIR] [--from DIR]
#                        [--features LIST] [--only dcurl|ccurl]
#
#   --prefix DIR     where it goes (default /usr/local): DIR/include, DIR/lib, DIR/lib/pkgconfig;
#                    letters, digits and / . _ + , @ % = : ~ - only (the .pc files name it,
#                    and pkg-config's users cannot read back a space or a '#')
#   --libdir DIR     the libraries' folder (default PREFIX/lib)
#   --destdir DIR    stage under DIR (packaging): files go to DIR/PREFIX/..., the .pc files
#                    still say PREFIX (DESTDIR in the environment works too)
#   --from DIR       install the libraries already built in DIR instead of building
#                    (default: `cargo build --release` of both, into CARGO_TARGET_DIR or target/)
#   --features LIST  cargo features for that build, e.g. opencl (links libOpenCL.so.1)
#   --only NAME      install one of the two libraries (curlpow.pc comes with dcurl)
#
# As root into a system folder, run `ldconfig` afterwards (this script does, when it can).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

prefix=/usr/local
libdir=
destdir="${DESTDIR:-}"
from=
features=
only=
die() {
    echo "install-c.sh: $*" >&2
    exit 2
}
while [ $# -gt 0 ]; do
    case "$1" in
    --prefix | --libdir | --destdir | --from | --features | --only)
        [ $# -ge 2 ] || die "$1 needs a value"
        case "$1" in
        --prefix) prefix=$2 ;;
        --libdir) libdir=$2 ;;
        --destdir) destdir=$2 ;;
        --from) from=$2 ;;
        --features) features=$2 ;;
        --only) only=$2 ;;
        esac
        shift 2
        ;;
    -h | --help)
        sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    *) die "unknown argument '$1' (see --help)" ;;
    esac
done
case "$prefix" in /*) ;; *) die "--prefix $prefix: an absolute path is needed" ;; esac
libdir=${libdir:-$prefix/lib}
case "$libdir" in /*) ;; *) die "--libdir $libdir: an absolute path is needed" ;; esac
includedir=$prefix/include
# The .pc files name PREFIX and LIBDIR. pkg-config cuts a value at `#` (a comment) and its
# users split its output on spaces (`cc $(pkg-config --cflags --libs dcurl)`), so no escaping
# survives both: such a path is refused. (--destdir may hold anything: it is not written there.)
pc_safe() { # FLAG PATH
    case "$2" in
    *[!A-Za-z0-9/._+,@%=:~-]*)
        die "$1 '$2': pkg-config files cannot name a path with a space, '#', a quote or another shell character (\`cc \$(pkg-config ...)\` would split or cut it); choose one of letters, digits and / . _ + , @ % = : ~ -"
        ;;
    esac
}
pc_safe --prefix "$prefix"
pc_safe --libdir "$libdir"
case "$only" in
"") libs=(dcurl ccurl) ;;
dcurl | ccurl) libs=("$only") ;;
*) die "--only $only: dcurl or ccurl" ;;
esac

# The version, from the packages that build the libraries (the same for both).
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$root/ffi/dcurl/Cargo.toml" | head -1)
[ -n "$version" ] || die "no version in ffi/dcurl/Cargo.toml"
major=${version%%.*}

if [ -z "$from" ]; then
    packages=()
    for lib in "${libs[@]}"; do packages+=(-p "curlpow-$lib"); done
    (cd "$root" && cargo build --release "${packages[@]}" ${features:+--features "$features"})
    from="${CARGO_TARGET_DIR:-$root/target}/release"
elif [ -n "$features" ]; then
    die "--features builds; with --from nothing is built"
fi
for lib in "${libs[@]}"; do
    so="$from/lib$lib.so"
    [ -f "$so" ] || die "$so not found (build it with: cargo build --release -p curlpow-$lib)"
    # A library built before the versioned soname would be found under the wrong name.
    if command -v readelf >/dev/null; then
        soname=$(readelf -d -W "$so" | sed -n 's/.*Library soname: \[\(.*\)\].*/\1/p')
        [ "$soname" = "lib$lib.so.$major" ] ||
            die "$so has soname '${soname:-none}', expected lib$lib.so.$major (rebuild it)"
    fi
done

dest_lib="$destdir$libdir"
dest_inc="$destdir$includedir"
dest_pc="$dest_lib/pkgconfig"
install -d "$dest_lib" "$dest_inc" "$dest_pc"

# pkg-config's variables: paths under the prefix are written relative to it.
pc_libdir=$libdir
case "$libdir" in "$prefix"/*) pc_libdir="\${prefix}${libdir#"$prefix"}" ;; esac
pc() { # NAME LIB DESCRIPTION
    cat >"$dest_pc/$1.pc" <<EOF
prefix=$prefix
libdir=$pc_libdir
includedir=\${prefix}/include

Name: $1
Description: $3
Version: $version
Libs: -L\${libdir} -l$2
Cflags: -I\${includedir}
EOF
    chmod 0644 "$dest_pc/$1.pc"
    echo "  $dest_pc/$1.pc"
}

echo "installing curlpow's C library $version into $destdir$prefix:"
for lib in "${libs[@]}"; do
    install -m 0755 "$from/lib$lib.so" "$dest_lib/lib$lib.so.$version"
    ln -sfn "lib$lib.so.$version" "$dest_lib/lib$lib.so.$major"
    ln -sfn "lib$lib.so.$major" "$dest_lib/lib$lib.so"
    echo "  $dest_lib/lib$lib.so.$version, lib$lib.so.$major, lib$lib.so"
    install -m 0644 "$root/include/$lib.h" "$dest_inc/$lib.h"
    echo "  $dest_inc/$lib.h"
done
# curlpow's own API (curlpow.h) is in both libraries; its .pc links libdcurl.
install -m 0644 "$root/include/curlpow.h" "$dest_inc/curlpow.h"
echo "  $dest_inc/curlpow.h"
for lib in "${libs[@]}"; do
    case "$lib" in
    dcurl)
        pc dcurl dcurl "dcurl's C API (dcurl_init, dcurl_entry, dcurl_destroy) over the curlpow proof-of-work engine"
        pc curlpow dcurl "curlpow's own C API (curlpow.h): IOTA Curl-P-81 proof-of-work on CPU and GPU"
        ;;
    ccurl)
        pc ccurl ccurl "ccurl's C API (ccurl_pow and the rest) over the curlpow proof-of-work engine"
        ;;
    esac
done
if [ -z "$destdir" ] && [ "$(id -u)" = 0 ] && command -v ldconfig >/dev/null; then
    ldconfig
fi
