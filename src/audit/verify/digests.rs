//! Stored texts hashed on the workers while the store streams more of them: the table
//! cross-check hands each stored request to [`Digests::push`] and later takes every digest
//! back, in the order pushed, from [`Digests::drain`]. Texts are copied into batches of about
//! [`BATCH_BYTES`], and at most [`IN_FLIGHT`] batches wait for a worker, so memory stays bounded
//! however large the store. A batch whose hashing failed gives no digests (`None`), which the
//! caller reports as a mismatch: failing to hash never passes.

use std::collections::BTreeMap;
use std::sync::mpsc::{channel, Receiver, Sender};

use rayon::Scope;
use sha2::{Digest, Sha256};

use super::super::merkle::Hash;

/// Bytes of text per batch handed to one worker.
const BATCH_BYTES: usize = 1 << 20;
/// Batches sent to the workers and not yet hashed, at most.
const IN_FLIGHT: usize = 4;

/// A batch's number, how many texts it held, and their digests (`None` if hashing failed).
type Hashed = (usize, usize, Option<Vec<Hash>>);

pub(super) struct Digests<'s, 'scope> {
    /// Where batches are hashed; `None` hashes them on the calling thread.
    scope: Option<&'s Scope<'scope>>,
    batch: Vec<Vec<u8>>,
    batch_bytes: usize,
    /// Number of the batch being filled (batches are numbered from 0 after each drain).
    next: usize,
    in_flight: usize,
    /// Hashed batches not yet in `ready`, by number.
    done: BTreeMap<usize, (usize, Option<Vec<Hash>>)>,
    /// Batches moved to `ready` so far.
    taken: usize,
    /// Digests of the batches taken so far, in order.
    ready: Vec<Option<Hash>>,
    tx: Sender<Hashed>,
    rx: Receiver<Hashed>,
}

fn hash_all(batch: &[Vec<u8>]) -> Vec<Hash> {
    batch.iter().map(|t| Sha256::digest(t).into()).collect()
}

impl<'s, 'scope> Digests<'s, 'scope> {
    pub fn new(scope: Option<&'s Scope<'scope>>) -> Self {
        let (tx, rx) = channel();
        Digests {
            scope,
            batch: Vec::new(),
            batch_bytes: 0,
            next: 0,
            in_flight: 0,
            done: BTreeMap::new(),
            taken: 0,
            ready: Vec::new(),
            tx,
            rx,
        }
    }

    /// Queues `text` to be hashed.
    pub fn push(&mut self, text: &[u8]) {
        self.batch.push(text.to_vec());
        self.batch_bytes += text.len();
        if self.batch_bytes >= BATCH_BYTES {
            self.send();
        }
    }

    /// Every digest queued since the last drain, in the order pushed (`None` where hashing
    /// failed).
    pub fn drain(&mut self) -> Vec<Option<Hash>> {
        self.send();
        while self.in_flight > 0 {
            self.receive();
        }
        self.take_done();
        self.next = 0;
        self.taken = 0;
        std::mem::take(&mut self.ready)
    }

    fn send(&mut self) {
        if self.batch.is_empty() {
            return;
        }
        let batch = std::mem::take(&mut self.batch);
        self.batch_bytes = 0;
        let n = self.next;
        self.next += 1;
        let Some(scope) = self.scope else {
            self.done.insert(n, (batch.len(), Some(hash_all(&batch))));
            self.take_done();
            return;
        };
        let tx = self.tx.clone();
        scope.spawn(move |_| {
            let hashed =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| hash_all(&batch)));
            // The receiver outlives every batch: `drain` waits for them all.
            let _ = tx.send((n, batch.len(), hashed.ok()));
        });
        self.in_flight += 1;
        while self.in_flight > IN_FLIGHT {
            self.receive();
        }
        self.take_done();
    }

    fn receive(&mut self) {
        match self.rx.recv() {
            Ok((n, len, hashed)) => {
                self.done.insert(n, (len, hashed));
                self.in_flight -= 1;
            }
            // Cannot happen while `self.tx` lives; never wait for ever.
            Err(_) => self.in_flight = 0,
        }
    }

    /// Moves finished batches that follow the ones taken, in order, into `ready`.
    fn take_done(&mut self) {
        while let Some(first) = self.done.first_entry() {
            if *first.key() != self.taken {
                break;
            }
            let (len, hashed) = first.remove();
            self.taken += 1;
            match hashed {
                Some(digests) if digests.len() == len => {
                    self.ready.extend(digests.into_iter().map(Some));
                }
                _ => self.ready.extend(std::iter::repeat_n(None, len)),
            }
        }
    }
}
