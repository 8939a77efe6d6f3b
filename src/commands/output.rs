//! Where a command writes: standard output through [`Output`], which never panics and never
//! fails a command because the reader went away (`cq list | head -1`): after a broken pipe it
//! swallows further writes, and the command still finishes and returns its real exit code.
//! Warnings go to standard error through [`warn`], which ignores a closed stderr.

use std::io::{self, Write};

/// A command's standard output.
pub struct Output {
    inner: Box<dyn Write>,
    closed: bool,
}

impl Output {
    /// Buffered standard output.
    pub fn stdout() -> Output {
        Output::to(Box::new(io::BufWriter::new(io::stdout())))
    }

    /// Output into any writer (tests).
    pub fn to(inner: Box<dyn Write>) -> Output {
        Output {
            inner,
            closed: false,
        }
    }

    /// Whether the reader has gone away (long listings may stop early).
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    fn absorb(&mut self, result: io::Result<()>) -> io::Result<()> {
        match result {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(())
            }
            other => other,
        }
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.closed {
            return Ok(buf.len());
        }
        match self.inner.write(buf) {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(buf.len())
            }
            other => other,
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.closed {
            return Ok(());
        }
        let flushed = self.inner.flush();
        self.absorb(flushed)
    }
}

/// Writes `cq: <message>` to standard error; a closed stderr is ignored.
pub fn warn(message: &str) {
    let _ = writeln!(io::stderr().lock(), "cq: {message}");
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Closed;

    impl Write for Closed {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::ErrorKind::BrokenPipe.into())
        }

        fn flush(&mut self) -> io::Result<()> {
            Err(io::ErrorKind::BrokenPipe.into())
        }
    }

    #[test]
    fn a_closed_reader_is_absorbed_and_remembered() {
        let mut out = Output::to(Box::new(Closed));
        writeln!(out, "one").unwrap();
        writeln!(out, "two").unwrap();
        out.flush().unwrap();
        assert!(out.is_closed());
    }
}
