//! `--shard K/N`: a deterministic 1/N of the work, so N processes (or machines, or Ray tasks)
//! can split a run and their outputs union into the unsharded one.
//!
//! A transcript goes to the shard its path picks: the SHA-256 of the path relative to the input
//! root (the walk's `rel`, which starts with the root's own name), modulo N. That depends neither
//! on file order, nor on where the root is mounted, nor on the machine. A transcript's companion
//! files go with it; outcome files are read by every shard (every join needs them) and counted by
//! the shard their own path picks, as is every other file, so the shards' accounting unions into
//! the unsharded accounting too.

use sha2::{Digest, Sha256};

/// Shard `k` (1-based) of `n`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub k: u32,
    pub n: u32,
}

impl Shard {
    /// Reads `K/N` with 1 ≤ K ≤ N.
    ///
    /// # Errors
    /// Anything else, with what was expected.
    pub fn parse(s: &str) -> Result<Self, String> {
        let bad = || format!("`{s}` is not a shard: write K/N with 1 ≤ K ≤ N, e.g. 2/8");
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let (k, n): (u32, u32) = (k.trim().parse().map_err(|_| bad())?, n.trim().parse().map_err(|_| bad())?);
        if k == 0 || n == 0 || k > n {
            return Err(bad());
        }
        Ok(Self { k, n })
    }

    /// Whether the file at `rel` (relative to its input root) belongs to this shard.
    #[must_use]
    pub fn holds(self, rel: &str) -> bool {
        if self.n == 1 {
            return true;
        }
        let h = Sha256::digest(rel.as_bytes());
        let x = u64::from_be_bytes([h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7]]);
        x % u64::from(self.n) == u64::from(self.k - 1)
    }
}

impl std::str::FromStr for Shard {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Self::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_path_is_in_exactly_one_shard() {
        for n in [1, 3, 7] {
            for i in 0..500 {
                let rel = format!("runs/task-{i}/agent/trajectory.json");
                let owners = (1..=n).filter(|&k| Shard { k, n }.holds(&rel)).count();
                assert_eq!(owners, 1, "{rel} in {owners} of {n} shards");
            }
        }
        // Shards are not empty for a few hundred paths (the hash spreads them).
        let in_each: Vec<usize> = (1..=7).map(|k| (0..500).filter(|i| Shard { k, n: 7 }.holds(&format!("t{i}"))).count()).collect();
        assert!(in_each.iter().all(|&c| c > 40), "{in_each:?}");
    }

    #[test]
    fn reads_k_of_n_and_refuses_the_rest() {
        assert_eq!(Shard::parse("2/8"), Ok(Shard { k: 2, n: 8 }));
        for bad in ["0/3", "4/3", "3", "a/b", "1/0", ""] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
    }
}
