//! Command-line subcommands.

pub mod render;
