//! AWS event-stream bodies (`application/vnd.amazon.eventstream`: what Bedrock's
//! `InvokeModelWithResponseStream` and `ConverseStream` send), recognised only to be
//! refused by name. They are binary frames, not text: each message is a prelude (its total
//! length and its headers' length, 4-byte big-endian integers each, then a CRC-32 of those
//! 8 bytes), headers (`:event-type`, `:message-type`, `:content-type`, …), a payload and a
//! CRC-32 of the whole message. Read as text they failed as "not UTF-8", which says nothing
//! of what they are or what to do.

/// What a refusal says of such a body: what it is and what to record instead.
pub const REFUSAL: &str = "an AWS event-stream body (`application/vnd.amazon.eventstream`: binary frames with `:event-type` and `:message-type` headers, as Bedrock's InvokeModelWithResponseStream and ConverseStream send): tracediag does not read AWS event-stream bodies; record the stream as SSE instead, the body of an OpenAI-compatible endpoint in front of the model (Bedrock's OpenAI-compatible Chat Completions endpoint, or a gateway such as LiteLLM), or analyze the gateway's request log";

/// The smallest message: the 12-byte prelude and the 4-byte message CRC.
const MIN_MESSAGE: u32 = 16;

/// Whether `bytes` (a file's first bytes) begin with an event-stream message: a prelude
/// whose CRC-32 checks out, whose lengths fit together, and whose headers name
/// `:event-type` or `:message-type`. A text file passes none of this by chance: its first
/// 12 bytes would have to hold a matching CRC.
pub fn looks_like(bytes: &[u8]) -> bool {
    let Some(prelude) = bytes.get(..12) else {
        return false;
    };
    let word = |i: usize| u32::from_be_bytes(prelude[i..i + 4].try_into().expect("4 bytes"));
    let (total, headers, crc) = (word(0), word(4), word(8));
    if total < MIN_MESSAGE || headers > total - MIN_MESSAGE || crc32(&prelude[..8]) != crc {
        return false;
    }
    let end = bytes.len().min(12 + headers as usize);
    let headers = &bytes[12..end];
    [&b":event-type"[..], b":message-type"]
        .iter()
        .any(|name| headers.windows(name.len()).any(|w| w == *name))
}

/// CRC-32 (IEEE 802.3, as zlib and the event-stream framing compute it).
fn crc32(bytes: &[u8]) -> u32 {
    crc32fast::hash(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One message as the framing writes it: prelude, string headers, payload, CRC.
    fn message(headers: &[(&str, &str)], payload: &[u8]) -> Vec<u8> {
        let mut h = vec![];
        for (name, value) in headers {
            h.push(name.len() as u8);
            h.extend(name.as_bytes());
            // Type 7: a string, with a 2-byte length.
            h.push(7);
            h.extend((value.len() as u16).to_be_bytes());
            h.extend(value.as_bytes());
        }
        let total = (12 + h.len() + payload.len() + 4) as u32;
        let mut m = vec![];
        m.extend(total.to_be_bytes());
        m.extend((h.len() as u32).to_be_bytes());
        let crc = crc32(&m);
        m.extend(crc.to_be_bytes());
        m.extend(h);
        m.extend(payload);
        let crc = crc32(&m);
        m.extend(crc.to_be_bytes());
        m
    }

    #[test]
    fn crc32_is_zlibs() {
        // zlib.crc32(b"123456789") == 0xCBF43926, the check value of CRC-32/ISO-HDLC.
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    }

    #[test]
    fn a_bedrock_chunk_is_recognised_and_text_is_not() {
        let m = message(
            &[
                (":event-type", "chunk"),
                (":content-type", "application/json"),
                (":message-type", "event"),
            ],
            br#"{"bytes":"e30="}"#,
        );
        assert!(looks_like(&m));
        // Its first bytes alone (a file cut inside the headers) still tell.
        assert!(looks_like(&m[..30]));
        // A bad prelude CRC, a frame without those headers, text: not event-stream.
        let mut broken = m.clone();
        broken[8] ^= 1;
        assert!(!looks_like(&broken));
        assert!(!looks_like(&message(&[("x", "y")], b"{}")));
        assert!(!looks_like(b"data: {\"choices\":[]}\n\n"));
        assert!(!looks_like(b"request_id,total_handler_ms\n"));
        assert!(!looks_like(b""));
    }
}
