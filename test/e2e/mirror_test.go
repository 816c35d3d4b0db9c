package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/slipway-dev/slipway/pkg/mirror"
)

// mirrorImages runs slipway mirror-images for the manifest source (whose registry mirrors are
// the sandbox's registry) into registry, and fails the test unless every image was copied or
// already there. A second run for another version finds the images both share present.
func (h *harness) mirrorImages(t *testing.T, source, registry string) {
	t.Helper()
	r := h.slipway(nil, "mirror-images", "-m", source, registry, "--insecure", "-o", "json")
	if r.code != 0 {
		t.Fatalf("mirror-images into %s: exit code %d", registry, r.code)
	}
	var results []mirror.Result
	if err := json.Unmarshal([]byte(r.stdout), &results); err != nil {
		t.Fatalf("mirror-images -o json: %v\n%s", err, r.stdout)
	}
	count := map[mirror.Status]int{}
	for _, res := range results {
		count[res.Status]++
		if res.Status != mirror.Copied && res.Status != mirror.Present {
			t.Errorf("%s → %s: %s %s", res.Source, res.Destination, res.Status, res.Error)
		}
		if !strings.HasPrefix(res.Destination, registry+"/") {
			t.Errorf("%s was copied to %s, outside %s", res.Source, res.Destination, registry)
		}
	}
	if len(results) < 5 {
		t.Errorf("mirror-images copied %d images; a cluster needs kubeadm's, CoreDNS's, pause, etcd and the CNI's", len(results))
	}
	t.Logf("mirror-images into %s: %d copied, %d present, in %s", registry, count[mirror.Copied], count[mirror.Present], r.duration.Round(100*time.Millisecond))
}
