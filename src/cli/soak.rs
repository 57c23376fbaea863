//! `flowlab soak`: the app's frame loop without a window, for as long as asked, to show that
//! memory stays flat: each frame steps the solver ([`AppState::advance_frame`]), keeps states
//! for the rewind ring, announces and gathers the shown fields as the window does; a run that
//! reaches its end time starts again. Every `--sample-seconds` it prints the resident memory
//! (Linux `/proc/self/status` `VmRSS`), the ring's bytes, the step and the time.

use crate::render::gather::{self, Freshness, Scratch};
use crate::render::view::FrameData;
use crate::ui::state::AppState;
use anyhow::bail;
use clap::Args as ClapArgs;
use std::path::PathBuf;
use std::time::{Duration, Instant};

#[derive(ClapArgs, Debug)]
pub struct Args {
    /// Case file (TOML).
    pub case: PathBuf,
    /// Override a case key: --set grid.nx=256.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    /// How long to run, in minutes.
    #[arg(long, default_value_t = 60.0)]
    pub minutes: f64,
    /// Seconds between memory samples.
    #[arg(long, default_value_t = 60.0)]
    pub sample_seconds: f64,
}

/// Resident memory of this process in MiB (Linux), if known.
fn rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kib: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kib / 1024.0)
}

pub fn run(a: &Args) -> anyhow::Result<()> {
    for (name, v) in [("--minutes", a.minutes), ("--sample-seconds", a.sample_seconds)] {
        if !(v.is_finite() && v > 0.0) {
            bail!("{name} must be a finite number > 0, got {v}");
        }
    }
    let case = super::load_case(&a.case, &a.sets)?;
    let mut state = AppState::new(case).map_err(anyhow::Error::msg)?;
    let (mut scratch, mut frame) = (Scratch::default(), FrameData::default());
    let (start, every) = (Instant::now(), Duration::from_secs_f64(a.sample_seconds));
    let end = Duration::from_secs_f64(a.minutes * 60.0);
    let mut next = Duration::ZERO;
    let mut samples: Vec<f64> = Vec::new();
    let info = state.solver.info();
    println!(
        "soak: {} ({}, {}, {}x{}), {} min",
        state.case.spec.case.name, info.backend, info.precision, info.grid.n[0], info.grid.n[1], a.minutes
    );
    println!("   wall_s   RSS_MiB  ring_MiB   restarts        step          t");
    let mut restarts = 0;
    loop {
        state.advance_frame();
        state.prefetch_shown();
        gather::gather(
            state.solver.as_ref(),
            &state.view,
            Freshness::Latest,
            &mut scratch,
            &mut frame,
        );
        if let Some(f) = &state.failure {
            bail!("{}: the run stopped: {f}", a.case.display());
        }
        if !state.playing {
            // The end time was reached: start again, as a teacher replaying the case would.
            state.reset().map_err(anyhow::Error::msg)?;
            state.playing = true;
            restarts += 1;
        }
        let now = start.elapsed();
        if now >= next || now >= end {
            let rss = rss_mib().unwrap_or(f64::NAN);
            samples.push(rss);
            println!(
                "{:9.1} {:9.1} {:9.1} {:10} {:11} {:10.4}",
                now.as_secs_f64(),
                rss,
                state.rewind.ring.bytes() as f64 / (1 << 20) as f64,
                restarts,
                state.solver.steps(),
                state.solver.time()
            );
            next += every;
        }
        if now >= end {
            break;
        }
    }
    let half = &samples[samples.len() / 2..];
    let (lo, hi) = half
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
            (lo.min(v), hi.max(v))
        });
    println!(
        "RSS over the second half of the run: {lo:.1} to {hi:.1} MiB (spread {:.1} MiB); peak {:.1} MiB",
        hi - lo,
        samples.iter().copied().fold(f64::NEG_INFINITY, f64::max)
    );
    Ok(())
}
