package cluster

import (
	"bytes"
	"strings"
	"testing"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/scripts"
)

func TestCheckCgroups(t *testing.T) {
	facts := map[string]scripts.Facts{"cp-2": {CgroupVersion: 1}, "cp-1": {CgroupVersion: 2}, "w-1": {CgroupVersion: 1}}
	c := &v1beta1.Cluster{Versions: v1beta1.Versions{Kubernetes: "v1.36.3"}}

	var log bytes.Buffer
	err := checkCgroups(c, facts, &log)
	if err == nil {
		t.Fatal("cgroup v1 hosts without kubelet.allowCgroupV1 were accepted")
	}
	for _, want := range []string{"cp-2, w-1 run cgroup v1", "kubelet.allowCgroupV1: true", "nothing was changed"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "cp-1") || log.Len() != 0 {
		t.Errorf("error %q names a cgroup v2 host, or something was logged: %q", err, log.String())
	}

	c.Kubelet.AllowCgroupV1 = true
	if err := checkCgroups(c, facts, &log); err != nil {
		t.Fatalf("with the opt-in: %v", err)
	}
	if !strings.HasPrefix(log.String(), "WARNING: cp-2, w-1 run cgroup v1") {
		t.Errorf("warning = %q", log.String())
	}

	log.Reset()
	c.Kubelet.AllowCgroupV1 = false
	if err := checkCgroups(c, map[string]scripts.Facts{"cp-1": {CgroupVersion: 2}}, &log); err != nil || log.Len() != 0 {
		t.Errorf("cgroup v2 only: err %v, log %q", err, log.String())
	}
}
