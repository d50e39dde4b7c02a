//! The chunked transfer coding of request bodies, decoded incrementally. Pure code.

/// Longest accepted chunk-size or trailer line.
const MAX_CONTROL_LINE: usize = 4096;

/// Why a chunked body is invalid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChunkedError {
    /// A chunk's data is not followed by CRLF.
    Terminator,
    /// A size line is not hexadecimal (or too long), or a control line is over 4 KiB.
    Malformed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Size,
    Data(usize),
    DataEnd,
    Trailers,
    Done,
}

/// Decodes a chunked body incrementally.
#[derive(Debug)]
pub struct Chunked {
    phase: Phase,
}

impl Default for Chunked {
    fn default() -> Self {
        Chunked { phase: Phase::Size }
    }
}

impl Chunked {
    /// Decodes as much of `input` as possible, appending body bytes to `body`; returns how
    /// many input bytes were consumed. Stops after the last chunk's trailers
    /// ([`Chunked::is_done`]).
    pub fn decode(&mut self, input: &[u8], body: &mut Vec<u8>) -> Result<usize, ChunkedError> {
        let mut pos = 0;
        loop {
            let rest = &input[pos..];
            match self.phase {
                Phase::Done => return Ok(pos),
                Phase::Data(remaining) => {
                    if rest.is_empty() {
                        return Ok(pos);
                    }
                    let take = remaining.min(rest.len());
                    body.extend_from_slice(&rest[..take]);
                    pos += take;
                    self.phase = if take == remaining {
                        Phase::DataEnd
                    } else {
                        Phase::Data(remaining - take)
                    };
                }
                Phase::DataEnd => {
                    if rest.len() < 2 {
                        return Ok(pos);
                    }
                    if &rest[..2] != b"\r\n" {
                        return Err(ChunkedError::Terminator);
                    }
                    pos += 2;
                    self.phase = Phase::Size;
                }
                Phase::Size | Phase::Trailers => {
                    let Some(newline) = rest.iter().position(|&b| b == b'\n') else {
                        if rest.len() > MAX_CONTROL_LINE {
                            return Err(ChunkedError::Malformed);
                        }
                        return Ok(pos);
                    };
                    let line = &rest[..newline];
                    pos += newline + 1;
                    if self.phase == Phase::Trailers {
                        if line == b"\r" || line.is_empty() {
                            self.phase = Phase::Done;
                        }
                        continue;
                    }
                    let size = parse_size(line)?;
                    self.phase = if size == 0 {
                        Phase::Trailers
                    } else {
                        Phase::Data(size)
                    };
                }
            }
        }
    }

    /// Whether the last chunk and its trailers were read.
    pub fn is_done(&self) -> bool {
        self.phase == Phase::Done
    }
}

fn parse_size(line: &[u8]) -> Result<usize, ChunkedError> {
    let text = std::str::from_utf8(line).map_err(|_| ChunkedError::Malformed)?;
    let digits = text.split(';').next().unwrap_or_default().trim();
    if digits.is_empty() || digits.len() > 15 {
        return Err(ChunkedError::Malformed);
    }
    usize::from_str_radix(digits, 16).map_err(|_| ChunkedError::Malformed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunked_bodies_decode_across_reads() {
        let wire = b"5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nTrailer: x\r\n\r\n";
        for split in 0..wire.len() {
            let mut decoder = Chunked::default();
            let mut body = Vec::new();
            let mut pending = wire[..split].to_vec();
            let used = decoder.decode(&pending, &mut body).unwrap();
            pending.drain(..used);
            pending.extend_from_slice(&wire[split..]);
            let used = decoder.decode(&pending, &mut body).unwrap();
            assert_eq!(used, pending.len(), "split at {split}");
            assert!(decoder.is_done());
            assert_eq!(body, b"hello world");
        }
        let mut body = Vec::new();
        assert_eq!(
            Chunked::default().decode(b"zz\r\n", &mut body),
            Err(ChunkedError::Malformed)
        );
        assert_eq!(
            Chunked::default().decode(b"1\r\nabc", &mut body),
            Err(ChunkedError::Terminator)
        );
    }
}
