//! The MyGo automation face: newline-delimited JSON over a Unix socket, one
//! request per line, answered in order, each turned into session calls.
//!
//! `server` owns the socket and its rules; `translate` maps the wire's calls
//! onto the session and the one model back into MyGo's words.

#[cfg(test)]
mod hostile;
mod server;
mod translate;

pub use server::{bind, serve, Listener};
pub use translate::role_word;
