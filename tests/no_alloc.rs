//! A solver step must not allocate: every buffer is made when the solver is built. A counting
//! global allocator checks that, over all threads, for every family and pressure solver.

use flowlab::case::Case;
use flowlab::solver;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn assert_steps_do_not_allocate(file: &str, sets: &[&str]) {
    let path = format!("{}/cases/{file}.toml", env!("CARGO_MANIFEST_DIR"));
    let mut case = Case::load(std::path::Path::new(&path)).unwrap();
    case.set_assignment("solver.backend=\"cpu\"").unwrap();
    for s in sets {
        case.set_assignment(s).unwrap();
    }
    let pool = flowlab::backend::cpu::thread_pool(2).unwrap();
    pool.install(|| {
        let at_start = ALLOCATIONS.load(Ordering::Relaxed);
        let mut s = solver::build(&case.spec).unwrap();
        assert!(
            ALLOCATIONS.load(Ordering::Relaxed) > at_start,
            "the counter must see the solver's buffers"
        );
        // Warm-up: the first steps may grow rayon's internal queues once.
        for _ in 0..5 {
            s.step().unwrap();
        }
        // Windows of 20 steps. A step that allocates does so in every window; the thread pool's
        // own amortised growth (a work-stealing deque resized, an epoch-GC bag sealed: seen
        // once in many runs as 2 allocations in a window) does not recur. So one clean window
        // is required, and no window may hold an allocation per step.
        let mut windows = Vec::new();
        for _ in 0..4 {
            let before = ALLOCATIONS.load(Ordering::Relaxed);
            for _ in 0..20 {
                s.step().unwrap();
            }
            windows.push(ALLOCATIONS.load(Ordering::Relaxed) - before);
            if windows.last() == Some(&0) {
                break;
            }
        }
        assert!(
            windows.last() == Some(&0) && windows.iter().all(|&a| a < 20),
            "{file} {sets:?}: allocations in windows of 20 steps: {windows:?}"
        );
    });
}

#[test]
fn solver_steps_do_not_allocate() {
    let cavities: [(&str, &[&str]); 2] = [
        (
            "lid_driven_cavity_re400",
            &[
                "grid.nx=64",
                "grid.ny=64",
                "solver.convection=tvd",
                "solver.time_integrator=ab2",
            ],
        ),
        (
            "cavity_3d_re100",
            &["grid.nx=16", "grid.ny=12", "grid.nz=8", "solver.convection=quick"],
        ),
    ];
    for (case, sets) in cavities {
        for ps in ["jacobi", "sor", "pcg", "multigrid", "fft"] {
            let set = format!("solver.pressure_solver={ps}");
            let all: Vec<&str> = sets.iter().copied().chain([set.as_str()]).collect();
            assert_steps_do_not_allocate(case, &all);
        }
    }
    assert_steps_do_not_allocate("taylor_green_3d", &["grid.nx=16", "grid.ny=16", "grid.nz=8"]);
    assert_steps_do_not_allocate("ethier_steinman", &["grid.nx=8", "grid.ny=8", "grid.nz=8"]);
    assert_steps_do_not_allocate("sod", &[]);
    assert_steps_do_not_allocate("cese_sod", &[]);
    assert_steps_do_not_allocate("riemann_quadrant_config3", &["grid.nx=64", "grid.ny=64"]);
    assert_steps_do_not_allocate("cese_quadrant_2d", &["grid.nx=64", "grid.ny=64"]);
}
