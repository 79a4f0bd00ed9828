#!/usr/bin/env bash
# punctual on wasm32-unknown-unknown: the facade with its `wasm` feature builds and passes
# clippy for that target, and punctual-wasm's tests (its driver, and the facade's default
# deadlines on it) run under wasm-bindgen-test, first in Node, then in a headless Chromium,
# in a page and in a dedicated web worker. The same test binaries run on every host.
#
# Installs what is missing, as root on Debian: the rustup target, wasm-bindgen-cli at the
# version of `wasm-bindgen` in Cargo.lock (which wasm-bindgen-test-runner requires; a build
# of a few minutes, skipped once installed), Node, and Chromium with its chromedriver from
# Debian's packages. Fails, saying which, if one cannot be installed.
#
# Run from anywhere: `bash ci/wasm.sh`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

target=wasm32-unknown-unknown
fail() {
    echo "wasm.sh: $*" >&2
    exit 1
}

# The Rust target.
if ! rustup target list --installed | grep -qx "$target"; then
    rustup target add "$target" || fail "could not install the Rust target $target with rustup"
fi

# wasm-bindgen-cli, at exactly the version the tests link.
version=$(awk '$0 == "name = \"wasm-bindgen\"" { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)
[[ -n "$version" ]] || fail "no wasm-bindgen in Cargo.lock"
runner_version() {
    wasm-bindgen-test-runner --version 2>/dev/null | awk '{ print $2 }'
}
if [[ "$(runner_version)" != "$version" ]]; then
    echo "wasm.sh: installing wasm-bindgen-cli $version (a few minutes)"
    # With its own lockfile first; if the registry no longer has a version it pins, with
    # the newest compatible ones.
    if ! cargo install --locked wasm-bindgen-cli --version "$version"; then
        echo "wasm.sh: the locked install failed; installing with today's compatible versions"
        cargo install --force wasm-bindgen-cli --version "$version" ||
            fail "could not install wasm-bindgen-cli $version with cargo"
    fi
    [[ "$(runner_version)" == "$version" ]] ||
        fail "wasm-bindgen-test-runner is not $version after installing it (is ~/.cargo/bin on PATH?)"
fi

# Node and Chromium, from Debian's packages.
apt_updated=false
apt_install() {
    if [[ $(id -u) != 0 ]]; then
        fail "$* is not installed, and only root can install it (apt-get install -y $*)"
    fi
    if ! $apt_updated; then
        apt-get update || fail "apt-get update failed"
        apt_updated=true
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y "$@" || fail "could not install $* with apt-get"
}
command -v node >/dev/null 2>&1 || apt_install nodejs
node_major=$(node --version | sed 's/^v\([0-9]*\).*/\1/')
((node_major >= 16)) || fail "Node $(node --version) has no global \`performance\`: need 16 or later"
chromedriver=/usr/bin/chromedriver
if [[ ! -x $chromedriver ]] || ! command -v chromium >/dev/null 2>&1; then
    apt_install chromium chromium-driver
fi

echo "wasm.sh: $(rustc --version), wasm-bindgen $version, Node $(node --version), $(chromium --version)"

# The facade builds for the web, and both crates pass clippy there.
cargo build --target "$target" -p punctual
cargo clippy --target "$target" -p punctual --lib -- -D warnings
cargo clippy --target "$target" -p punctual-wasm --all-targets -- -D warnings

export CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner
# Runs the tests on one host. Node exits with status 0 when its event loop runs dry, even
# with a test still waiting (a driver that lost a wake-up): so every test binary must also
# have printed its passing summary.
run_tests() {
    local host=$1 log
    log=$(mktemp)
    echo "wasm.sh: the tests in $host"
    if ! cargo test --target "$target" -p punctual-wasm --lib --tests 2>&1 | tee "$log"; then
        rm -f "$log"
        fail "tests failed in $host"
    fi
    local binaries passed
    binaries=$(grep -cE '^ +Running .*[(]target/' "$log" || true)
    passed=$(grep -cE '^test result: ok\. [1-9][0-9]* passed; 0 failed' "$log" || true)
    rm -f "$log"
    ((binaries > 0 && passed == binaries)) ||
        fail "in $host, $passed of $binaries test binaries printed a passing summary (a host that stopped early?)"
}

run_tests Node

# As root, Chromium runs only without its sandbox; the network is closed, so it is told
# not to reach for it. Those flags are in webdriver.json.
export CHROMEDRIVER=$chromedriver
export WASM_BINDGEN_TEST_WEBDRIVER_JSON="$PWD/adapters/wasm/webdriver.json"
WASM_BINDGEN_USE_BROWSER=1 run_tests "headless Chromium"
WASM_BINDGEN_USE_DEDICATED_WORKER=1 run_tests "a web worker of headless Chromium"
echo "wasm.sh: passed"
