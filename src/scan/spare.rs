//! Scratch vectors a thread keeps between scans. A large text's scan makes a lower-case copy
//! of it and a list of its digit clusters, about as large as the text and the same size from
//! one chunk to the next; freed and allocated again, each would land on memory never touched
//! before and fault its pages in anew (on a virtual machine, some microseconds a page). Taken
//! from the thread's spares as a [`Spare`], which goes back to them when it drops, each reuses
//! the pages of the last one.
//!
//! A thread keeps at most [`KEPT`] vectors of a kind, none over [`KEPT_BYTES`]: a scan that
//! runs inside another on the same thread (a pool thread waiting on a join runs other tasks)
//! takes a fresh one, and a long-lived process holds little for it.

use std::cell::RefCell;
use std::ops::{Deref, DerefMut};
use std::thread::LocalKey;

use super::digits::Cluster;

/// How many vectors of a kind a thread keeps.
const KEPT: usize = 2;
/// The largest vector kept, in bytes of capacity (a chunk of a large file and its margins fit).
const KEPT_BYTES: usize = 4 << 20;

/// A thread's spare vectors of one kind.
pub(super) struct Spares<T>(RefCell<Vec<Vec<T>>>);

impl<T> Spares<T> {
    const fn new() -> Spares<T> {
        Spares(RefCell::new(Vec::new()))
    }
}

thread_local! {
    /// Byte buffers (the lower-case copy of a text).
    pub(super) static BYTES: Spares<u8> = const { Spares::new() };
    /// Digit clusters.
    pub(super) static CLUSTERS: Spares<Cluster> = const { Spares::new() };
}

/// An empty vector of this thread's spares of `kind`, given back to them when it drops.
pub(super) struct Spare<T: 'static> {
    kind: &'static LocalKey<Spares<T>>,
    vec: Vec<T>,
}

impl<T: 'static> Spare<T> {
    pub(super) fn take(kind: &'static LocalKey<Spares<T>>) -> Spare<T> {
        Spare {
            kind,
            vec: take(kind),
        }
    }
}

impl<T: 'static> Deref for Spare<T> {
    type Target = Vec<T>;

    fn deref(&self) -> &Vec<T> {
        &self.vec
    }
}

impl<T: 'static> DerefMut for Spare<T> {
    fn deref_mut(&mut self) -> &mut Vec<T> {
        &mut self.vec
    }
}

impl<T: 'static> Drop for Spare<T> {
    fn drop(&mut self) {
        give(self.kind, std::mem::take(&mut self.vec));
    }
}

/// An empty vector: one of this thread's spares when it has one (never a panic: a thread being
/// torn down, or a kind already borrowed, gives a fresh one).
fn take<T: 'static>(kind: &'static LocalKey<Spares<T>>) -> Vec<T> {
    kind.try_with(|s| s.0.try_borrow_mut().ok().and_then(|mut s| s.pop()))
        .ok()
        .flatten()
        .unwrap_or_default()
}

/// Gives `v` back to this thread's spares, emptied, unless they are full or it is too large.
fn give<T: 'static>(kind: &'static LocalKey<Spares<T>>, mut v: Vec<T>) {
    if v.capacity() == 0 || v.capacity().saturating_mul(size_of::<T>()) > KEPT_BYTES {
        return;
    }
    v.clear();
    // A thread being torn down keeps nothing.
    let _ = kind.try_with(|s| {
        if let Ok(mut s) = s.0.try_borrow_mut() {
            if s.len() < KEPT {
                s.push(v);
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spare_goes_back_to_the_thread_when_it_drops() {
        let mut spare = Spare::take(&CLUSTERS);
        spare.reserve(100);
        let at = spare.as_ptr();
        drop(spare);
        let again = Spare::take(&CLUSTERS);
        assert!(again.is_empty());
        assert_eq!(again.as_ptr(), at);
    }

    #[test]
    fn a_spare_is_reused_emptied_and_the_thread_keeps_few_and_small_ones() {
        let mut v = take(&BYTES);
        v.extend_from_slice(&[7; 1000]);
        let at = v.as_ptr();
        give(&BYTES, v);
        let again = take(&BYTES);
        assert!(again.is_empty());
        assert_eq!(again.as_ptr(), at);
        assert!(again.capacity() >= 1000);
        // Taken while another is out: a fresh one; both kept when given back, a third not.
        let other = take(&BYTES);
        assert_eq!(other.capacity(), 0);
        give(&BYTES, again);
        give(&BYTES, vec![1; 10]);
        give(&BYTES, vec![2; 10]);
        assert_eq!(BYTES.with(|s| s.0.borrow().len()), KEPT);
        // Too large to keep.
        let _ = (take(&BYTES), take(&BYTES));
        give(&BYTES, vec![0; KEPT_BYTES + 1]);
        assert_eq!(BYTES.with(|s| s.0.borrow().len()), 0);
        // Each thread has its own.
        give(&BYTES, vec![3; 10]);
        std::thread::spawn(|| assert_eq!(take(&BYTES).capacity(), 0))
            .join()
            .unwrap();
    }
}
