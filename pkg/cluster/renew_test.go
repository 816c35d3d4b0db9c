package cluster

import (
	"strings"
	"testing"
	"time"
)

func TestCompareRenewed(t *testing.T) {
	day := func(d int) time.Time { return time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, d) }
	before := []Certificate{
		{File: "/etc/kubernetes/pki/ca.crt", NotAfter: day(3000), CA: true},
		{File: "/etc/kubernetes/pki/apiserver.crt", NotAfter: day(10)},
		{File: "/etc/kubernetes/admin.conf", NotAfter: day(12)},
	}
	for _, tc := range []struct {
		name  string
		after []Certificate
		want  string // the error's telling part; "" for success
	}{
		{"all renewed", []Certificate{
			{File: "/etc/kubernetes/pki/ca.crt", NotAfter: day(3000), CA: true},
			{File: "/etc/kubernetes/pki/apiserver.crt", NotAfter: day(375)},
			{File: "/etc/kubernetes/admin.conf", NotAfter: day(374)},
		}, ""},
		{"one left", []Certificate{
			{File: "/etc/kubernetes/pki/ca.crt", NotAfter: day(3000), CA: true},
			{File: "/etc/kubernetes/pki/apiserver.crt", NotAfter: day(375)},
			{File: "/etc/kubernetes/admin.conf", NotAfter: day(12)},
		}, "/etc/kubernetes/admin.conf still expires on 2027-01-13"},
		{"one gone", []Certificate{
			{File: "/etc/kubernetes/pki/ca.crt", NotAfter: day(3000), CA: true},
			{File: "/etc/kubernetes/pki/apiserver.crt", NotAfter: day(375)},
		}, "/etc/kubernetes/admin.conf is gone"},
		{"a CA changed", []Certificate{
			{File: "/etc/kubernetes/pki/ca.crt", NotAfter: day(3650), CA: true},
			{File: "/etc/kubernetes/pki/apiserver.crt", NotAfter: day(375)},
			{File: "/etc/kubernetes/admin.conf", NotAfter: day(374)},
		}, "the CA /etc/kubernetes/pki/ca.crt changed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := compareRenewed(before, tc.after)
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("error %v; want it to say %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.Renewed != 2 || !r.Before.Equal(day(10)) || !r.After.Equal(day(374)) {
				t.Errorf("%+v; want 2 renewed, earliest expiry %s before and %s after", r, day(10), day(374))
			}
		})
	}
}
