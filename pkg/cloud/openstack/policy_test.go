package openstack_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/slipway-dev/slipway/pkg/cloud/openstack"
)

// TestSpecCheck is what admission refuses of a cloudProviderSpec, under each policy.
func TestSpecCheck(t *testing.T) {
	allow := openstack.Policy{AllowMachineCloud: true}
	for _, tc := range []struct {
		name   string
		policy openstack.Policy
		spec   string
		want   []string // field: reason fragments, in order; none means accepted
	}{
		{"what to create", openstack.Policy{}, `{"flavor":"m1.small","image":"i","tags":{"a":"b"},"configDrive":true}`, nil},
		{"the cloud and the identity", openstack.Policy{}, `{"identityEndpoint":"https://k/v3","tenantName":"t","region":"r","password":""}`,
			[]string{"spec.identityEndpoint: Forbidden", "spec.tenantName: Forbidden", "spec.region: Forbidden"}},
		{"allowed", allow, `{"identityEndpoint":"https://k/v3","username":"u","password":{"secretKeyRef":{"name":"c","key":"p"}}}`, nil},
		{"allowed, but not over http", allow, `{"identityEndpoint":"http://k/v3"}`, []string{"spec.identityEndpoint: Invalid value"}},
		{"http allowed too", openstack.Policy{AllowMachineCloud: true, AllowHTTP: true}, `{"identityEndpoint":"http://k/v3"}`, nil},
		{"references", allow, `{"password":{"secretKeyRef":{"namespace":"other","name":"c","key":"p"}},
			"securityGroups":["a",{"secretKeyRef":{"name":"c","key":"p"}}],"flavor":{"configMapKeyRef":{"namespace":"team","name":"c","key":"f"}}}`,
			[]string{"spec.password.secretKeyRef.namespace: Forbidden", "spec.securityGroups[1].secretKeyRef: Forbidden"}},
		{"not an object is the controller's to report", openstack.Policy{}, `[1]`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := tc.policy.SpecCheck()("team", []byte(tc.spec), field.NewPath("spec"))
			if len(errs) != len(tc.want) {
				t.Fatalf("got %v, want %v", errs, tc.want)
			}
			for i, e := range errs {
				if !strings.Contains(e.Error(), tc.want[i]) {
					t.Errorf("error %d is %q, want %q", i, e.Error(), tc.want[i])
				}
			}
		})
	}
}
