package images

import (
	"bytes"
	"encoding/pem"
	"fmt"
	"os"
	"strconv"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"golang.org/x/crypto/x509roots/fallback/bundle"
)

// Options are what every image of one build shares.
type Options struct {
	// Created is the images' creation time and the time of every layer entry.
	Created time.Time
}

// CreatedFrom returns the time SOURCE_DATE_EPOCH (seconds since the epoch) names, or the epoch
// when it is empty, the reproducible-builds convention.
func CreatedFrom(sourceDateEpoch string) (time.Time, error) {
	if sourceDateEpoch == "" {
		return time.Unix(0, 0).UTC(), nil
	}
	s, err := strconv.ParseInt(sourceDateEpoch, 10, 64)
	if err != nil || s < 0 {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH=%q: want seconds since 1970", sourceDateEpoch)
	}
	return time.Unix(s, 0).UTC(), nil
}

// Built is an assembled image with the references it carries.
type Built struct {
	Refs  []string
	Image v1.Image
}

// Assemble builds the images of specs. They share one base layer (equal bytes, so a registry or
// containerd stores it once); each adds a layer holding its binary.
func Assemble(specs []Spec, o Options) ([]Built, error) {
	baseTar, err := layerTar(baseFiles(), o.Created)
	if err != nil {
		return nil, err
	}
	base, err := newLayer(baseTar)
	if err != nil {
		return nil, err
	}
	out := make([]Built, 0, len(specs))
	for _, s := range specs {
		img, err := assemble(s, base, o)
		if err != nil {
			return nil, fmt.Errorf("assembling %s: %w", s.Refs[0], err)
		}
		out = append(out, Built{Refs: s.Refs, Image: img})
	}
	return out, nil
}

func assemble(s Spec, base *gzLayer, o Options) (v1.Image, error) {
	bin, err := os.ReadFile(s.Binary)
	if err != nil {
		return nil, fmt.Errorf("reading the binary: %w", err)
	}
	files := []file{{name: s.Path, mode: 0o755, data: bin}}
	for _, f := range s.Files {
		files = append(files, file{name: f.Name, mode: f.Mode, data: f.Data, link: f.Link})
	}
	binTar, err := layerTar(files, o.Created)
	if err != nil {
		return nil, err
	}
	top, err := newLayer(binTar)
	if err != nil {
		return nil, err
	}
	user := s.User
	if user == "" {
		user = strconv.Itoa(NonRoot) + ":" + strconv.Itoa(NonRoot)
	}
	cfg := &v1.ConfigFile{
		Architecture: "amd64",
		OS:           "linux",
		Created:      v1.Time{Time: o.Created},
		Config: v1.Config{
			Entrypoint: s.Entrypoint,
			Cmd:        s.Cmd,
			Env:        []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "SSL_CERT_FILE=/" + caBundle},
			User:       user,
			WorkingDir: "/",
			Labels:     s.Labels,
		},
	}
	img, err := mutate.ConfigFile(empty.Image, cfg)
	if err != nil {
		return nil, err
	}
	img = mutate.MediaType(img, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	for _, l := range []*gzLayer{base, top} {
		img, err = mutate.Append(img, mutate.Addendum{Layer: l, History: v1.History{Created: v1.Time{Time: o.Created}, CreatedBy: "slipway pkg/images"}})
		if err != nil {
			return nil, err
		}
	}
	return img, nil
}

// caBundle is where the images keep their CA bundle, the path Go and most programs look at first.
const caBundle = "etc/ssl/certs/ca-certificates.crt"

// baseFiles are what a static Go program expects around it: users for runAsUser lookups and
// os/user, host resolution order, trusted roots and a writable /tmp.
func baseFiles() []file {
	n := strconv.Itoa(NonRoot)
	return []file{
		{name: "etc/passwd", mode: 0o644, data: []byte("root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:" + n + ":" + n + ":nonroot:/home/nonroot:/sbin/nologin\n")},
		{name: "etc/group", mode: 0o644, data: []byte("root:x:0:\nnobody:x:65534:\nnonroot:x:" + n + ":\n")},
		{name: "etc/nsswitch.conf", mode: 0o644, data: []byte("hosts: files dns\n")},
		{name: caBundle, mode: 0o644, data: caPEM()},
		{name: "home/nonroot/", mode: 0o700, uid: NonRoot},
		{name: "tmp/", mode: 0o1777},
	}
}

// caPEM is the NSS root store that golang.org/x/crypto/x509roots/fallback pins (the store
// Debian's ca-certificates is made from too), as PEM. Roots that NSS trusts only with a
// constraint a PEM file cannot carry (a distrust-after date) are left out rather than trusted
// without it. Being a module version in go.mod, it is the same on every machine, which a copy of
// this machine's /etc/ssl/certs would not be.
func caPEM() []byte {
	var b bytes.Buffer
	for r := range bundle.Roots() {
		if r.Constraint != nil {
			continue
		}
		_ = pem.Encode(&b, &pem.Block{Type: "CERTIFICATE", Bytes: r.Certificate})
	}
	return b.Bytes()
}
