package mirror

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/imagelist"
)

// copier copies one image at a time; Run shares one between its workers.
type copier struct {
	o          Options
	keychain   authn.Keychain
	transports transports
	// dst reaches the destination, and dstName parses its references.
	dst     *route
	dstName []name.Option
}

func newCopier(o Options, registry string) (*copier, error) {
	c := &copier{o: o, keychain: o.Keychain, dstName: []name.Option{name.StrictValidation}}
	if c.keychain == nil {
		c.keychain = authn.DefaultKeychain
	}
	host, _, _ := strings.Cut(registry, "/")
	// The destination is trusted as the manifest tells containerd to trust it, if it does.
	var tlsc v1beta1.RegistryTLSConfig
	if r, ok := o.Registries[host]; ok && r.TLSConfig != nil {
		tlsc = *r.TLSConfig
	}
	scheme := "https"
	if o.Insecure {
		tlsc.InsecureSkipVerify, scheme = true, ""
		c.dstName = append(c.dstName, name.Insecure)
	}
	base, err := c.transports.get(&tlsc)
	if err != nil {
		return nil, fmt.Errorf("registry %s: %w", host, err)
	}
	c.dst = &route{base: base, host: host, scheme: scheme}
	return c, nil
}

// reachable checks that the destination answers the registry API at all (a read), so that a
// registry that is down, or that TLS does not trust, is one error rather than one per image.
func (c *copier) reachable(ctx context.Context) error {
	reg, err := name.NewRegistry(c.dst.host, c.dstName...)
	if err != nil {
		return err
	}
	if _, err := transport.Ping(ctx, reg, c.dst); err != nil {
		return fmt.Errorf("registry %s: %w%s", c.dst.host, err, hint(err, c.dst.host))
	}
	return nil
}

// copy copies one image, or with DryRun finds out whether it would.
func (c *copier) copy(ctx context.Context, m imagelist.Move) (r Result) {
	start := time.Now()
	r = Result{Source: m.From, Destination: m.To, Components: m.Components}
	defer func() {
		r.Seconds = time.Since(start).Seconds()
		if r.err != nil {
			r.err = fmt.Errorf("%s -> %s: %w", m.From, m.To, r.err)
			r.Status, r.Error = Failed, r.err.Error()
		}
	}()
	if m.From == m.To {
		r.Status = Skipped
		return r
	}
	src, err := name.NewTag(m.From, name.StrictValidation)
	if err != nil {
		r.err = err
		return r
	}
	dst, err := name.NewTag(m.To, c.dstName...)
	if err != nil {
		r.err = err
		return r
	}
	img, digest, from, err := c.read(ctx, src)
	if err != nil {
		r.err = err
		return r
	}
	r.From, r.Digest = from.url, digest.String()
	var uploaded atomic.Int64
	opts := []remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(c.keychain),
		remote.WithTransport(counting{base: c.dst, n: &uploaded})}
	switch present, err := c.present(dst, digest, opts); {
	case err != nil:
		r.err = fmt.Errorf("reading the destination: %w%s", err, hint(err, dst.RegistryStr()))
	case present:
		r.Status = Present
	case c.o.DryRun:
		r.Status = WouldCopy
	default:
		err := remote.Push(dst, img, opts...)
		r.Bytes = uploaded.Load()
		if err != nil {
			r.err = fmt.Errorf("writing to %s: %w%s", dst.RegistryStr(), err, hint(err, dst.RegistryStr()))
			return r
		}
		r.Status = Copied
	}
	return r
}

// read finds ref where containerd would (see sources) and returns what to write: the image or
// index as the source has it, or with Platform that platform's image of an index.
func (c *copier) read(ctx context.Context, ref name.Tag) (remote.Taggable, v1.Hash, place, error) {
	places, err := c.sources(ref)
	if err != nil {
		return nil, v1.Hash{}, place{}, err
	}
	var tried []string
	for _, p := range places {
		opts := []remote.Option{remote.WithContext(ctx), remote.WithTransport(p.transport), p.auth}
		if c.o.Platform != nil {
			opts = append(opts, remote.WithPlatform(*c.o.Platform))
		}
		desc, err := remote.Get(p.at(ref), opts...)
		if ctx.Err() != nil {
			return nil, v1.Hash{}, place{}, ctx.Err()
		}
		if err != nil {
			what := "the registry"
			if p.mirror {
				what = "mirror"
			}
			tried = append(tried, fmt.Sprintf("%s (%s): %v", p.url, what, err))
			continue
		}
		if c.o.Platform == nil || !desc.MediaType.IsIndex() {
			return desc, desc.Digest, p, nil
		}
		img, err := desc.Image()
		if err != nil {
			return nil, v1.Hash{}, p, fmt.Errorf("%s at %s: %w", platformString(*c.o.Platform), p.url, err)
		}
		digest, err := img.Digest()
		return img, digest, p, err
	}
	return nil, v1.Hash{}, place{}, fmt.Errorf("found in no mirror nor the registry itself; tried %s", strings.Join(tried, "; "))
}

// present reports whether the destination has want under dst. A registry that will not say
// (404, or 401 and 403, which some answer for a missing manifest) has it not: the write that
// follows then says whether it may write.
func (c *copier) present(dst name.Tag, want v1.Hash, opts []remote.Option) (bool, error) {
	d, err := remote.Head(dst, opts...)
	if err == nil {
		return d.Digest == want, nil
	}
	var te *transport.Error
	if errors.As(err, &te) && (te.StatusCode == http.StatusNotFound || te.StatusCode == http.StatusUnauthorized || te.StatusCode == http.StatusForbidden) {
		return false, nil
	}
	return false, err
}

// hint says what to do about an error of the destination's that the user can act on.
func hint(err error, host string) string {
	var te *transport.Error
	var unknownCA x509.UnknownAuthorityError
	switch {
	case errors.As(err, &te) && (te.StatusCode == http.StatusUnauthorized || te.StatusCode == http.StatusForbidden):
		return fmt.Sprintf(" (slipway pushes with the credentials your Docker config holds for %s, as docker login %s saves them)", host, host)
	case strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		return " (the registry speaks plain http: --insecure allows it)"
	case errors.As(err, &unknownCA):
		return fmt.Sprintf(" (trust its CA with the tlsConfig.caFile of a containerRuntime.containerd.registries entry named %s, or skip verification with --insecure)", host)
	}
	return ""
}

func platformString(p v1.Platform) string {
	s := p.OS + "/" + p.Architecture
	if p.Variant != "" {
		s += "/" + p.Variant
	}
	return s
}
