//! `flowlab`: the interactive app (`flowlab [CASE]`), headless runs, offscreen rendering and
//! benchmarks.

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
    /// Render a case offscreen (no window) to a PNG image or a video.
    Render(cli::render::Args),
}

fn main() {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("info")).init();
    let cli = Cli::parse();
    let result = match cli.command {
        Some(Command::Run(a)) => cli::run::run(a),
        Some(Command::Bench(a)) => cli::bench::run(a),
        Some(Command::Render(a)) => cli::render::run(&a).map_err(anyhow::Error::msg),
        None => flowlab::app::run(cli.app).map_err(anyhow::Error::msg),
    };
    if let Err(e) = result {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}
