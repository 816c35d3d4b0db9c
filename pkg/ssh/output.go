package ssh

import (
	"bytes"
	"io"
	"sync"
)

// tailBuffer keeps the last max bytes written to it: the stderr tail an
// ExitError shows, without holding a chatty command's whole output.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
	cut bool // older output was dropped
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
		t.cut = true
	}
	return len(p), nil
}

// String is the tail in whole lines: once older output was dropped, the first
// line is a fragment (perhaps the end of a secret, which redaction could not
// recognise), and it goes.
func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.buf
	if i := bytes.IndexByte(b, '\n'); t.cut && i >= 0 {
		b = b[i+1:]
	}
	return string(b)
}

// prefixWriter writes complete lines to out, each prefixed with "[host] " and
// with secrets redacted (secrets hold no line breaks, so whole lines suffice).
// Lines are written whole under a lock shared by every host of a pool, so
// parallel hosts never interleave within a line. Flush writes a trailing
// partial line.
type prefixWriter struct {
	out     io.Writer
	mu      *sync.Mutex
	prefix  []byte
	line    []byte
	secrets *Secrets
}

func newPrefixWriter(out io.Writer, mu *sync.Mutex, host string, secrets *Secrets) *prefixWriter {
	return &prefixWriter{out: out, mu: mu, prefix: []byte("[" + host + "] "), secrets: secrets}
}

func (w *prefixWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.line = append(w.line, p...)
			break
		}
		w.line = append(w.line, p[:i+1]...)
		p = p[i+1:]
		w.emit()
	}
	return n, nil
}

func (w *prefixWriter) emit() {
	w.mu.Lock()
	// Verbose output is best effort: a broken terminal must not fail the
	// command it describes.
	line := w.secrets.Redact(string(w.line))
	_, _ = w.out.Write(append(append([]byte(nil), w.prefix...), line...))
	w.mu.Unlock()
	w.line = w.line[:0]
}

// Flush writes a final line that had no newline.
func (w *prefixWriter) Flush() {
	if len(w.line) > 0 {
		w.line = append(w.line, '\n')
		w.emit()
	}
}
