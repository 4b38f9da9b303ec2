//! Lists the built-in harness profiles (every `rules/harnesses/*.toml`, embedded in path order)
//! so a new profile needs no Rust, and says, at build time, when `../shared` (the real corpus and the reference statistics) is
//! absent: the tests that need it then skip, and `cargo test` hides a passing test's output, so
//! this warning is where the skip becomes visible.

fn main() {
    builtin_files("rules/harnesses", "builtin_profiles.rs");
    builtin_files("rules/formats", "builtin_formats.rs");
    println!("cargo:rerun-if-changed=../shared");
    println!("cargo:rerun-if-changed=build.rs");
    let shared = std::path::Path::new(&std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default()).join("../shared");
    if !shared.join("corpus").is_dir() {
        println!("cargo:warning=../shared is absent: tests on the real corpus and the reference statistics will be SKIPPED");
    }
}

/// Writes `$OUT_DIR/<out>`: `&[(shown path, contents)]` for every `.toml` file of `dir` (the
/// harness profiles, the format mappings), so a new one needs no Rust.
fn builtin_files(dir: &str, out_name: &str) {
    let root = std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default());
    let path = root.join(dir);
    println!("cargo:rerun-if-changed={}", path.display());
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(&path)
        .map(|rd| rd.filter_map(Result::ok).map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "toml")).collect())
        .unwrap_or_default();
    files.sort();
    let mut out = String::from("&[\n");
    for f in &files {
        println!("cargo:rerun-if-changed={}", f.display());
        let name = f.file_name().unwrap_or_default().to_string_lossy();
        out.push_str(&format!("    (\"{dir}/{name}\", include_str!({:?})),\n", f.display().to_string()));
    }
    out.push_str("]\n");
    let dest = std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap_or_default()).join(out_name);
    std::fs::write(dest, out).expect("write the list of built-in rules files");
}
