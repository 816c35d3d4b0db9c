package mirror

import (
	"context"
	"errors"
	"sync"

	"github.com/google/go-containerregistry/pkg/authn"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"golang.org/x/sync/errgroup"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/imagelist"
)

// Options say how Run copies.
type Options struct {
	// Registries are the manifest's containerRuntime.containerd.registries: where images are
	// read from (see copier.sources), and how the destination's TLS is verified when it has an
	// entry of its own.
	Registries map[string]v1beta1.ContainerdRegistry
	// Insecure reaches the destination over plain http, or https without verifying its
	// certificate.
	Insecure bool
	// Platform, when set, copies only that platform's image of a multi-platform index, under the
	// same tag: the destination's digest is then that image's, not upstream's. Unset, an index
	// is copied whole and keeps its digest.
	Platform *v1.Platform
	// DryRun reads the sources and the destination and writes nothing.
	DryRun bool
	// Parallel is how many images are copied at once; less than 1 means 1.
	Parallel int
	// Keychain gives the credentials for the destination, and for sources the manifest gives
	// none for. nil is authn.DefaultKeychain: the Docker config and its credential helpers.
	Keychain authn.Keychain
}

// Status is what became of an image.
type Status string

// The statuses of Result.
const (
	Copied    Status = "copied"
	Present   Status = "present"    // the destination had it with the same digest
	WouldCopy Status = "would-copy" // DryRun, and the destination lacks it
	Failed    Status = "failed"
	Skipped   Status = "skipped" // the cluster pulls it by the same name under any overwriteRegistry
)

// Result is one image's copy.
type Result struct {
	Source      string   `json:"source"`
	Destination string   `json:"destination"`
	Digest      string   `json:"digest"`
	Status      Status   `json:"status"`
	Error       string   `json:"error"`
	Components  []string `json:"components"`
	// From is where the image was read: the mirror or registry that had it.
	From string `json:"from,omitempty"`
	// Bytes were uploaded (blobs the destination lacked, and manifests).
	Bytes   int64   `json:"bytes"`
	Seconds float64 `json:"seconds"`

	err error
}

// Run copies each image of moves (Plan's) into registry, at most Parallel at once, and calls
// done with each result as it comes, one call at a time. It returns every result in the order
// of moves, and the failures joined. An image that fails does not stop the others.
func Run(ctx context.Context, registry string, moves []imagelist.Move, o Options, done func(i int, r Result)) ([]Result, error) {
	if err := CheckRegistry(registry); err != nil {
		return nil, err
	}
	c, err := newCopier(o, registry)
	if err != nil {
		return nil, err
	}
	results := make([]Result, len(moves))
	if err := c.reachable(ctx); err != nil {
		// Said once, rather than once for every image.
		for i, m := range moves {
			results[i] = Result{Source: m.From, Destination: m.To, Components: m.Components, Status: Failed, Error: err.Error()}
			if done != nil {
				done(i, results[i])
			}
		}
		return results, err
	}
	var mu sync.Mutex
	var g errgroup.Group
	g.SetLimit(max(o.Parallel, 1))
	for i, m := range moves {
		g.Go(func() error {
			r := c.copy(ctx, m)
			results[i] = r
			if done != nil {
				mu.Lock()
				defer mu.Unlock()
				done(i, r)
			}
			return nil
		})
	}
	_ = g.Wait() // the workers report failures in their results
	var errs []error
	for _, r := range results {
		if r.err != nil {
			errs = append(errs, r.err)
		}
	}
	return results, errors.Join(errs...)
}
