package main

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The streams in testdata are `go test -json` of a small module: a package without test files,
// and one with a passing test, a skipped test, a skipped subtest and (in fail.json) a failing test.
func TestReport(t *testing.T) {
	for _, tt := range []struct {
		file       string
		fail       bool
		wantStatus int
		want       []string
		notWant    []string
	}{
		{"skips.json", false, 0,
			[]string{"?   \texample.com/nsk/q\t[no test files]", "ok  \texample.com/nsk/p", "2 tests were skipped",
				"example.com/nsk/p TestSkip: p_test.go:4: no widget here", "example.com/nsk/p TestSub/a: p_test.go:5: sub 1"},
			[]string{"noise", "=== RUN", "started but reported no result"}},
		{"skips.json", true, 1, []string{"no test may skip here"}, nil},
		{"fail.json", false, 1, []string{"--- FAIL: TestBad", "broken widget", "FAIL\texample.com/nsk/p"}, []string{"noise"}},
	} {
		in, err := os.Open("testdata/" + tt.file)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		s, err := read(in, &out, false)
		in.Close()
		if err != nil {
			t.Fatal(err)
		}
		status := s.report(&out, tt.fail)
		if status != tt.wantStatus {
			t.Errorf("%s -fail=%v: status %d, want %d\n%s", tt.file, tt.fail, status, tt.wantStatus, &out)
		}
		for _, w := range tt.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%s: output lacks %q:\n%s", tt.file, w, &out)
			}
		}
		for _, w := range tt.notWant {
			if strings.Contains(out.String(), w) {
				t.Errorf("%s: output has %q:\n%s", tt.file, w, &out)
			}
		}
	}
}

// With -stream every line goes out as it arrives, once; a failed test's own last lines are
// repeated at the end, after the last package's result, where the tail of a CI log shows them.
func TestStreamRecapsFailures(t *testing.T) {
	in, err := os.Open("testdata/fail.json")
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	var out bytes.Buffer
	s, err := read(in, &out, true)
	if err != nil {
		t.Fatal(err)
	}
	if status := s.report(&out, false); status != 1 {
		t.Errorf("status %d, want 1", status)
	}
	got := out.String()
	for _, w := range []string{"=== RUN   TestOK", "noise", "--- FAIL: TestBad", "what the 1 failed tests printed last:\n--- example.com/nsk/p TestBad\n"} {
		if !strings.Contains(got, w) {
			t.Errorf("output lacks %q:\n%s", w, got)
		}
	}
	recap := got[strings.Index(got, "noskip: what the"):]
	if !strings.Contains(recap, "broken widget") || strings.Contains(recap, "=== RUN") || strings.Contains(recap, "exit status") {
		t.Errorf("the recap should hold TestBad's message and nothing go test added:\n%s", recap)
	}
	if n := strings.Count(got, "broken widget"); n != 2 {
		t.Errorf("the failure message appears %d times, want twice (streamed, then in the recap):\n%s", n, got)
	}
}

func TestOwnTail(t *testing.T) {
	lines := []string{"=== RUN   TestX/a\n", "    x_test.go:1: one\n    x_test.go:2: two\n", "\n", "--- FAIL: TestX/a (0.00s)\n"}
	if got := ownTail(lines, 1); len(got) != 1 || got[0] != "    x_test.go:2: two" {
		t.Errorf("ownTail(_, 1) = %q", got)
	}
	if got := ownTail([]string{"=== RUN   TestX\n", "--- FAIL: TestX (0.00s)\n"}, 5); len(got) != 0 {
		t.Errorf("a test that printed nothing itself: %q, want nothing", got)
	}
}

// A stream cut off before a package's result (go test killed) fails the run.
func TestUnfinishedPackage(t *testing.T) {
	in := `{"Action":"start","Package":"example.com/a"}
{"Action":"run","Package":"example.com/a","Test":"TestX"}
`
	var out bytes.Buffer
	s, err := read(strings.NewReader(in), &out, false)
	if err != nil {
		t.Fatal(err)
	}
	if status := s.report(&out, false); status != 1 || !strings.Contains(out.String(), "example.com/a started but reported no result") {
		t.Errorf("status %d, output:\n%s", status, &out)
	}
}

// The compact list: each failure with its last lines, long lines cut, packages cut off named, and
// two processes' lists one after the other in the same file.
func TestAppendFailures(t *testing.T) {
	name := t.TempDir() + "/failures"
	long := strings.Repeat("x", compactWidth+10)
	first := []failure{
		{pkg: "example.com/a", test: "TestX/sub", tail: []string{"    one", "    two", "    three", "    four", "    five", "    six", "    seven"}},
		{pkg: "example.com/a", test: "TestX", tail: []string{"    " + long}},
	}
	if err := appendFailures(name, first, nil); err != nil {
		t.Fatal(err)
	}
	if err := appendFailures(name, nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := appendFailures(name, []failure{{pkg: "example.com/b", tail: []string{"panic: boom"}}}, []string{"example.com/c"}); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	want := "FAIL TestX/sub\n    two\n    three\n    four\n    five\n    six\n    seven\n" +
		"FAIL TestX\n    " + strings.Repeat("x", compactWidth) + "…\n" +
		"FAIL example.com/b (the package itself)\n    panic: boom\n" +
		"UNFINISHED example.com/c: started but reported no result (killed or timed out?)\n"
	if string(got) != want {
		t.Errorf("the file holds:\n%s\nwant:\n%s", got, want)
	}
}

// The command itself appends to the file NOSKIP_FAILURES names, and leaves it alone when all passed.
func TestFailuresFile(t *testing.T) {
	if os.Getenv("NOSKIP_MAIN") == "1" {
		main()
		return
	}
	for _, tt := range []struct {
		file string
		want string
	}{
		{"fail.json", "FAIL TestBad\n"},
		{"skips.json", ""},
	} {
		name := t.TempDir() + "/failures"
		in, err := os.Open("testdata/" + tt.file)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestFailuresFile$")
		cmd.Env = append(os.Environ(), "NOSKIP_MAIN=1", "NOSKIP_FAILURES="+name)
		cmd.Stdin = in
		out, _ := cmd.CombinedOutput()
		in.Close()
		got, err := os.ReadFile(name)
		if tt.want == "" {
			if !os.IsNotExist(err) {
				t.Errorf("%s: the file was written (%v): %q\n%s", tt.file, err, got, out)
			}
			continue
		}
		if err != nil || !strings.HasPrefix(string(got), tt.want) || !strings.Contains(string(got), "broken widget") {
			t.Errorf("%s: the file holds %q (%v); want it to start with %q and name the message\n%s", tt.file, got, err, tt.want, out)
		}
	}
}

// A test whose binary also logs (a controller's stack traces after the test's own error): the
// compact list gives the test's own messages, not the log lines that came last.
func TestCompactPrefersTestMessages(t *testing.T) {
	out := []string{
		"=== RUN   TestScenarios/QuotaWait\n",
		"    quota.go:74: once quota freed, the pool is 3 Machines; want the same three Machines\n",
		"2026-12-04T21:08:10Z\tERROR\tmachine-controller\torphan sweep\t{\"error\": \"connection refused\"}\n",
		"github.com/slipway-dev/slipway/pkg/controller/orphans.(*Sweeper).Start\n",
		"\t/tmp/cirun/pkg/controller/orphans/sweeper.go:65\n",
		"--- FAIL: TestScenarios/QuotaWait (34.52s)\n",
	}
	if got := testMessages(out, compactLines); len(got) != 1 || !strings.Contains(got[0], "quota.go:74: once quota freed") {
		t.Fatalf("testMessages = %q, want the quota.go:74 line alone", got)
	}
	name := t.TempDir() + "/failures"
	f := failure{pkg: "example.com/a", test: "TestScenarios/QuotaWait", tail: ownTail(out, recapLines), messages: testMessages(out, compactLines)}
	if err := appendFailures(name, []failure{f}, nil); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if want := "FAIL TestScenarios/QuotaWait\n    quota.go:74: once quota freed, the pool is 3 Machines; want the same three Machines\n"; string(got) != want {
		t.Errorf("the file holds:\n%s\nwant:\n%s", got, want)
	}
}
