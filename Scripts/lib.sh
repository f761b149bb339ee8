# Shared by Scripts/*: installs what the project needs when it is missing.
# shellcheck shell=bash

hp_sync_root() { cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd; }

# How every script builds a release (`swift build "${release_flags[@]}" ...`). On Linux the Swift
# runtime and Foundation are linked into the binary: a command starts in about 14 ms instead of
# 22 (the dynamic linker's symbol lookups in libFoundation*), most of a pull that finds nothing
# to do. macOS ships the Swift runtime with the system, so there is nothing to link there.
#
# Every module, dependencies included, reaches concrete type metadata through direct accessors
# rather than by mangled name: the mangled-name path checks each generic requirement with the
# runtime's conformance lookup, a scan of all ~9,900 conformance records in the binary per new
# (type, protocol) pair. Measured on a pull at M (callgrind): 112 -> 92 M instructions when it
# finds no change, 332 -> 308 M for the incremental case; the binary's code grows 0.6%.
#
# On Linux the executable keeps its symbols to itself (`--no-export-dynamic`): the Swift driver
# exports all of them (34,854) to the dynamic symbol table, which every start then maps, and
# which the runtime's start-up `dladdr` (finding the backtracer) scans one by one. Nothing looks
# its own symbols up by name (`dlsym` here only finds libc's `mallopt`). `--version`: 9.5 ms ->
# 7.5 ms (200 runs each, twice).
release_flags=(-c release -Xswiftc -Xfrontend -Xswiftc -disable-concrete-type-metadata-mangled-name-accessors)
[ "$(uname -s)" = Linux ] && release_flags+=(--static-swift-stdlib -Xlinker --no-export-dynamic)

# Installs the Debian packages named, only those not installed yet.
apt_install_missing() {
    local missing=()
    for package in "$@"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    local sudo_cmd=""
    [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
    echo "installing: ${missing[*]}" >&2
    $sudo_cmd apt-get update -qq >&2 || true
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >&2
}

# The system libraries and tools hp-sync builds and tests with.
ensure_dependencies() {
    if ! command -v swift >/dev/null; then
        echo "hp-sync needs a Swift 6 toolchain (swift.org/install or Xcode); none found on PATH" >&2
        exit 69
    fi
    case "$(uname -s)" in
        Linux)
            if command -v apt-get >/dev/null; then
                apt_install_missing libssl-dev libsqlite3-dev pkg-config openssl python3 faketime
            else
                echo "install OpenSSL 3 and SQLite 3 development files and pkg-config with your package manager" >&2
            fi
            ;;
        Darwin)
            if command -v brew >/dev/null; then
                brew list openssl@3 >/dev/null 2>&1 || brew install openssl@3
                brew list pkg-config >/dev/null 2>&1 || brew install pkg-config
                PKG_CONFIG_PATH="$(brew --prefix openssl@3)/lib/pkgconfig:${PKG_CONFIG_PATH:-}"
                export PKG_CONFIG_PATH
            else
                echo "install Homebrew (brew.sh), then run this again: hp-sync needs openssl@3 and pkg-config" >&2
                exit 69
            fi
            ;;
    esac
}

# What the real-browser test of `hp-sync web` needs: Debian's chromium and chromium-driver, and
# Python's selenium from PyPI (a system Python may refuse a plain pip install: PEP 668).
ensure_browser_test_dependencies() {
    if command -v apt-get >/dev/null; then
        apt_install_missing chromium chromium-driver python3-pip
    fi
    if ! python3 -c 'import selenium' 2>/dev/null; then
        echo "installing: selenium (PyPI)" >&2
        python3 -m pip install --quiet selenium >&2 \
            || python3 -m pip install --quiet --break-system-packages selenium >&2
    fi
}

# What the independent blind restore (Tests/Interop/run-blind-restore.sh) needs: Python's
# cryptography package (ChaCha20-Poly1305, HKDF), Debian's or else from PyPI for the python3 on
# PATH. Without it that one interop test is skipped, saying why.
ensure_interop_dependencies() {
    python3 -c 'import cryptography' 2>/dev/null && return 0
    command -v apt-get >/dev/null && apt_install_missing python3-cryptography python3-pip
    python3 -c 'import cryptography' 2>/dev/null && return 0
    echo "installing: cryptography (PyPI)" >&2
    python3 -m pip install --quiet cryptography >&2 \
        || python3 -m pip install --quiet --break-system-packages cryptography >&2 \
        || echo "could not install Python's cryptography: the blind restore interop test is skipped" >&2
}

# What the memory check needs: Valgrind, and objcopy (binutils) to give it a binary without the
# DWARF 5 it cannot read. Returns 1, saying why, where it cannot run.
ensure_memcheck_dependencies() {
    command -v apt-get >/dev/null && apt_install_missing valgrind binutils
    if ! command -v valgrind >/dev/null || ! command -v objcopy >/dev/null; then
        echo "memory check: needs valgrind and objcopy (Linux); not run here" >&2
        return 1
    fi
}

# What the power-cut test needs: FUSE and Debian's pyfuse3 for the system Python (Linux, root,
# /dev/fuse). Returns 1, saying why, where it cannot run.
ensure_powercut_dependencies() {
    if [ "$(uname -s)" != Linux ] || [ "$(id -u)" -ne 0 ] || [ ! -e /dev/fuse ]; then
        echo "power-cut test: needs Linux, root and /dev/fuse; not run here" >&2
        return 1
    fi
    command -v apt-get >/dev/null && apt_install_missing fuse3 python3-pyfuse3
    /usr/bin/python3 -c 'import pyfuse3, trio' 2>/dev/null || {
        echo "power-cut test: Debian's python3-pyfuse3 is missing" >&2
        return 1
    }
}
