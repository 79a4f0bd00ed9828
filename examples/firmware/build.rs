//! Picks the board from the target, puts its memory map where cortex-m-rt's `link.x` finds
//! it as `memory.x`, links the binaries with it, and sets `cfg(board = ...)` for the clock
//! constants of the time driver.
//!
//! | target | QEMU machine | core | memory map |
//! |---|---|---|---|
//! | `thumbv6m-none-eabi` | `microbit` (nRF51822) | Cortex-M0 | `memory-microbit.x` |
//! | `thumbv7m-none-eabi`, `thumbv7em-none-eabihf` | `mps2-an385` | Cortex-M3 | `memory-mps2.x` |

use std::env;
use std::fs;
use std::path::PathBuf;

fn main() {
    let target = env::var("TARGET").expect("cargo sets TARGET");
    let (board, memory) = if target.starts_with("thumbv6m") {
        ("microbit", &include_bytes!("memory-microbit.x")[..])
    } else {
        ("mps2_an385", &include_bytes!("memory-mps2.x")[..])
    };
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    fs::write(out.join("memory.x"), memory).expect("write memory.x");
    println!("cargo:rustc-link-search={}", out.display());
    println!("cargo:rustc-check-cfg=cfg(board, values(\"microbit\", \"mps2_an385\"))");
    println!("cargo:rustc-cfg=board=\"{board}\"");
    println!("cargo:rerun-if-changed=memory-microbit.x");
    println!("cargo:rerun-if-changed=memory-mps2.x");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rustc-link-arg-bins=-Tlink.x");
}
