//! Says, at build time, when `../shared` (the real corpus and the reference statistics) is
//! absent: the tests that need it then skip, and `cargo test` hides a passing test's output, so
//! this warning is where the skip becomes visible.

fn main() {
    println!("cargo:rerun-if-changed=../shared");
    println!("cargo:rerun-if-changed=build.rs");
    let shared = std::path::Path::new(&std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default()).join("../shared");
    if !shared.join("corpus").is_dir() {
        println!("cargo:warning=../shared is absent: tests on the real corpus and the reference statistics will be SKIPPED");
    }
}
