//! The `coroner` binary: parse arguments, run, map the result to an exit code.

fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(coroner::cli::run(std::env::args_os()))
}
