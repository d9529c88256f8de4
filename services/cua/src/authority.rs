//! gRPC over a Unix socket names an `:authority` that is no host: grpcio
//! sends the socket's path, percent-encoded, which the HTTP/2 server refuses
//! (RST_STREAM). Each Unix connection passes through here, its requests'
//! header blocks read and written again with `localhost` as the authority.

use std::borrow::Cow;

use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};
use tokio::net::UnixStream;

/// What every HTTP/2 connection starts with.
const PREFACE: &[u8; 24] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
const HEADERS: u8 = 0x1;
const CONTINUATION: u8 = 0x9;
const END_STREAM: u8 = 0x1;
const END_HEADERS: u8 = 0x4;
const PADDED: u8 = 0x8;
const PRIORITY: u8 = 0x20;
/// The largest frame every HTTP/2 peer takes.
const MAX_FRAME: usize = 16_384;
/// The largest header block read whole, past what any gRPC client sends.
const HEADER_BLOCK_LIMIT: usize = 256 * 1024;
/// The largest header block written on once decoded. Indexed fields make a
/// block decode to far more than it is (a field of a few KiB in the table,
/// named again in one byte each); servers take far less (tonic 16 KiB).
const DECODED_BLOCK_LIMIT: usize = 1024 * 1024;
/// What a Unix socket's authority is taken as.
const LOCAL: &[u8] = b"localhost";

/// The connection as the server reads it: the client's frames with their
/// authorities mended, the server's answers passed back as they are.
pub fn mend(client: UnixStream) -> DuplexStream {
    let (server_side, ours) = tokio::io::duplex(64 * 1024);
    let (mut from_client, mut to_client) = client.into_split();
    let (mut from_server, mut to_server) = tokio::io::split(ours);
    tokio::spawn(async move {
        let _ = tokio::io::copy(&mut from_server, &mut to_client).await;
        let _ = to_client.shutdown().await;
    });
    tokio::spawn(async move {
        if let Err(e) = requests(&mut from_client, &mut to_server).await {
            tracing::debug!(%e, "cua.env.v1 Unix connection ended");
        }
        let _ = to_server.shutdown().await;
    });
    server_side
}

/// A frame's header: payload length, type, flags, stream.
struct FrameHead {
    length: usize,
    kind: u8,
    flags: u8,
    stream: u32,
}

impl FrameHead {
    fn parse(b: &[u8; 9]) -> FrameHead {
        FrameHead {
            length: (usize::from(b[0]) << 16) | (usize::from(b[1]) << 8) | usize::from(b[2]),
            kind: b[3],
            flags: b[4],
            stream: u32::from_be_bytes([b[5], b[6], b[7], b[8]]) & 0x7fff_ffff,
        }
    }
}

fn frame_head(length: usize, kind: u8, flags: u8, stream: u32) -> [u8; 9] {
    let s = stream.to_be_bytes();
    [
        (length >> 16) as u8,
        (length >> 8) as u8,
        length as u8,
        kind,
        flags,
        s[0],
        s[1],
        s[2],
        s[3],
    ]
}

/// A header block in progress: its stream, HEADERS flags, priority and
/// the fragments so far.
type OpenBlock = (u32, u8, Option<[u8; 5]>, Vec<u8>);

/// The client's side: frames passed on, header blocks written again.
async fn requests<R, W>(from: &mut R, to: &mut W) -> std::io::Result<()>
where
    R: tokio::io::AsyncRead + Unpin,
    W: tokio::io::AsyncWrite + Unpin,
{
    let mut preface = [0u8; 24];
    from.read_exact(&mut preface).await?;
    to.write_all(&preface).await?;
    if &preface != PREFACE {
        // Not HTTP/2 with prior knowledge: the server says so itself.
        tokio::io::copy(from, to).await?;
        return Ok(());
    }
    let mut decoder = hpack::Decoder::new();
    let mut open: Option<OpenBlock> = None;
    loop {
        let mut head = [0u8; 9];
        from.read_exact(&mut head).await?;
        let frame = FrameHead::parse(&head);
        // The server takes no larger frame (it announces no other size).
        if frame.length > MAX_FRAME {
            return Err(malformed());
        }
        let mut payload = vec![0u8; frame.length];
        from.read_exact(&mut payload).await?;
        match frame.kind {
            HEADERS => {
                let mut data = &payload[..];
                if frame.flags & PADDED != 0 {
                    let pad = usize::from(*data.first().ok_or_else(malformed)?);
                    data = data
                        .get(1..data.len().checked_sub(pad).ok_or_else(malformed)?)
                        .ok_or_else(malformed)?;
                }
                let priority = match frame.flags & PRIORITY {
                    0 => None,
                    _ => {
                        let p: [u8; 5] = data.get(..5).ok_or_else(malformed)?.try_into().unwrap();
                        data = &data[5..];
                        Some(p)
                    }
                };
                open = Some((frame.stream, frame.flags, priority, data.to_vec()));
            }
            CONTINUATION => match open.as_mut() {
                Some((stream, _, _, block))
                    if *stream == frame.stream
                        && block.len() + payload.len() <= HEADER_BLOCK_LIMIT =>
                {
                    block.extend_from_slice(&payload)
                }
                _ => return Err(malformed()),
            },
            _ => {
                to.write_all(&head).await?;
                to.write_all(&payload).await?;
                continue;
            }
        }
        if frame.flags & END_HEADERS == 0 {
            continue;
        }
        let (stream, flags, priority, block) = open.take().ok_or_else(malformed)?;
        let block = mended_block(&mut decoder, &block)?;
        write_block(to, stream, flags & END_STREAM, priority, &block).await?;
    }
}

fn malformed() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, "a malformed HTTP/2 frame")
}

/// A header block decoded, its authority made `localhost`, and encoded again
/// with literals only (the server's table stays empty, ours in step).
fn mended_block(decoder: &mut hpack::Decoder, block: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(block.len() + 16);
    let mut too_large = false;
    let decoded = decoder.decode_with_cb(block, |name: Cow<[u8]>, value: Cow<[u8]>| {
        let value: &[u8] = if &*name == b":authority" {
            LOCAL
        } else {
            &value
        };
        // A field's literal takes its bytes and at most 11 more.
        too_large = too_large || out.len() + name.len() + value.len() + 11 > DECODED_BLOCK_LIMIT;
        if too_large {
            return;
        }
        // A literal header field without indexing, new name (RFC 7541 6.2.2).
        out.push(0x00);
        literal(&mut out, &name);
        literal(&mut out, value);
    });
    decoded.map_err(|_| malformed())?;
    if too_large {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("a header block decoding to more than {DECODED_BLOCK_LIMIT} bytes"),
        ));
    }
    Ok(out)
}

/// A string literal, not Huffman-coded: its length as a 7-bit prefixed
/// integer, then its bytes.
fn literal(out: &mut Vec<u8>, bytes: &[u8]) {
    let mut n = bytes.len();
    if n < 127 {
        out.push(n as u8);
    } else {
        out.push(127);
        n -= 127;
        while n >= 128 {
            out.push((n % 128) as u8 | 0x80);
            n /= 128;
        }
        out.push(n as u8);
    }
    out.extend_from_slice(bytes);
}

/// A header block as HEADERS and CONTINUATION frames within the smallest
/// frame size every server takes.
async fn write_block<W>(
    to: &mut W,
    stream: u32,
    end_stream: u8,
    priority: Option<[u8; 5]>,
    block: &[u8],
) -> std::io::Result<()>
where
    W: tokio::io::AsyncWrite + Unpin,
{
    let first_room = MAX_FRAME - if priority.is_some() { 5 } else { 0 };
    let (first, mut rest) = block.split_at(block.len().min(first_room));
    let mut flags = end_stream;
    if priority.is_some() {
        flags |= PRIORITY;
    }
    if rest.is_empty() {
        flags |= END_HEADERS;
    }
    let length = first.len() + if priority.is_some() { 5 } else { 0 };
    to.write_all(&frame_head(length, HEADERS, flags, stream))
        .await?;
    if let Some(p) = priority {
        to.write_all(&p).await?;
    }
    to.write_all(first).await?;
    while !rest.is_empty() {
        let (part, after) = rest.split_at(rest.len().min(MAX_FRAME));
        let flags = if after.is_empty() { END_HEADERS } else { 0 };
        to.write_all(&frame_head(part.len(), CONTINUATION, flags, stream))
            .await?;
        to.write_all(part).await?;
        rest = after;
    }
    to.flush().await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_authority_that_is_a_path_becomes_localhost() {
        let mut client = hpack::Encoder::new();
        let block = client.encode(vec![
            (&b":method"[..], &b"POST"[..]),
            (&b":authority"[..], &b"tmp%2Fx.sock"[..]),
            (
                &b":path"[..],
                &b"/cua.env.v1.SystemService/GetCapabilities"[..],
            ),
        ]);
        let mut decoder = hpack::Decoder::new();
        let mended = mended_block(&mut decoder, &block).unwrap();
        let headers = hpack::Decoder::new().decode(&mended).unwrap();
        assert_eq!(headers[1], (b":authority".to_vec(), b"localhost".to_vec()));
        assert_eq!(headers[2].1, b"/cua.env.v1.SystemService/GetCapabilities");
        // The client's table is followed: its next block may index into it.
        let again = client.encode(vec![(&b":authority"[..], &b"tmp%2Fx.sock"[..])]);
        let mended = mended_block(&mut decoder, &again).unwrap();
        let headers = hpack::Decoder::new().decode(&mended).unwrap();
        assert_eq!(headers, [(b":authority".to_vec(), b"localhost".to_vec())]);
    }

    #[test]
    fn a_block_that_decodes_to_more_than_the_limit_is_refused_not_grown() {
        // One 4 KiB field into the client's table (literal with incremental
        // indexing, new name), then named again 10,000 times in a byte each
        // (indexed field 62, the table's first entry): 40 MB decoded.
        let mut block = vec![0x40];
        literal(&mut block, b"x");
        literal(&mut block, &[b'y'; 4000]);
        block.extend([0x80 | 62; 10_000]);
        let refused = mended_block(&mut hpack::Decoder::new(), &block);
        let why = refused.expect_err("refused").to_string();
        assert!(why.contains("more than 1048576 bytes"), "{why}");
        // The same field named a few times passes.
        let mut few = vec![0x40];
        literal(&mut few, b"x");
        literal(&mut few, &[b'y'; 4000]);
        few.extend([0x80 | 62; 3]);
        let mended = mended_block(&mut hpack::Decoder::new(), &few).unwrap();
        assert_eq!(hpack::Decoder::new().decode(&mended).unwrap().len(), 4);
    }

    #[test]
    fn long_literals_carry_their_length_in_continued_bytes() {
        let mut out = Vec::new();
        literal(&mut out, &[b'x'; 300]);
        let decoded = hpack::Decoder::new()
            .decode(&[&[0x00, 1, b'a'][..], &out].concat())
            .unwrap();
        assert_eq!(decoded[0].1.len(), 300);
    }
}
