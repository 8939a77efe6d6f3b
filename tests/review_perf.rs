//! Rough timings of the reviewer on a synthetic queue of 100,000 items (paged, so nothing
//! loads the whole queue): first frame, and key press to redrawn frame. Ignored by default
//! (timings on a shared machine are noisy); run with
//! `cargo test --release --test review_perf -- --ignored --nocapture`.
#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use cq::review::action::Action;
use cq::review::app::AppOptions;
use cq::review::fake::{LargeSource, FAKE_NOW};
use cq::review::headless::Headless;

fn options() -> AppOptions {
    AppOptions {
        readonly: false,
        reviewer: "bench".into(),
        now_unix: FAKE_NOW,
        page_size: cq::review::PAGE_SIZE,
    }
}

#[test]
#[ignore = "timing; run explicitly"]
fn first_frame_and_key_to_frame_on_100k_items() {
    let start = Instant::now();
    let h = Headless::new(LargeSource::new(100_000), options(), 160, 48).unwrap();
    let _ = h.render().unwrap();
    let first = start.elapsed();
    let mut h = h;
    let mut worst = Duration::ZERO;
    let mut total = Duration::ZERO;
    let actions = [
        Action::MoveDown,
        Action::PageDown,
        Action::Bottom,
        Action::Top,
        Action::Open,
        Action::NextPane,
        Action::MoveDown,
        Action::ToggleDiff,
        Action::Back,
        Action::Back,
    ];
    for _ in 0..10 {
        for action in actions {
            let t = Instant::now();
            h.update(action);
            let _ = h.render().unwrap();
            let took = t.elapsed();
            worst = worst.max(took);
            total += took;
        }
    }
    let n = u32::try_from(actions.len() * 10).unwrap();
    println!(
        "first frame {first:?}; key to frame: mean {:?}, worst {worst:?}",
        total / n
    );
    assert!(first < Duration::from_secs(2));
}
