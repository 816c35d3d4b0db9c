// Package progress carries the progress lines of slipway's long-running commands: as text for a
// person, or with --log-format json as one JSON object a line for automation (time, level,
// host, step, message). Code that reports progress writes plain lines to an io.Writer, as it
// always has; where it knows the host and the step it calls Log, so that the JSON says them
// without parsing. The package owns only the format: it knows nothing of hosts or plans.
package progress

import (
	"encoding/json"
	"io"
	"strings"
	"sync"
	"time"
)

// Levels of an Entry.
const (
	Info    = "info"
	Warning = "warning"
	Error   = "error"
)

// Entry is one progress line, as --log-format json prints it.
type Entry struct {
	Time    time.Time `json:"time"`
	Level   string    `json:"level"`
	Host    string    `json:"host,omitempty"`
	Step    string    `json:"step,omitempty"`
	Message string    `json:"message"`
}

// Logger takes entries along with the text line a person reads for them.
type Logger interface {
	Log(e Entry, text string)
}

// Log reports e on w: through w's Log when w is a Logger, and otherwise as text, the line
// (with its newline) that a person reads.
func Log(w io.Writer, e Entry, text string) {
	if w == nil {
		return
	}
	if l, ok := w.(Logger); ok {
		l.Log(e, text)
		return
	}
	_, _ = io.WriteString(w, text)
}

// Writer is where a command's progress goes: text lines passed through as they are, or, once
// SetJSON is called, JSON entries, one a line. Writes are whole lines (or several), as every
// progress writer in slipway makes them; a write without a final newline is a line too.
type Writer struct {
	mu   sync.Mutex
	out  io.Writer
	json bool
	// now is the clock of the entries' time; tests set it.
	now func() time.Time
}

// NewWriter returns a Writer that writes text to out.
func NewWriter(out io.Writer) *Writer { return &Writer{out: out, now: time.Now} }

// SetJSON switches w to JSON entries.
func (w *Writer) SetJSON() {
	w.mu.Lock()
	w.json = true
	w.mu.Unlock()
}

// JSON reports whether w writes JSON entries.
func (w *Writer) JSON() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.json
}

// Write writes text lines; in JSON each becomes an entry (see Parse), blank lines none.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.json {
		return w.out.Write(p)
	}
	for _, line := range strings.Split(strings.TrimSuffix(string(p), "\n"), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		if err := w.encode(Parse(line)); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// Log writes e, or in text mode the line text.
func (w *Writer) Log(e Entry, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.json {
		_, _ = io.WriteString(w.out, text)
		return
	}
	_ = w.encode(e)
}

func (w *Writer) encode(e Entry) error {
	if e.Level == "" {
		e.Level = Info
	}
	if e.Time.IsZero() {
		e.Time = w.now()
	}
	e.Time = e.Time.UTC()
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	_, err = w.out.Write(append(b, '\n'))
	return err
}

// Parse reads a text progress line into an entry: a leading "[host] " (slipway's prefix for
// what a host said or had done; a host name has no space or slash, a count such as [1/5] is
// not one) is its host, a leading "Warning: " or "Error: " its level, and
// the rest its message. Indentation is dropped.
func Parse(line string) Entry {
	e := Entry{Level: Info}
	s := strings.TrimSpace(line)
	for _, l := range []struct{ prefix, level string }{{"Warning: ", Warning}, {"Error: ", Error}} {
		if rest, ok := strings.CutPrefix(s, l.prefix); ok {
			e.Level, s = l.level, rest
		}
	}
	if rest, ok := strings.CutPrefix(s, "["); ok {
		if host, msg, ok := strings.Cut(rest, "] "); ok && host != "" && !strings.ContainsAny(host, " \t/") {
			e.Host, s = host, msg
		}
	}
	e.Message = s
	return e
}
