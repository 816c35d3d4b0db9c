package golden

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// recorder is a testing.TB that keeps what Check reports instead of failing the test running it.
type recorder struct {
	testing.TB
	name   string
	failed bool
	fatal  bool
	msg    string
}

func (r *recorder) Helper()      {}
func (r *recorder) Name() string { return r.name }
func (r *recorder) Errorf(format string, args ...any) {
	r.failed, r.msg = true, fmt.Sprintf(format, args...)
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	r.fatal = true
	runtime.Goexit()
}

// check runs Check on a recorder in its own goroutine, as Fatalf ends the goroutine it runs in.
func check(t *testing.T, path string, got []byte) *recorder {
	r := &recorder{TB: t, name: "TestRender/flannel host-gw"}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Check(r, path, got)
	}()
	<-done
	return r
}

// comparing makes Check compare whatever the flags and environment of this test run say.
func comparing(t *testing.T) {
	t.Setenv(Env, "")
	was := *update
	*update = false
	t.Cleanup(func() { *update = was })
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCheckPasses(t *testing.T) {
	comparing(t)
	path := filepath.Join(t.TempDir(), "x.golden")
	write(t, path, "a\nb\n")
	if r := check(t, path, []byte("a\nb\n")); r.failed {
		t.Errorf("Check failed on equal content: %s", r.msg)
	}
}

func TestCheckFails(t *testing.T) {
	comparing(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "x.golden")
	write(t, path, "one\ntwo\nthree\nfour\nfive\nsix\n")
	r := check(t, path, []byte("one\ntwo\nthree\nFOUR\nfive\nsix\n"))
	if !r.failed || r.fatal {
		t.Fatalf("Check on different content: failed %v, fatal %v; want a non-fatal failure", r.failed, r.fatal)
	}
	for _, want := range []string{
		"golden file " + path,
		"@@ line 4 @@\n  one\n  two\n  three\n- four\n+ FOUR\n  five\n  six\n",
		"`go test ./test/golden -run '^TestRender$/^flannel host-gw$' -update` (or `make golden`) rewrites it",
	} {
		if !strings.Contains(r.msg, want) {
			t.Errorf("message lacks %q:\n%s", want, r.msg)
		}
	}
	if b, _ := os.ReadFile(path); string(b) != "one\ntwo\nthree\nfour\nfive\nsix\n" {
		t.Errorf("a failing Check changed the golden file: %q", b)
	}

	missing := filepath.Join(dir, "missing.golden")
	r = check(t, missing, []byte("x"))
	if !r.fatal || !strings.Contains(r.msg, "golden file "+missing+" does not exist") || !strings.Contains(r.msg, "-update") {
		t.Errorf("Check on a missing file: fatal %v, message %q", r.fatal, r.msg)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Error("Check created a golden file without -update")
	}
}

func TestCheckRewrites(t *testing.T) {
	for _, tt := range []struct {
		name  string
		setup func(t *testing.T)
	}{
		{"environment", func(t *testing.T) { t.Setenv(Env, "1") }},
		{"flag", func(t *testing.T) {
			*update = true
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			comparing(t)
			dir := t.TempDir()
			changed := filepath.Join(dir, "changed.golden")
			write(t, changed, "old\n")
			created := filepath.Join(dir, "new", "sub", "created.golden")
			tt.setup(t)
			if !Update() {
				t.Fatal("Update() is false")
			}
			for _, path := range []string{changed, created} {
				if r := check(t, path, []byte("new\n")); r.failed {
					t.Errorf("Check under update failed: %s", r.msg)
				}
				if b, err := os.ReadFile(path); err != nil || string(b) != "new\n" {
					t.Errorf("%s after Check under update: %q, %v", path, b, err)
				}
			}
		})
	}
	comparing(t)
	t.Setenv(Env, "0")
	if Update() {
		t.Errorf("Update() is true with %s=0 and no -update", Env)
	}
}

func TestDiff(t *testing.T) {
	long := strings.Repeat("x\n", 30)
	for _, tt := range []struct {
		name, want, got, diff string
	}{
		{"equal", "a\n", "a\n", ""},
		{"first line", "a\nb\n", "z\nb\n", "@@ line 1 @@\n- a\n+ z\n  b\n"},
		{"appended", "a\nb\n", "a\nb\nc\nd\n", "@@ line 3 @@\n  a\n  b\n+ c\n+ d\n"},
		{"removed at the end", "a\nb\nc\n", "a\n", "@@ line 2 @@\n  a\n- b\n- c\n"},
		{"repeated lines", "a\na\na\n", "a\na\n", "@@ line 3 @@\n  a\n  a\n- a\n"},
		{"span", "1\n2\n3\n4\n5\n6\n7\n8\n", "1\n2\nX\n4\n5\nY\n7\n8\n", "@@ line 3 @@\n  1\n  2\n- 3\n- 4\n- 5\n- 6\n+ X\n+ 4\n+ 5\n+ Y\n  7\n  8\n"},
		{"final newline", "a\nb", "a\nb\n", "only the newlines at the end differ: 0 in the golden file, 1 in the output\n"},
		{"empty golden file", "", "a\n", "@@ line 1 @@\n+ a\n"},
		{"long", "", long, "@@ line 1 @@\n" + strings.Repeat("+ x\n", 20) + "+ ... 10 more lines\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Diff([]byte(tt.want), []byte(tt.got)); got != tt.diff {
				t.Errorf("Diff:\n%s\nwant:\n%s", got, tt.diff)
			}
		})
	}
}
