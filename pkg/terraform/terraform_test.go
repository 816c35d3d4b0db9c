package terraform

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/slipway-dev/slipway/pkg/internal/bounded"
)

func TestParse(t *testing.T) {
	tests := []struct {
		file    string
		wantErr string
		check   func(t *testing.T, o *Output)
	}{
		{file: "output-full.json", check: func(t *testing.T, o *Output) {
			if o.API.Endpoint != "lb.example.com" || len(o.ControlPlane.PublicAddress) != 3 || o.ControlPlane.SSHPort != 2222 {
				t.Errorf("parsed %+v %+v", o.API, o.ControlPlane)
			}
			if len(o.StaticWorkers) != 2 || len(o.Workers) != 2 || *o.Workers["pool1"].Replicas != 2 {
				t.Errorf("groups %v, pools %v", o.StaticWorkers, o.Workers)
			}
		}},
		{file: "output-unknown-field.json", wantErr: `slipway_hosts.value.control_plane.ssh_usr: Forbidden: line 1: unknown field, did you mean "ssh_user"?`},
		{file: "output-unknown-output.json", wantErr: `slipway_host: Forbidden: line 1: unknown field, did you mean "slipway_hosts"?`},
		{file: "output-wrong-type.json", wantErr: "slipway_hosts.value.control_plane.public_address: Invalid value"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			o, err := Load(context.Background(), filepath.Join("testdata", tt.file), nil)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got error %v, want one containing %q", err, tt.wantErr)
				}
				if !strings.Contains(err.Error(), "ssh_port") && tt.file == "output-wrong-type.json" {
					t.Errorf("error should list every problem, got %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, o)
		})
	}
}

func TestParseRejectsNonObjects(t *testing.T) {
	for _, doc := range []string{"[]", "\"x\"", "", "{"} {
		if _, err := Parse([]byte(doc)); err == nil {
			t.Errorf("Parse(%q) succeeded", doc)
		}
	}
}

func TestLoadStdin(t *testing.T) {
	data, err := os.ReadFile("testdata/output-full.json")
	if err != nil {
		t.Fatal(err)
	}
	o, err := Load(context.Background(), "-", strings.NewReader(string(data)))
	if err != nil || o.ControlPlane.ClusterName != "full" {
		t.Fatalf("Load(-) = %+v, %v", o, err)
	}
}

func TestLoadDirectoryWithoutTerraform(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := Load(context.Background(), "testdata/fixture", nil)
	if !errors.Is(err, ErrTerraformMissing) || !strings.Contains(err.Error(), "install Terraform") {
		t.Fatalf("got %v, want ErrTerraformMissing with advice", err)
	}
}

// applied writes main.tf into a new directory and runs the real terraform binary's init and
// apply there, for a configuration that needs no providers.
func applied(t *testing.T, ctx context.Context, mainTF []byte) string {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the terraform binary; skipped under -short")
	}
	bin, err := exec.LookPath("terraform")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("terraform is not installed, and CI must provide it: %v", err)
		}
		t.Skipf("terraform is not installed (%v); .ci/run installs it", err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), mainTF, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-input=false", "-no-color"}, {"apply", "-auto-approve", "-input=false", "-no-color"}} {
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("terraform %s: %v\n%s", args[0], err, out)
		}
	}
	return dir
}

// TestLoadDirectoryWithRealTerraform runs the real terraform binary: init and apply on a
// configuration that needs no providers, then reads its outputs through Load(dir).
func TestLoadDirectoryWithRealTerraform(t *testing.T) {
	src, err := os.ReadFile("testdata/fixture/main.tf")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := applied(t, ctx, src)
	o, err := Load(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	cp := o.ControlPlane
	if cp == nil || cp.ClusterName != "tf-fixture" || len(cp.PublicAddress) != 3 || cp.Hostnames[2] != "tf-fixture-cp-3" {
		t.Fatalf("control plane from terraform = %+v", cp)
	}
	if o.API.Endpoint != "10.10.0.10:6443" || o.StaticWorkers["edge"].Hostnames[0] != "tf-fixture-edge-1" {
		t.Fatalf("api %+v, static workers %+v", o.API, o.StaticWorkers)
	}
}

// TestLoadDirectoryBounded: what the real terraform prints is read with a limit, and a
// terraform that fails is an error of the environment, not of the output.
func TestLoadDirectoryBounded(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// A 9 MB output value, more than MaxOutputBytes.
	dir := applied(t, ctx, []byte(`output "big" { value = format("%09000000d", 0) }`+"\n"))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := Load(ctx, dir, nil)
	runtime.ReadMemStats(&after)
	if !bounded.IsTooLarge(err) || !strings.Contains(err.Error(), "larger than 8 MiB") {
		t.Fatalf("Load of a 9 MB output = %v, want a too-large error", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
		t.Errorf("Load allocated %d MiB reading a 9 MB output, want at most 64", alloc>>20)
	}

	broken := t.TempDir()
	if err := os.WriteFile(filepath.Join(broken, "terraform.tfstate"), []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = Load(ctx, broken, nil)
	if !errors.Is(err, ErrTerraformFailed) || !strings.Contains(err.Error(), "Unsupported state file format") {
		t.Fatalf("Load with a broken state = %v, want ErrTerraformFailed with terraform's message", err)
	}
}
