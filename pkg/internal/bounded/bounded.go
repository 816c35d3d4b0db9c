// Package bounded reads what comes into slipway from outside (manifests, Terraform output, SSH
// key and known_hosts files, registry CA files, command output) with a size limit, so that a
// huge or endless input such as -m /dev/zero is a clear error naming the input and the limit,
// instead of a process that grows until the kernel kills it.
package bounded

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// TooLargeError says that an input is larger than the limit its reader allows.
type TooLargeError struct {
	// What names the input: a file name, "stdin" or a description.
	What string
	// Max is the limit, in bytes.
	Max int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is larger than %s, the most slipway reads from it", e.What, Size(e.Max))
}

// IsTooLarge reports whether err is, or wraps, a *TooLargeError.
func IsTooLarge(err error) bool {
	var te *TooLargeError
	return errors.As(err, &te)
}

// ReadAll reads r to its end, or fails with a *TooLargeError after max bytes. what names r in
// that error.
func ReadAll(r io.Reader, max int64, what string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, &TooLargeError{What: what, Max: max}
	}
	return data, nil
}

// ReadFile reads the file at path, or fails with a *TooLargeError after max bytes, without
// trusting the size the file system reports (devices and pipes report none).
func ReadFile(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := ReadAll(f, max, path)
	if err != nil && !IsTooLarge(err) {
		return nil, &os.PathError{Op: "read", Path: path, Err: err}
	}
	return data, err
}

// Reader passes R's bytes through up to Max of them, and fails with a *TooLargeError when R
// has more: for a stream read piece by piece, such as an archive as it is decompressed, that
// must not go on without end.
type Reader struct {
	R    io.Reader
	Max  int64
	What string

	n int64
}

func (r *Reader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if r.n >= r.Max {
		// Only a byte past the limit tells an input of exactly Max bytes from a longer one.
		var one [1]byte
		n, err := r.R.Read(one[:])
		if n > 0 {
			return 0, &TooLargeError{What: r.What, Max: r.Max}
		}
		return 0, err
	}
	if rest := r.Max - r.n; int64(len(p)) > rest {
		p = p[:rest]
	}
	n, err := r.R.Read(p)
	r.n += int64(n)
	return n, err
}

// Writer collects what is written to it up to Max bytes. A write past the limit fails with a
// *TooLargeError and calls OnOverflow, if set (to stop whatever produces the output). It is
// safe for concurrent use, so that a command's stdout and stderr may share one.
type Writer struct {
	What       string
	Max        int64
	OnOverflow func()

	mu         sync.Mutex
	buf        []byte
	overflowed bool
}

func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.overflowed || int64(len(w.buf)+len(p)) > w.Max {
		if !w.overflowed && w.OnOverflow != nil {
			w.OnOverflow()
		}
		w.overflowed = true
		return 0, w.err()
	}
	w.buf = append(w.buf, p...)
	return len(p), nil
}

// Bytes is what was written, unless the limit was passed.
func (w *Writer) Bytes() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf
}

// Err is a *TooLargeError once a write passed the limit, else nil.
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err()
}

func (w *Writer) err() error {
	if !w.overflowed {
		return nil
	}
	return &TooLargeError{What: w.What, Max: w.Max}
}

// Size formats a byte count for messages: "1 MiB", "64 KiB", "100 bytes".
func Size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
