//! The thread pool bulk commands check on (`cq scan`, `cq ingest`, `cq import`, `cq recheck
//! --all`): `--jobs N` threads, or one per core. Work is handed out by rayon's work stealing;
//! results are collected in input order, and the store is written from the calling thread, so
//! what a command prints and records does not depend on the number of threads.

use anyhow::Context;

/// A pool of `jobs` threads, or one per core.
pub fn pool(jobs: Option<u16>) -> anyhow::Result<rayon::ThreadPool> {
    let threads = jobs.map(usize::from).unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    });
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads.max(1))
        .thread_name(|i| format!("cq-worker-{i}"))
        .build()
        .context("while starting the worker threads; try --jobs 1")
}

/// Runs `on_pool` on `pool` while `here` runs on the calling thread (which records what the
/// pool checked before, so the store is still written from one thread); both results. A panic
/// on the pool is the program's bug, not the input's: it is passed on.
pub fn alongside<A: Send, B>(
    pool: &rayon::ThreadPool,
    on_pool: impl FnOnce() -> A + Send,
    here: impl FnOnce() -> B,
) -> (A, B) {
    std::thread::scope(|scope| {
        let running = scope.spawn(|| pool.install(on_pool));
        let done_here = here();
        let done_on_pool = running
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (done_on_pool, done_here)
    })
}
