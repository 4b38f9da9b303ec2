//! The `coroner` binary: parse arguments, run, map the result to an exit code.

/// A reading of a run allocates and frees millions of short strings and vectors (message texts,
/// calls, matches); glibc's allocator spent about 14% of a one-thread classify of a real
/// SWE-bench run in malloc and free (BENCHMARKS.md), mimalloc less.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(coroner::cli::run(std::env::args_os()))
}
