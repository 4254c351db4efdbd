//! Links the `baton` executable at a fixed address (`-no-pie`) on Linux. A position-independent
//! executable has ~33,000 relocations that the dynamic loader applies at every start,
//! touching (and copying) the pages that hold them: a fifth of a short command such as
//! `baton sessions search` (issue #17). Addresses are randomised for the libraries and the
//! stack either way.
//!
//! A static build (`cargo build-static`, `.cargo/config.toml`) gets its fixed address from
//! `relocation-model=static` instead; `-no-pie` on top of a static C runtime's default
//! (a self-relocating static-pie) would link an executable that crashes at start.

fn main() {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    let static_crt = std::env::var("CARGO_CFG_TARGET_FEATURE")
        .unwrap_or_default()
        .split(',')
        .any(|feature| feature == "crt-static");
    if os == "linux" && arch == "x86_64" && !static_crt {
        println!("cargo:rustc-link-arg-bin=baton=-no-pie");
    }
}
