//! A parallel map whose results are taken in input order, with a sliding window instead of
//! batches.
//!
//! Parsing in ordered batches left threads idle: each batch waited for its slowest file, and
//! while the calling thread wrote a batch's records no file was being parsed. Here every pool
//! thread takes the next item as soon as it is free, and the calling thread takes results in
//! order as they arrive. What bounds memory is the window: the items taken and not yet handed
//! over, at most `max_items` of them and at most `budget` bytes of input (one item alone may
//! exceed it, so memory stays bounded by the largest single input).

use std::collections::BTreeMap;
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

struct State<R> {
    /// The next item no thread has taken.
    next: usize,
    /// Items taken and not yet handed to `take`, and their input bytes.
    open: usize,
    bytes: u64,
    ready: BTreeMap<usize, R>,
    /// `take` failed or `work` panicked: the workers stop taking items.
    stop: bool,
    /// A panic of `work`, resumed on the calling thread (which would otherwise wait for its
    /// result forever).
    panic: Option<Box<dyn std::any::Any + Send>>,
}

struct Shared<R> {
    state: Mutex<State<R>>,
    /// A result arrived (the calling thread waits on it).
    arrived: Condvar,
    /// The window moved or the run stopped (workers wait on it).
    moved: Condvar,
}

impl<R> Shared<R> {
    /// The state, even after a panic elsewhere: a worker's panic is caught before it can leave
    /// the state half-written (`work` runs outside the lock).
    fn lock(&self) -> MutexGuard<'_, State<R>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Stops the workers when the calling thread unwinds (a panic of `take`).
struct StopOnUnwind<'a, R>(&'a Shared<R>);

impl<R> Drop for StopOnUnwind<'_, R> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.lock().stop = true;
            self.0.moved.notify_all();
        }
    }
}

/// Runs `work(i)` for every item `i` in `0..costs.len()` on `threads` jobs of the rayon pool
/// (its thread count, as a rule) and hands each result to `take(i, result)` on the calling
/// thread, in order of `i`. `costs[i]` is item `i`'s input bytes. Stops taking new items at the
/// first error of `take`, and returns it.
///
/// With one thread, or when called from inside the pool (where waiting would hold a pool
/// thread), the items run in order on the calling thread: the same results, the same order.
///
/// # Errors
/// The first error `take` returned.
pub fn map_in_order<R: Send, E>(
    threads: usize,
    costs: &[u64],
    max_items: usize,
    budget: u64,
    work: &(dyn Fn(usize) -> R + Sync),
    take: &mut dyn FnMut(usize, R) -> Result<(), E>,
) -> Result<(), E> {
    let n = costs.len();
    if threads <= 1 || n <= 1 || rayon::current_thread_index().is_some() {
        for i in 0..n {
            take(i, work(i))?;
        }
        return Ok(());
    }
    let max_items = max_items.max(1);
    let shared = Shared {
        state: Mutex::new(State { next: 0, open: 0, bytes: 0, ready: BTreeMap::new(), stop: false, panic: None }),
        arrived: Condvar::new(),
        moved: Condvar::new(),
    };
    let worker = || {
        loop {
            let i = {
                let mut s = shared.lock();
                loop {
                    if s.stop || s.next >= n {
                        return;
                    }
                    let fits = s.open == 0 || (s.open < max_items && s.bytes.saturating_add(costs[s.next]) <= budget);
                    if fits {
                        break;
                    }
                    s = shared.moved.wait(s).unwrap_or_else(PoisonError::into_inner);
                }
                let i = s.next;
                s.next += 1;
                s.open += 1;
                s.bytes = s.bytes.saturating_add(costs[i]);
                i
            };
            // Only the calling thread waits for results; workers wait for the window, which a
            // result does not move, unless the run stops.
            match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(i))) {
                Ok(r) => {
                    shared.lock().ready.insert(i, r);
                }
                Err(p) => {
                    let mut s = shared.lock();
                    s.stop = true;
                    s.panic.get_or_insert(p);
                    drop(s);
                    shared.moved.notify_all();
                }
            }
            shared.arrived.notify_one();
        }
    };
    let mut result = Ok(());
    rayon::in_place_scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|_| worker());
        }
        // A panic of `take` leaves this loop; the scope then waits for the workers, which would
        // wait forever for window space it no longer frees. The guard stops them first.
        let _stop = StopOnUnwind(&shared);
        for (i, cost) in costs.iter().enumerate() {
            let r = {
                let mut s = shared.lock();
                loop {
                    if let Some(r) = s.ready.remove(&i) {
                        break Some(r);
                    }
                    if s.panic.is_some() {
                        break None;
                    }
                    s = shared.arrived.wait(s).unwrap_or_else(PoisonError::into_inner);
                }
            };
            let Some(r) = r else { break };
            let outcome = take(i, r);
            {
                let mut s = shared.lock();
                s.open -= 1;
                s.bytes = s.bytes.saturating_sub(*cost);
                if outcome.is_err() {
                    s.stop = true;
                }
            }
            shared.moved.notify_all();
            if let Err(e) = outcome {
                result = Err(e);
                break;
            }
        }
    });
    if let Some(p) = shared.lock().panic.take() {
        std::panic::resume_unwind(p);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::map_in_order;

    /// A panic of `take` on the calling thread reaches the caller instead of leaving the workers
    /// waiting for a window that no longer moves (run on its own thread, so a hang fails the test
    /// rather than the suite).
    #[test]
    fn a_panic_of_take_reaches_the_caller_and_stops_the_workers() {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            // Called from outside the pool, as the pipeline calls it, so the items run on it.
            let costs = vec![1u64; 64];
            let caught = std::panic::catch_unwind(|| {
                let mut take = |i: usize, _: usize| -> Result<(), ()> {
                    assert!(i < 3, "take fails at item {i}");
                    Ok(())
                };
                map_in_order(2, &costs, 4, u64::MAX, &|i| i, &mut take)
            });
            let _ = tx.send(caught.is_err());
        });
        let panicked = rx.recv_timeout(std::time::Duration::from_secs(30)).expect("map_in_order hung after take panicked");
        assert!(panicked, "the panic of take reaches the caller");
    }

    fn run(
        threads: usize,
        costs: &[u64],
        max_items: usize,
        budget: u64,
        fail_at: Option<usize>,
    ) -> (Vec<(usize, usize)>, Result<(), usize>) {
        let work = |i: usize| {
            // Uneven work, so results arrive out of order.
            std::thread::sleep(std::time::Duration::from_micros(50 * ((i * 7919) % 13) as u64));
            i * i
        };
        let mut seen = Vec::new();
        let mut take = |i: usize, r: usize| {
            seen.push((i, r));
            if Some(i) == fail_at { Err(i) } else { Ok(()) }
        };
        let r = map_in_order(threads, costs, max_items, budget, &work, &mut take);
        (seen, r)
    }

    #[test]
    fn results_come_in_input_order_for_any_thread_count() {
        let costs: Vec<u64> = (0..200).map(|i| (i % 5) * 10).collect();
        for threads in [1, 2, 4] {
            let (seen, r) = run(threads, &costs, 8, 100, None);
            assert_eq!(r, Ok(()));
            assert_eq!(seen, (0..200).map(|i| (i, i * i)).collect::<Vec<_>>(), "threads={threads}");
        }
    }

    #[test]
    fn an_item_over_the_budget_still_runs_alone_and_no_items_is_fine() {
        let costs = [5, 1000, 5, 5000, 1];
        let (seen, r) = run(2, &costs, 4, 100, None);
        assert_eq!(r, Ok(()));
        assert_eq!(seen.iter().map(|(i, _)| *i).collect::<Vec<_>>(), vec![0, 1, 2, 3, 4]);
        let (seen, r) = run(2, &[], 4, 100, None);
        assert_eq!((seen.len(), r), (0, Ok(())));
    }

    #[test]
    fn the_first_error_of_take_stops_the_run_and_is_returned() {
        let costs = vec![1u64; 100];
        for threads in [1, 3] {
            let (seen, r) = run(threads, &costs, 4, 100, Some(10));
            assert_eq!(r, Err(10));
            assert_eq!(seen.len(), 11, "nothing is taken after the error (threads={threads})");
        }
    }

    #[test]
    fn a_panic_in_work_reaches_the_caller_instead_of_hanging_it() {
        let work = |i: usize| {
            assert!(i != 37, "item 37 fails");
            i
        };
        let mut taken = 0;
        let mut take = |_: usize, _: usize| {
            taken += 1;
            Ok::<(), ()>(())
        };
        let costs = vec![1u64; 100];
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| map_in_order(2, &costs, 8, 100, &work, &mut take)));
        assert!(r.is_err(), "the panic is resumed");
        assert!(taken <= 37, "nothing after the failed item is taken: {taken}");
    }

    #[test]
    fn the_window_bounds_what_is_open_at_once() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let open = AtomicUsize::new(0);
        let peak = AtomicUsize::new(0);
        let work = |i: usize| {
            let now = open.fetch_add(1, Ordering::SeqCst) + 1;
            peak.fetch_max(now, Ordering::SeqCst);
            std::thread::sleep(std::time::Duration::from_micros(200));
            i
        };
        // Open from the moment work starts to the moment `take` has it.
        let mut take = |_: usize, _: usize| {
            open.fetch_sub(1, Ordering::SeqCst);
            Ok::<(), ()>(())
        };
        let costs = vec![30u64; 64];
        map_in_order(4, &costs, 8, 100, &work, &mut take).expect("runs");
        assert!(peak.load(Ordering::SeqCst) <= 3, "100 bytes hold three items of 30: {}", peak.load(Ordering::SeqCst));
    }
}
