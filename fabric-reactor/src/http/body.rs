//! Request body framing: `Content-Length` or chunked, decoded into the service's buffer.

use super::chunked::{Chunked, ChunkedError};

/// How a request's body is delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// `Content-Length` bytes (0 without the header).
    Length(usize),
    /// Chunked transfer coding (the last coding of `Transfer-Encoding`).
    Chunked,
}

/// The body being read: its framing and how far it got.
#[derive(Debug)]
pub(super) struct BodyReader {
    remaining: usize,
    chunked: Option<Chunked>,
}

impl BodyReader {
    pub(super) fn new(framing: Framing) -> BodyReader {
        match framing {
            Framing::Length(length) => BodyReader {
                remaining: length,
                chunked: None,
            },
            Framing::Chunked => BodyReader {
                remaining: 0,
                chunked: Some(Chunked::default()),
            },
        }
    }

    /// Whether the whole body was decoded.
    pub(super) fn complete(&self) -> bool {
        match &self.chunked {
            Some(chunked) => chunked.is_done(),
            None => self.remaining == 0,
        }
    }

    /// Moves body bytes from `input` to `data`; whether any input was used.
    pub(super) fn feed(
        &mut self,
        input: &mut Vec<u8>,
        data: &mut Vec<u8>,
    ) -> Result<bool, ChunkedError> {
        if self.complete() || input.is_empty() {
            return Ok(false);
        }
        let used = match &mut self.chunked {
            Some(chunked) => chunked.decode(input, data)?,
            None => {
                let take = self.remaining.min(input.len());
                data.extend_from_slice(&input[..take]);
                self.remaining -= take;
                take
            }
        };
        input.drain(..used);
        Ok(used > 0)
    }
}
