package kubeversion

import (
	"strings"
	"testing"
)

func TestWindowText(t *testing.T) {
	if Minors != "1.35-1.37" || Text != "v1.35 to v1.37" || List() != "v1.35, v1.36 and v1.37" {
		t.Fatalf("window: %q, %q, %q", Minors, Text, List())
	}
	for minor, want := range map[uint64]bool{34: false, 35: true, 36: true, 37: true, 38: false} {
		if got := Supported(1, minor); got != want {
			t.Errorf("Supported(1, %d) = %v, want %v", minor, got, want)
		}
	}
	if Supported(2, 36) {
		t.Error("Supported(2, 36) = true")
	}
}

func TestContainerdFor(t *testing.T) {
	for _, tc := range []struct {
		minor   uint64
		minimum string
		wantErr string
	}{
		{minor: 35, minimum: "1.6.0"},
		{minor: 36, minimum: "2.0.0"},
		{minor: 37, minimum: "2.0.0"},
		{minor: 34, wantErr: "outside the supported Kubernetes versions v1.35 to v1.37"},
		{minor: 38, wantErr: "outside"},
	} {
		c, err := ContainerdFor(tc.minor)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ContainerdFor(%d) error = %v, want %q", tc.minor, err, tc.wantErr)
			}
			continue
		}
		if err != nil || c.Minimum != tc.minimum || !strings.HasPrefix(c.Version, "2.") {
			t.Errorf("ContainerdFor(%d) = %+v, %v", tc.minor, c, err)
		}
		// The version installed always satisfies the minimum it is installed for.
		v, _ := ParseContainerdVersion(c.Version)
		m, _ := ParseContainerdVersion(c.Minimum)
		if v.LessThan(m) {
			t.Errorf("v1.%d installs containerd %s below its minimum %s", tc.minor, c.Version, c.Minimum)
		}
	}
}

func TestParseContainerdVersion(t *testing.T) {
	for in, want := range map[string]string{
		"1.6.20~ds1-1+deb12u1": "1.6.20",
		"1.6.20~ds1":           "1.6.20",
		"1.7.24-0ubuntu1":      "1.7.24",
		"v2.2.9":               "2.2.9",
		"2.1":                  "2.1.0",
		"2.0.0-rc.1":           "2.0.0",
	} {
		v, err := ParseContainerdVersion(in)
		if err != nil || v.String() != want {
			t.Errorf("ParseContainerdVersion(%q) = %v, %v, want %s", in, v, err, want)
		}
	}
	for _, in := range []string{"", "containerd", "~ds1", "v"} {
		if _, err := ParseContainerdVersion(in); err == nil {
			t.Errorf("ParseContainerdVersion(%q) succeeded", in)
		}
	}
}

func TestContainerdReplaces(t *testing.T) {
	v136 := Containerd{Version: "2.2.9", Minimum: "2.0.0"}
	v135 := Containerd{Version: "2.2.9", Minimum: "1.6.0"}
	for _, tc := range []struct {
		policy Containerd
		have   string
		want   bool
	}{
		{v136, "", true},
		{v136, "1.6.20~ds1", true},
		{v136, "1.7.24-0ubuntu1", true},
		{v136, "garbage", true},
		{v136, "2.0.0", false},
		{v136, "v2.2.9", false},
		{v135, "1.6.20~ds1", false},
		{v135, "1.5.9", true},
	} {
		if got := tc.policy.Replaces(tc.have); got != tc.want {
			t.Errorf("%+v.Replaces(%q) = %t, want %t", tc.policy, tc.have, got, tc.want)
		}
	}
}
