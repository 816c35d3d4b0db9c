package main

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestEveryFlagDocumented keeps --help complete: every flag has help text, and every flag the
// Deployment manifest passes exists.
func TestEveryFlagDocumented(t *testing.T) {
	fs := flag.NewFlagSet("machine-controller", flag.ContinueOnError)
	register(fs)
	n := 0
	fs.VisitAll(func(f *flag.Flag) {
		n++
		if strings.TrimSpace(f.Usage) == "" {
			t.Errorf("flag --%s has no help text", f.Name)
		}
	})
	if n < 25 {
		t.Fatalf("only %d flags registered", n)
	}
	raw, err := os.ReadFile(filepath.Join("..", "..", "manifests", "machine-controller", "deployment.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.SplitN(string(raw), "\n---\n", 2)[0]
	var d struct {
		Spec struct {
			Template struct {
				Spec struct {
					Containers []struct {
						Args []string `json:"args"`
					} `json:"containers"`
				} `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal([]byte(doc), &d); err != nil {
		t.Fatal(err)
	}
	for _, a := range d.Spec.Template.Spec.Containers[0].Args {
		name := strings.SplitN(strings.TrimLeft(a, "-"), "=", 2)[0]
		if fs.Lookup(name) == nil {
			t.Errorf("deployment.yaml passes --%s, which machine-controller does not define", name)
		}
	}
}
