//! `flowlab`: the interactive app (`flowlab [CASE]`), headless runs, offscreen rendering and
//! benchmarks.

use clap::{Parser, Subcommand};
use flowlab::cli;

/// With no subcommand, `flowlab [CASE]` opens the interactive window.
#[derive(Parser, Debug)]
#[command(
    name = "flowlab",
    version,
    about = "Interactive real-time flow simulation and visualisation"
)]
#[command(args_conflicts_with_subcommands = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// With no subcommand: open the interactive window on a case.
    #[command(flatten)]
    app: flowlab::app::Args,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run a case headless and write its results.
    Run(cli::run::Args),
    /// Measure solver throughput (million cell updates per second).
    Bench(cli::bench::Args),
    /// Render a case offscreen (no window) to a PNG image or a video.
    Render(cli::render::Args),
    /// Run the app's frame loop without a window for a long time and sample its memory.
    Soak(cli::soak::Args),
}

fn main() {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("info")).init();
    let args = Cli::parse();
    let result = match args.command {
        Some(Command::Run(a)) => cli::run::run(a),
        Some(Command::Bench(a)) => cli::bench::run(a),
        Some(Command::Render(a)) => cli::render::run(&a).map_err(anyhow::Error::msg),
        Some(Command::Soak(a)) => cli::soak::run(&a),
        None => flowlab::app::run(args.app).map_err(anyhow::Error::msg),
    };
    if let Err(e) = result {
        if let Some(i) = e.downcast_ref::<cli::run::Interrupted>() {
            eprintln!("{i}");
            std::process::exit(130);
        }
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}
