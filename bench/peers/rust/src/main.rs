//! crossbeam_pipeline - the peer pipeline in Rust with crossbeam-channel:
//! the same 4 stages as bench/bench_pipeline.c's "pipeline R-row" case
//! (source -> stage -> stage -> sink) joined by bounded channels of 256
//! frames, frames of R rows from a pool built in advance (sent as
//! references), the sink reading every row's weight.
//!
//! Threads: subcirc runs its 4 units on W worker threads, so this peer
//! runs its 4 stages on --threads W threads too: stage i belongs to
//! thread i mod W, and each thread visits its stages in turn, moving up
//! to 64 frames per visit with try_send / try_recv (a full channel stops
//! the stage: backpressure), and yields the CPU after a few idle passes.
//! With --threads 4 it is the usual one thread per stage.
//!
//! usage: crossbeam_pipeline --frames N --rows R --threads T --reps K
//! prints one JSON line: the median items/s (rows) of K runs.
use crossbeam_channel::{bounded, Receiver, Sender, TryRecvError, TrySendError};
use std::time::Instant;

const POOL: usize = 4096;
const CAPACITY: usize = 256;
const BUDGET: usize = 64;
const IDLE_SPINS: u32 = 64;

struct Frame {
    keys: Vec<u64>,
    weights: Vec<i64>,
}

type Msg = &'static Frame;

enum Stage {
    Source { tx: Option<Sender<Msg>>, next: u64, frames: u64, pool: &'static [Frame] },
    Pass { rx: Receiver<Msg>, tx: Option<Sender<Msg>>, held: Option<Msg> },
    Sink { rx: Receiver<Msg>, items: u64, done: bool },
}

impl Stage {
    /// One visit: frames moved, or None once the stage is finished.
    fn visit(&mut self) -> Option<usize> {
        match self {
            Stage::Source { tx, next, frames, pool } => {
                let t = tx.as_ref()?;
                let mut n = 0;
                while n < BUDGET && *next < *frames {
                    match t.try_send(&pool[(*next as usize) % POOL]) {
                        Ok(()) => {
                            *next += 1;
                            n += 1;
                        }
                        Err(TrySendError::Full(_)) => break,
                        Err(TrySendError::Disconnected(_)) => panic!("sink gone"),
                    }
                }
                if *next == *frames {
                    *tx = None; // closes the channel: the stages drain and end
                }
                Some(n)
            }
            Stage::Pass { rx, tx, held } => {
                let t = tx.as_ref()?;
                let mut n = 0;
                while n < BUDGET {
                    let f = match held.take() {
                        Some(f) => f,
                        None => match rx.try_recv() {
                            Ok(f) => f,
                            Err(TryRecvError::Empty) => break,
                            Err(TryRecvError::Disconnected) => {
                                *tx = None;
                                return Some(n);
                            }
                        },
                    };
                    match t.try_send(f) {
                        Ok(()) => n += 1,
                        Err(TrySendError::Full(f)) => {
                            *held = Some(f);
                            break;
                        }
                        Err(TrySendError::Disconnected(_)) => panic!("sink gone"),
                    }
                }
                Some(n)
            }
            Stage::Sink { rx, items, done } => {
                if *done {
                    return None;
                }
                let mut n = 0;
                while n < BUDGET {
                    match rx.try_recv() {
                        Ok(f) => {
                            *items += f.weights.iter().sum::<i64>() as u64;
                            n += 1;
                        }
                        Err(TryRecvError::Empty) => break,
                        Err(TryRecvError::Disconnected) => {
                            *done = true;
                            break;
                        }
                    }
                }
                Some(n)
            }
        }
    }

    fn items(&self) -> u64 {
        match self {
            Stage::Sink { items, .. } => *items,
            _ => 0,
        }
    }
}

/// Visit the stages until all are finished; the rows the sink counted.
fn worker(mut stages: Vec<Stage>) -> u64 {
    let mut idle = 0;
    loop {
        let mut live = false;
        let mut moved = 0;
        for s in stages.iter_mut() {
            if let Some(n) = s.visit() {
                live = true;
                moved += n;
            }
        }
        if !live {
            break;
        }
        if moved == 0 {
            idle += 1;
            if idle >= IDLE_SPINS {
                std::thread::yield_now();
                idle = 0;
            }
        } else {
            idle = 0;
        }
    }
    stages.iter().map(|s| s.items()).sum()
}

fn run_once(pool: &'static [Frame], frames: u64, rows: u64, threads: usize) -> f64 {
    let (t0, r0) = bounded(CAPACITY);
    let (t1, r1) = bounded(CAPACITY);
    let (t2, r2) = bounded(CAPACITY);
    let stages = vec![
        Stage::Source { tx: Some(t0), next: 0, frames, pool },
        Stage::Pass { rx: r0, tx: Some(t1), held: None },
        Stage::Pass { rx: r1, tx: Some(t2), held: None },
        Stage::Sink { rx: r2, items: 0, done: false },
    ];
    let mut per: Vec<Vec<Stage>> = (0..threads).map(|_| Vec::new()).collect();
    for (i, s) in stages.into_iter().enumerate() {
        per[i % threads].push(s);
    }
    let start = Instant::now();
    let handles: Vec<_> = per
        .into_iter()
        .map(|v| std::thread::spawn(move || worker(v)))
        .collect();
    let items: u64 = handles.into_iter().map(|h| h.join().unwrap()).sum();
    let secs = start.elapsed().as_secs_f64();
    if items != frames * rows {
        eprintln!("crossbeam_pipeline: {} of {} items", items, frames * rows);
        std::process::exit(1);
    }
    items as f64 / secs
}

fn arg(args: &[String], name: &str, dflt: u64) -> u64 {
    args.windows(2)
        .find(|w| w[0] == name)
        .map(|w| w[1].parse().unwrap_or(0))
        .unwrap_or(dflt)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let frames = arg(&args, "--frames", 100000);
    let rows = arg(&args, "--rows", 1);
    let threads = arg(&args, "--threads", 2) as usize;
    let reps = arg(&args, "--reps", 3);
    if !(1..=256).contains(&rows) || !(1..=4).contains(&threads) || reps < 1 || frames < 1 {
        eprintln!("crossbeam_pipeline: bad arguments (threads 1..4, rows 1..256)");
        std::process::exit(2);
    }
    let pool: Vec<Frame> = (0..POOL)
        .map(|f| Frame {
            keys: (0..rows).map(|i| (f as u64) * 256 + i).collect(),
            weights: vec![1; rows as usize],
        })
        .collect();
    let pool: &'static [Frame] = Box::leak(pool.into_boxed_slice());
    let _ = pool[0].keys.len(); // the keys ride along, as in C
    let mut v: Vec<f64> = (0..reps).map(|_| run_once(pool, frames, rows, threads)).collect();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    println!(
        "{{\"bench\": \"peers\", \"peer\": \"Rust crossbeam-channel\", \"rows\": {}, \"frames\": {}, \"threads\": {}, \"unit\": \"items/s\", \"value\": {:.1}}}",
        rows,
        frames,
        threads,
        v[v.len() / 2]
    );
}
