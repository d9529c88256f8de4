//! The bytes a recording may take on disk (`--record-limit`), shared by its
//! trace, screenshots and video; once spent, each stops writing.

use std::sync::atomic::{AtomicU64, Ordering};

pub(crate) struct Budget {
    limit: u64,
    used: AtomicU64,
}

impl Budget {
    pub(crate) fn new(limit: u64) -> Budget {
        Budget {
            limit,
            used: AtomicU64::new(0),
        }
    }

    /// Count `bytes` as written.
    pub(crate) fn spend(&self, bytes: u64) {
        self.used.fetch_add(bytes, Ordering::Relaxed);
    }

    /// Whether `bytes` more still fit.
    pub(crate) fn fits(&self, bytes: u64) -> bool {
        self.used.load(Ordering::Relaxed).saturating_add(bytes) <= self.limit
    }

    /// Whether the limit is reached.
    pub(crate) fn spent(&self) -> bool {
        !self.fits(1)
    }

    pub(crate) fn used(&self) -> u64 {
        self.used.load(Ordering::Relaxed)
    }
}
