// Command noskip reads `go test -json` on stdin and prints what a plain `go test` would: each
// package's result line, and the whole output of every failing test and package. With -stream
// it prints every line of output as it arrives instead, as `go test -v` would (the e2e tests,
// whose progress is worth watching). It also collects every skipped test with the reason it
// gave, and lists them at the end, after the end of each failed test's own output, so that the
// tail of a long log says what failed and why. With -fail (what .ci/run uses under CI=true) a
// skipped test fails the run: in CI every component a test needs is installed, so a skip means
// that something did not run.
//
//	go test -json ./... | go run ./test/noskip -fail
//	go test -json -run TestPools ./test/e2e | go run ./test/noskip -stream
//
// When the environment names a file in NOSKIP_FAILURES, the failed tests are also appended to it
// in a compact form (see appendFailures), so that a script running several `go test` processes
// (.ci/run) can print one short list of what failed, and why, last of all.
//
// Its exit status is 1 when a test or package failed, when a skip is not allowed, or when the
// input ends without a result for a package it saw start; the caller keeps `go test`'s own
// status with `set -o pipefail`.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
)

// event is the part of test2json's output this command reads.
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

type key struct{ pkg, test string }

type summary struct {
	skips    []string
	failed   bool
	started  map[string]bool
	finished map[string]bool
	// failures are the failed tests, in the order they ended, with the end of their own output.
	failures []failure
}

// failure is a failed test (or package, Test empty) and the last lines of what it printed
// itself, its subtests' output aside.
type failure struct {
	pkg, test string
	tail      []string
	// messages are the last lines the test logged or failed with through testing (file.go:N:
	// lines), which the compact list prefers to the tail: in a package whose test binary also logs
	// (controllers, clients), the tail can be all log lines and say nothing of why.
	messages []string
}

// recapLines is how much of each failed test's own output the recap repeats.
const recapLines = 40

func main() {
	fail := flag.Bool("fail", false, "exit 1 when any test was skipped")
	stream := flag.Bool("stream", false, "print every line of output as it arrives, as go test -v does")
	flag.Parse()
	s, err := read(os.Stdin, os.Stdout, *stream)
	if err != nil {
		fmt.Fprintln(os.Stderr, "noskip:", err)
		os.Exit(1)
	}
	status := s.report(os.Stdout, *fail)
	if name := os.Getenv("NOSKIP_FAILURES"); name != "" {
		if err := appendFailures(name, s.failures, s.unfinished()); err != nil {
			fmt.Fprintln(os.Stderr, "noskip:", err)
			status = 1
		}
	}
	os.Exit(status)
}

// Limits of the compact list: it is printed at the very end of a CI log, whose tail is what a
// reader sees first.
const (
	compactLines = 6
	compactWidth = 240
)

// appendFailures appends to the file name each failure, subtests before the tests they belong
// to, as "FAIL test" (the package's path with no test) and its last compactLines lines, each cut
// to compactWidth characters, and a line for each package that reported no result. It writes
// once, so that processes appending to the same file (O_APPEND) do not interleave their lines.
func appendFailures(name string, failures []failure, unfinished []string) error {
	if len(failures) == 0 && len(unfinished) == 0 {
		return nil
	}
	var b strings.Builder
	for _, f := range failures {
		name := f.test
		if name == "" {
			name = f.pkg + " (the package itself)"
		}
		fmt.Fprintf(&b, "FAIL %s\n", name)
		tail := f.tail
		if len(f.messages) > 0 {
			tail = f.messages
		}
		if len(tail) > compactLines {
			tail = tail[len(tail)-compactLines:]
		}
		for _, l := range tail {
			l = strings.TrimSpace(l)
			if r := []rune(l); len(r) > compactWidth {
				l = string(r[:compactWidth]) + "…"
			}
			fmt.Fprintf(&b, "    %s\n", l)
		}
	}
	for _, p := range unfinished {
		fmt.Fprintf(&b, "UNFINISHED %s: started but reported no result (killed or timed out?)\n", p)
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(b.String()); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// read copies the plain result lines to w as events arrive (with stream, every line of output),
// and remembers skips and failures.
func read(r io.Reader, w io.Writer, stream bool) (*summary, error) {
	s := &summary{started: map[string]bool{}, finished: map[string]bool{}}
	output := map[key][]string{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if err := json.Unmarshal(line, &e); err != nil || e.Action == "" {
			// go test prints build failures and the like as plain text.
			fmt.Fprintln(w, string(line))
			continue
		}
		k := key{e.Package, e.Test}
		switch e.Action {
		case "start":
			s.started[e.Package] = true
		case "output":
			output[k] = append(output[k], e.Output)
			if stream {
				fmt.Fprint(w, e.Output)
			}
		case "skip":
			if e.Test != "" {
				s.skips = append(s.skips, fmt.Sprintf("%s %s: %s", e.Package, e.Test, reason(output[k])))
			} else { // a package without test files
				s.finished[e.Package] = true
				if !stream {
					fmt.Fprint(w, last(output[k]))
				}
			}
			delete(output, k)
		case "pass":
			if e.Test == "" {
				s.finished[e.Package] = true
				if !stream {
					fmt.Fprint(w, last(output[k]))
				}
			}
			delete(output, k)
		case "build-output": // go 1.24 and later report build errors as events
			fmt.Fprint(w, e.Output)
		case "build-fail":
			s.failed = true
		case "fail":
			s.failed = true
			if e.Test == "" {
				s.finished[e.Package] = true
			}
			if !stream {
				fmt.Fprint(w, strings.Join(output[k], ""))
			}
			if tail := ownTail(output[k], recapLines); len(tail) > 0 {
				s.failures = append(s.failures, failure{e.Package, e.Test, tail, testMessages(output[k], compactLines)})
			}
			delete(output, k)
		}
	}
	return s, sc.Err()
}

// report repeats the end of each failed test's output, lists the skipped tests and returns the
// exit status.
func (s *summary) report(w io.Writer, fail bool) int {
	status := 0
	if s.failed {
		status = 1
	}
	if len(s.failures) > 0 {
		fmt.Fprintf(w, "noskip: what the %d failed tests printed last:\n", len(s.failures))
		for _, f := range s.failures {
			name := f.test
			if name == "" {
				name = "(the package itself)"
			}
			fmt.Fprintf(w, "--- %s %s\n", f.pkg, name)
			for _, l := range f.tail {
				fmt.Fprintln(w, "    "+l)
			}
		}
	}
	for _, p := range s.unfinished() {
		fmt.Fprintf(w, "noskip: %s started but reported no result (killed or timed out?)\n", p)
		status = 1
	}
	if len(s.skips) == 0 {
		fmt.Fprintln(w, "noskip: no test was skipped")
		return status
	}
	fmt.Fprintf(w, "noskip: %d tests were skipped:\n", len(s.skips))
	for _, sk := range s.skips {
		fmt.Fprintln(w, "  "+sk)
	}
	if fail {
		fmt.Fprintln(w, "noskip: no test may skip here (every component is installed): failing")
		return 1
	}
	return status
}

// unfinished are the packages that started and reported no result, sorted.
func (s *summary) unfinished() []string {
	var ps []string
	for p := range s.started {
		if !s.finished[p] {
			ps = append(ps, p)
		}
	}
	sort.Strings(ps)
	return ps
}

// reason is the last line a skipped test printed before its "--- SKIP" line, which is where
// t.Skip's message goes.
func reason(lines []string) string {
	if tail := ownTail(lines, 1); len(tail) > 0 {
		return strings.TrimSpace(tail[0])
	}
	return "(no reason given)"
}

// ownTail is the last n lines a test printed itself: its log and failure messages, without the
// "=== RUN" and "--- FAIL" lines go test adds, nor blank lines. Nothing when it printed nothing
// else (a parent whose subtest failed).
func ownTail(lines []string, n int) []string {
	var kept []string
	for _, chunk := range lines {
		for _, l := range strings.Split(strings.TrimRight(chunk, "\n"), "\n") {
			t := strings.TrimSpace(l)
			if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- ") ||
				t == "FAIL" || strings.HasPrefix(t, "FAIL\t") || t == "PASS" || strings.HasPrefix(t, "exit status ") {
				continue
			}
			kept = append(kept, strings.TrimRight(l, " \t"))
		}
	}
	if len(kept) > n {
		kept = kept[len(kept)-n:]
	}
	return kept
}

// testingLine is a line that testing prints for t.Log, t.Error and t.Fatal: the file and line,
// indented.
var testingLine = regexp.MustCompile(`^\s+[\w./-]+\.go:\d+: `)

// testMessages is the last n lines that the test printed through testing.
func testMessages(lines []string, n int) []string {
	var kept []string
	for _, chunk := range lines {
		for _, l := range strings.Split(strings.TrimRight(chunk, "\n"), "\n") {
			if testingLine.MatchString(l) {
				kept = append(kept, strings.TrimRight(l, " \t"))
			}
		}
	}
	if len(kept) > n {
		kept = kept[len(kept)-n:]
	}
	return kept
}

// last is a package's result line ("ok  	pkg	1.2s"), the last of its output.
func last(lines []string) string {
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.TrimSpace(lines[i]) != "" {
			return lines[i]
		}
	}
	return ""
}
