//! FlowLab: interactive real-time flow simulation and visualisation.

pub mod app;
pub mod backend;
pub mod case;
pub mod cli;
pub mod export;
pub mod parallel;
pub mod render;
pub mod solver;
pub mod ui;
