//! Splitting the selected eval tests into shards, so that several machines (a CI matrix) each
//! run a part of the suite: `cargo copilot-eval --partition hash:K/N` or `count:K/N`.
//!
//! The split is a pure function of the test list (after the package selection and the filters):
//! every eval test belongs to exactly one of the `N` shards, so the shards together run the
//! whole suite once, with no overlap. Their artifacts merge back into one report with
//! `cargo copilot-eval merge` ([`crate::report::merge`]).
//!
//! - `count:K/N`: the `i`-th selected test (from 0, in list order) goes to shard `i mod N + 1`.
//!   Shards differ in size by at most one test. The assignment depends on the whole list, so
//!   every shard must be given the same selection (packages, filters) and the same source.
//! - `hash:K/N`: a test goes to shard `h mod N + 1`, where `h` is the first 8 bytes (big-endian)
//!   of the SHA-256 of `<binary id>\n<test id>` (e.g. `quickstart::evals\ncreates_a_greeting_file::__copilot_eval`).
//!   A test keeps its shard when other tests are added or removed; shard sizes vary.

use std::fmt;
use std::str::FromStr;

use sha2::{Digest, Sha256};

use super::list::TestList;

/// How the selected tests are split, and which shard this run is (see the
/// [module documentation](self)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Partition {
    /// `count:K/N`: round robin over the list order.
    Count {
        /// This shard, from 1 to `total`.
        shard: u64,
        /// The number of shards, at least 1.
        total: u64,
    },
    /// `hash:K/N`: by a stable hash of each test's identity.
    Hash {
        /// This shard, from 1 to `total`.
        shard: u64,
        /// The number of shards, at least 1.
        total: u64,
    },
}

impl Partition {
    /// This shard's number, from 1.
    pub fn shard(&self) -> u64 {
        match *self {
            Self::Count { shard, .. } | Self::Hash { shard, .. } => shard,
        }
    }

    /// The number of shards.
    pub fn total(&self) -> u64 {
        match *self {
            Self::Count { total, .. } | Self::Hash { total, .. } => total,
        }
    }

    /// What the JSON report records of this partition (`partition` in the results file).
    pub fn record(&self) -> crate::report::PartitionRecord {
        let kind = match self {
            Self::Count { .. } => "count",
            Self::Hash { .. } => "hash",
        };
        crate::report::PartitionRecord {
            kind: kind.to_owned(),
            shard: self.shard(),
            total: self.total(),
        }
    }

    /// Whether the test at `position` (from 0) of the selected list, from the binary with id
    /// `binary` (e.g. `quickstart::evals`) and with libtest name `test_id`, belongs to this
    /// shard.
    pub fn selects(&self, position: usize, binary: &str, test_id: &str) -> bool {
        match *self {
            Self::Count { shard, total } => position as u64 % total == shard - 1,
            Self::Hash { shard, total } => hash_bucket(binary, test_id, total) == shard - 1,
        }
    }

    /// Keeps only this shard's tests in `list.tests` (in order) and returns how many were left
    /// to the other shards.
    pub fn apply(&self, list: &mut TestList) -> usize {
        let before = list.tests.len();
        let tests = std::mem::take(&mut list.tests);
        list.tests = tests
            .into_iter()
            .enumerate()
            .filter(|(position, test)| {
                self.selects(*position, &list.binaries[test.binary].id, &test.test_id)
            })
            .map(|(_, test)| test)
            .collect();
        before - list.tests.len()
    }
}

/// The bucket (from 0 to `total - 1`) of a test under `hash:K/N` partitioning: the first 8 bytes
/// of SHA-256(`binary` + `"\n"` + `test_id`) as a big-endian integer, modulo `total`.
pub fn hash_bucket(binary: &str, test_id: &str, total: u64) -> u64 {
    let mut hasher = Sha256::new();
    hasher.update(binary.as_bytes());
    hasher.update(b"\n");
    hasher.update(test_id.as_bytes());
    let digest = hasher.finalize();
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    u64::from_be_bytes(first) % total.max(1)
}

impl FromStr for Partition {
    type Err = String;

    /// Parses `hash:K/N` or `count:K/N` with `1 <= K <= N`.
    ///
    /// Errors: another kind, a missing or non-numeric `K` or `N`, `N = 0`, `K = 0` or `K > N`;
    /// the message shows the expected form.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let usage = "expected hash:K/N or count:K/N with 1 <= K <= N, e.g. hash:1/3";
        let (kind, numbers) = text
            .split_once(':')
            .ok_or_else(|| format!("{text:?}: {usage}"))?;
        let (k, n) = numbers
            .split_once('/')
            .ok_or_else(|| format!("{text:?}: {usage}"))?;
        let parse = |s: &str| {
            s.trim()
                .parse::<u64>()
                .map_err(|_| format!("{text:?}: {s:?} is not a whole number; {usage}"))
        };
        let (shard, total) = (parse(k)?, parse(n)?);
        if total == 0 || shard == 0 || shard > total {
            return Err(format!("{text:?}: shard {shard} of {total}; {usage}"));
        }
        match kind.trim() {
            "count" => Ok(Self::Count { shard, total }),
            "hash" => Ok(Self::Hash { shard, total }),
            other => Err(format!("{text:?}: unknown partitioning {other:?}; {usage}")),
        }
    }
}

impl fmt::Display for Partition {
    /// `hash:K/N` or `count:K/N`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.record().fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::suite::list::{EvalTest, TestBinary};

    /// A list of `n` eval tests spread over three binaries.
    fn list(n: usize) -> TestList {
        let binaries = ["a", "b::evals", "c::bin/x"]
            .iter()
            .map(|id| TestBinary {
                id: (*id).to_owned(),
                package: "p".to_owned(),
                target: "t".to_owned(),
                path: PathBuf::from("/bin/true"),
                cwd: PathBuf::from("/"),
            })
            .collect();
        TestList {
            binaries,
            tests: (0..n)
                .map(|i| EvalTest {
                    binary: i * 3 / n.max(1),
                    test_id: format!("m{}::eval_{i}::__copilot_eval", i % 4),
                    name: format!("m{}::eval_{i}", i % 4),
                })
                .collect(),
            filtered_out: 0,
            unselected: Vec::new(),
            other_tests: 0,
        }
    }

    fn shards(kind: &str, total: u64, n: usize) -> Vec<Vec<String>> {
        (1..=total)
            .map(|k| {
                let partition: Partition = format!("{kind}:{k}/{total}").parse().unwrap();
                let mut shard = list(n);
                let left_out = partition.apply(&mut shard);
                assert_eq!(left_out + shard.tests.len(), n);
                shard.tests.into_iter().map(|t| t.test_id).collect()
            })
            .collect()
    }

    #[test]
    fn the_shards_together_are_exactly_the_suite() {
        for kind in ["count", "hash"] {
            for total in 1..=7 {
                for n in [0, 1, 2, 5, 13, 100] {
                    let all: Vec<String> = list(n).tests.into_iter().map(|t| t.test_id).collect();
                    let mut union: Vec<String> = shards(kind, total, n).concat();
                    assert_eq!(union.len(), n, "{kind}:_/{total} over {n}: overlap or loss");
                    union.sort();
                    let mut expected = all.clone();
                    expected.sort();
                    assert_eq!(union, expected, "{kind}:_/{total} over {n}");
                }
            }
        }
    }

    #[test]
    fn count_shards_are_balanced_and_keep_list_order() {
        let split = shards("count", 3, 13);
        let sizes: Vec<usize> = split.iter().map(Vec::len).collect();
        assert_eq!(sizes, [5, 4, 4]);
        let all: Vec<String> = list(13).tests.into_iter().map(|t| t.test_id).collect();
        assert_eq!(split[0], [0, 3, 6, 9, 12].map(|i| all[i].clone()).to_vec());
    }

    #[test]
    fn hash_shards_do_not_move_when_other_tests_come_and_go() {
        let partition: Partition = "hash:2/4".parse().unwrap();
        let mut small = list(10);
        partition.apply(&mut small);
        let mut large = list(10);
        large.tests.extend(list(40).tests.into_iter().skip(10));
        partition.apply(&mut large);
        for test in &small.tests {
            assert!(large.tests.iter().any(|t| t.test_id == test.test_id));
        }
        // The bucket is a fixed function of the identity (pinned: changing it reshuffles
        // every user's CI matrix).
        assert_eq!(
            hash_bucket(
                "quickstart::evals",
                "creates_a_greeting_file::__copilot_eval",
                1_000_003
            ),
            990_357
        );
        let digest = Sha256::digest(b"x\ny");
        let expected = u64::from_be_bytes(digest[..8].try_into().unwrap()) % 97;
        assert_eq!(hash_bucket("x", "y", 97), expected);
    }

    #[test]
    fn specs_parse_and_print() {
        assert_eq!(
            "hash:1/3".parse::<Partition>(),
            Ok(Partition::Hash { shard: 1, total: 3 })
        );
        assert_eq!(
            "count:3/3".parse::<Partition>(),
            Ok(Partition::Count { shard: 3, total: 3 })
        );
        assert_eq!(
            "count:2/5".parse::<Partition>().unwrap().to_string(),
            "count:2/5"
        );
        for bad in [
            "hash",
            "hash:1",
            "hash:0/3",
            "hash:4/3",
            "hash:1/0",
            "count:a/3",
            "slice:1/2",
            "",
        ] {
            let err = bad.parse::<Partition>().unwrap_err();
            assert!(err.contains("hash:K/N or count:K/N"), "{bad}: {err}");
        }
    }
}
