// Command noskip reads `go test -json` on stdin and prints what a plain `go test` would: each
// package's result line, and the whole output of every failing test and package. It also
// collects every skipped test with the reason it gave, and lists them at the end. With -fail
// (what .ci/run uses under CI=true) a skipped test fails the run: in CI every component a test
// needs is installed, so a skip means that something did not run.
//
//	go test -json ./... | go run ./test/noskip -fail
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
}

func main() {
	fail := flag.Bool("fail", false, "exit 1 when any test was skipped")
	flag.Parse()
	s, err := read(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "noskip:", err)
		os.Exit(1)
	}
	os.Exit(s.report(os.Stdout, *fail))
}

// read copies the plain result lines to w as events arrive, and remembers skips and failures.
func read(r io.Reader, w io.Writer) (*summary, error) {
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
		case "skip":
			if e.Test != "" {
				s.skips = append(s.skips, fmt.Sprintf("%s %s: %s", e.Package, e.Test, reason(output[k])))
			} else { // a package without test files
				s.finished[e.Package] = true
				fmt.Fprint(w, last(output[k]))
			}
			delete(output, k)
		case "pass":
			if e.Test == "" {
				s.finished[e.Package] = true
				fmt.Fprint(w, last(output[k]))
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
			fmt.Fprint(w, strings.Join(output[k], ""))
			delete(output, k)
		}
	}
	return s, sc.Err()
}

// report lists the skipped tests and returns the exit status.
func (s *summary) report(w io.Writer, fail bool) int {
	status := 0
	if s.failed {
		status = 1
	}
	var unfinished []string
	for p := range s.started {
		if !s.finished[p] {
			unfinished = append(unfinished, p)
		}
	}
	sort.Strings(unfinished)
	for _, p := range unfinished {
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

// reason is the last line a skipped test printed before its "--- SKIP" line, which is where
// t.Skip's message goes.
func reason(lines []string) string {
	var kept []string
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "=== ") || strings.HasPrefix(l, "--- SKIP") {
			continue
		}
		kept = append(kept, l)
	}
	if len(kept) == 0 {
		return "(no reason given)"
	}
	return kept[len(kept)-1]
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
