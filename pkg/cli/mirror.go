package cli

import (
	"fmt"
	"io"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/spf13/cobra"

	"github.com/slipway-dev/slipway/pkg/internal/plural"
	"github.com/slipway-dev/slipway/pkg/mirror"
	"github.com/slipway-dev/slipway/pkg/version"
)

func newMirrorImagesCommand(g *globalOptions, s Streams) *cobra.Command {
	var (
		output, platform string
		dryRun, insecure bool
		parallel         int
	)
	cmd := &cobra.Command{
		Use:   "mirror-images REGISTRY",
		Short: "Copy every image the cluster runs into your registry, under the names overwriteRegistry gives them",
		Long: `Copy every image the manifest's cluster runs (the list of slipway config images) into
REGISTRY, under the names the cluster pulls once the manifest says
registryConfiguration.overwriteRegistry: REGISTRY. REGISTRY is written as overwriteRegistry
takes it: host[:port][/path]. Set overwriteRegistry to it afterwards, and apply.

Each image is read where containerd on the hosts would pull it without overwriteRegistry:
from the mirrors that containerRuntime.containerd.registries gives for its registry (or
"*"), in order, then from the registry itself, with that entry's tlsConfig and credentials.
A site can so fill its registry from an internal mirror.

An image of several platforms is copied whole, every platform, so that its digest stays
upstream's and a reference by digest finds it too. --platform linux/amd64 copies only that
platform's image under the tag: smaller, but with the image's digest, not the index's.

An image whose digest REGISTRY already has under its name is left alone ("present"), and
only the blobs REGISTRY lacks are uploaded: after an interruption, run the command again.
--dry-run reads the sources and REGISTRY and writes nothing. Progress goes to stderr, one
line per image: i/N, source, destination, bytes uploaded or "present", time. With -o json,
stdout gets one object per image (source, destination, digest, status, error, components,
from, bytes, seconds), failed ones included, before the command exits 1. The status is
copied, present, would-copy (--dry-run), failed, or skipped: a machineController.image the
manifest names is pulled as written under any overwriteRegistry, so it is not copied.

Credentials for REGISTRY, and for sources the manifest gives none for, come from your
Docker config ($DOCKER_CONFIG or ~/.docker/config.json, credential helpers included) as
docker login saves them; slipway never prints them. REGISTRY must speak https, verified
with the system's roots or with the tlsConfig.caFile of a containerd.registries entry named
like its host; --insecure allows plain http and unverified TLS.`,
		Example: `  slipway mirror-images -m cluster.yaml registry.site.example:5000
  slipway mirror-images -m cluster.yaml -t tf.json --dry-run registry.site.example/k8s
  # a plain-http registry, only amd64, the failures for a script:
  slipway mirror-images -m cluster.yaml --insecure --platform linux/amd64 10.0.0.5:5000 -o json |
    jq -r '.[] | select(.status == "failed") | .error'`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErrorf("mirror-images needs one argument, the registry to copy into (host[:port][/path]), got %d", len(args))
			}
			if err := mirror.CheckRegistry(args[0]); err != nil {
				return &UsageError{Err: err}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			registry := args[0]
			if err := outputFormat(output, "text", "json"); err != nil {
				return err
			}
			if parallel < 1 {
				return usageErrorf("--parallel %d: must be at least 1", parallel)
			}
			p, err := parsePlatform(platform)
			if err != nil {
				return err
			}
			res, err := load(cmd, g, s)
			if err != nil {
				return err
			}
			moves, err := mirror.Plan(res.Cluster, registry, version.ImageTag())
			if err != nil {
				return err
			}
			if rc := res.Cluster.RegistryConfiguration; rc != nil && rc.OverwriteRegistry != "" && rc.OverwriteRegistry != registry {
				fmt.Fprintf(s.Err, "Warning: the manifest's overwriteRegistry is %s: its cluster pulls from there, not from %s\n", rc.OverwriteRegistry, registry)
			}
			start := time.Now()
			results, runErr := mirror.Run(cmd.Context(), registry, moves, mirror.Options{
				Registries: res.Cluster.ContainerRuntime.Containerd.Registries,
				Insecure:   insecure,
				Platform:   p,
				DryRun:     dryRun,
				Parallel:   parallel,
			}, func(i int, r mirror.Result) { imageDone(s.Err, i, len(moves), r) })
			summary(s.Err, registry, results, time.Since(start))
			if output == "json" {
				if err := printJSON(s.Out, results); err != nil {
					return err
				}
			}
			if runErr != nil {
				failed := 0
				for _, r := range results {
					if r.Status == mirror.Failed {
						failed++
					}
				}
				return fmt.Errorf("%d of %s failed:\n%w", failed, plural.Count(len(results), "image"), runErr)
			}
			return nil
		},
	}
	readsInputs(cmd)
	f := cmd.Flags()
	f.StringVarP(&output, "output", "o", "text", "output format: text (progress on stderr only) or json (one object per image on stdout)")
	f.BoolVar(&dryRun, "dry-run", false, "read the sources and REGISTRY, say what would be copied, write nothing")
	f.BoolVar(&insecure, "insecure", false, "reach REGISTRY over plain http, or https without verifying its certificate")
	f.StringVar(&platform, "platform", "", "copy only this platform's image of multi-platform images (os/arch[/variant], e.g. linux/amd64); default: every platform")
	f.IntVar(&parallel, "parallel", 3, "how many images to copy at once")
	return cmd
}

// parsePlatform reads --platform: "" is every platform (nil).
func parsePlatform(s string) (*v1.Platform, error) {
	if s == "" {
		return nil, nil
	}
	p, err := v1.ParsePlatform(s)
	if err != nil || p.OS == "" || p.Architecture == "" || p.OSVersion != "" {
		return nil, usageErrorf("--platform %q: want os/arch[/variant], e.g. linux/amd64", s)
	}
	return p, nil
}

// imageDone prints one finished image.
func imageDone(w io.Writer, i, n int, r mirror.Result) {
	what := string(r.Status)
	switch r.Status {
	case mirror.Copied:
		what = fmt.Sprintf("copied, %s uploaded, from %s", size(r.Bytes), r.From)
	case mirror.Present:
		what = "present, " + shortDigest(r.Digest)
	case mirror.WouldCopy:
		what = "would copy from " + r.From
	case mirror.Skipped:
		what = "skipped: the manifest names this image, which the cluster pulls as written"
	case mirror.Failed:
		what = "failed (see below)"
	}
	fmt.Fprintf(w, "[%d/%d] %s -> %s: %s in %.1fs\n", i+1, n, r.Source, r.Destination, what, r.Seconds)
}

// summary prints the count of each status.
func summary(w io.Writer, registry string, rs []mirror.Result, took time.Duration) {
	count := map[mirror.Status]int{}
	var bytes int64
	for _, r := range rs {
		count[r.Status]++
		bytes += r.Bytes
	}
	fmt.Fprintf(w, "%s for %s in %.1fs:", plural.Count(len(rs), "image"), registry, took.Seconds())
	sep := " "
	for _, st := range []mirror.Status{mirror.Copied, mirror.Present, mirror.WouldCopy, mirror.Skipped, mirror.Failed} {
		if count[st] > 0 {
			fmt.Fprintf(w, "%s%d %s", sep, count[st], st)
			sep = ", "
		}
	}
	if bytes > 0 {
		fmt.Fprintf(w, " (%s uploaded)", size(bytes))
	}
	fmt.Fprintln(w)
}

// size is a byte count for people: KiB below a MiB.
func size(n int64) string {
	if n < 1<<20 {
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return mib(n)
}

// shortDigest is sha256: and the first 12 hex digits, as docker shows image IDs.
func shortDigest(d string) string {
	if len(d) > len("sha256:")+12 {
		return d[:len("sha256:")+12]
	}
	return d
}
