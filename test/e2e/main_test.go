package e2e

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Binaries built once for every test.
var (
	slipwayBin  string
	netcheckBin string
	buildErr    error
)

func TestMain(m *testing.M) {
	flag.Parse()
	if !testing.Short() {
		dir, err := os.MkdirTemp("", "slipway-e2e-bin-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		slipwayBin, netcheckBin = filepath.Join(dir, "slipway"), filepath.Join(dir, "netcheck")
		buildErr = build(slipwayBin, "./cmd/slipway", netcheckBin, "./test/e2e/netcheck")
		code := m.Run()
		os.RemoveAll(dir)
		os.Exit(code)
	}
	os.Exit(m.Run())
}

func build(pairs ...string) error {
	for i := 0; i+1 < len(pairs); i += 2 {
		cmd := exec.Command("go", "build", "-o", pairs[i], pairs[i+1])
		cmd.Dir = filepath.Join("..", "..")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go build %s: %v\n%s", pairs[i+1], err, out)
		}
	}
	return nil
}
