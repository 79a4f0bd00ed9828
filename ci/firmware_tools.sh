# Sourced by the firmware scripts: installs what building and running the firmware needs
# when it is missing (QEMU and the ARM binutils from Debian packages, the Rust targets).
# Usage: install_firmware_tools SCRIPT-NAME TARGET...
install_firmware_tools() {
    local script=$1
    shift
    local packages=()
    command -v qemu-system-arm >/dev/null || packages+=(qemu-system-arm)
    command -v arm-none-eabi-size >/dev/null || packages+=(binutils-arm-none-eabi)
    if ((${#packages[@]})); then
        local sudo=()
        [[ "$(id -u)" -eq 0 ]] || sudo=(sudo)
        echo "$script: installing ${packages[*]}"
        "${sudo[@]}" apt-get update -qq
        DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq \
            --no-install-recommends "${packages[@]}" >/dev/null
    fi
    rustup target add "$@"
}
