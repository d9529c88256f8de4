// The work both `benches/peers.rs` (Wayrig) and `peers/waydriver` time, by
// the row names `scripts/bench --peers` joins them on; included by both.
const ROWS: [&str; 5] = [
    "launch to the whole tree",
    "tree read again",
    "check box pressed until the tree shows it checked",
    "13 characters typed until the entry shows them",
    "screenshot (PNG)",
];
