//! `flowlab`: run cases headless, benchmark the solvers.

use clap::{Parser, Subcommand};
use flowlab::cli;

#[derive(Parser, Debug)]
#[command(
    name = "flowlab",
    version,
    about = "Interactive real-time flow simulation and visualisation"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run a case headless and write its results.
    Run(cli::run::Args),
    /// Measure solver throughput (million cell updates per second).
    Bench(cli::bench::Args),
}

fn main() {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("info")).init();
    let result = match Cli::parse().command {
        Command::Run(a) => cli::run::run(a),
        Command::Bench(a) => cli::bench::run(a),
    };
    if let Err(e) = result {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}
