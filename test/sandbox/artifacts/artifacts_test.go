package artifacts

import (
	"archive/tar"
	"bytes"
	"io"
	"strings"
	"testing"
)

func TestMinorOf(t *testing.T) {
	for _, tt := range []struct {
		in, want string
		wantErr  bool
	}{
		{in: "v1.36.3", want: "v1.36"},
		{in: "v1.35.4", want: "v1.35"},
		{in: "1.36.3", wantErr: true},
		{in: "v1.36", wantErr: true},
		{in: "v1.36.3-rc.0", wantErr: true},
		{in: "v1.36.3; rm -rf /", wantErr: true},
	} {
		t.Run(tt.in, func(t *testing.T) {
			got, err := minorOf(tt.in)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("minorOf(%q) = %q, %v; want %q, error %v", tt.in, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestSplitRef(t *testing.T) {
	for _, tt := range []struct{ ref, name, tag string }{
		{"registry.k8s.io/kube-apiserver:v1.36.3", "kube-apiserver", "v1.36.3"},
		{"registry.k8s.io/coredns/coredns:v1.12.1", "coredns/coredns", "v1.12.1"},
		{"registry.k8s.io/etcd:3.6.4-0", "etcd", "3.6.4-0"},
	} {
		t.Run(tt.ref, func(t *testing.T) {
			if name, tag := splitRef(tt.ref); name != tt.name || tag != tt.tag {
				t.Errorf("splitRef = %q, %q; want %q, %q", name, tag, tt.name, tt.tag)
			}
		})
	}
}

func TestNewestCoreDNS(t *testing.T) {
	releases := []Release{
		{Images: []string{"registry.k8s.io/coredns/coredns:v1.12.0", "registry.k8s.io/pause:3.10"}},
		{Images: []string{"registry.k8s.io/coredns/coredns:v1.12.1"}},
		{Images: []string{"registry.k8s.io/coredns/coredns:v1.9.3"}},
	}
	if got := newestCoreDNS(releases); got != "v1.12.1" {
		t.Errorf("newestCoreDNS = %q, want v1.12.1 (numeric, not lexical, order)", got)
	}
}

func TestDebVersion(t *testing.T) {
	if got := debVersion("v1.36.3"); got != "1.36.3-1.1" {
		t.Errorf("debVersion = %q, want the pkgs.k8s.io form 1.36.3-1.1", got)
	}
}

// TestLayerTar checks that layers are reproducible (same input, same bytes, hence same digest)
// and that parent directories and modes come out as asked.
func TestLayerTar(t *testing.T) {
	files := []tarFile{
		{name: "usr/local/bin/tool", mode: 0o755, data: []byte("#!/bin/sh\n")},
		{name: "tmp/", mode: 0o1777},
	}
	a, err := layerTar(files)
	if err != nil {
		t.Fatal(err)
	}
	b, err := layerTar(files)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Fatal("two builds of the same layer differ")
	}
	var got []string
	tr := tar.NewReader(bytes.NewReader(a))
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, hdr.Name+" "+strings.TrimLeft(hdr.FileInfo().Mode().String(), "-"))
	}
	want := "usr/ drwxr-xr-x,usr/local/ drwxr-xr-x,usr/local/bin/ drwxr-xr-x,usr/local/bin/tool rwxr-xr-x,tmp/ dtrwxrwxrwx"
	if strings.Join(got, ",") != want {
		t.Errorf("layer entries:\n got %s\nwant %s", strings.Join(got, ","), want)
	}
}

func TestPackageControl(t *testing.T) {
	d := deb{name: "kubeadm", version: "1.34.1-1.1", depends: "cri-tools (>= 1.30.0)", description: "cluster bootstrapping tool"}
	got := d.control(2048)
	for _, line := range []string{"Package: kubeadm\n", "Version: 1.34.1-1.1\n", "Architecture: amd64\n", "Installed-Size: 2\n", "Depends: cri-tools (>= 1.30.0)\n"} {
		if !strings.Contains(got, line) {
			t.Errorf("control lacks %q:\n%s", line, got)
		}
	}
}
