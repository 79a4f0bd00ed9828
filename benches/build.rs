//! Declares `cfg(tokio_unstable)`, which the report command sets (tokio's alternative timer
//! needs it), so that builds without it do not warn about an unknown cfg.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(tokio_unstable)");
}
