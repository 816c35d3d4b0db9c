package openstack_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/slipway-dev/slipway/pkg/cloud/openstack"
)

// kubermaticSpec is a cloudProviderSpec as Kubermatic's machine-controller stores it after its
// admission webhook defaulted it (written from its types, not copied from a cluster).
const kubermaticSpec = `{"identityEndpoint":"","username":"","password":"","domainName":"","tenantName":"","tenantID":"","projectName":"","projectID":"",
			"tokenId":"","region":"RegionOne","instanceReadyCheckPeriod":"","instanceReadyCheckTimeout":"","computeAPIVersion":"","image":"i","flavor":"f",
			"securityGroups":["sg"],"network":"n","subnet":"s","floatingIpPool":"","availabilityZone":"nova","trustDevicePath":false,
			"rootDiskSizeGB":null,"rootDiskVolumeType":"","nodeVolumeAttachLimit":null,"serverGroupID":"","tags":{"team":"a"}}`

// specCase is a cloudProviderSpec checked under a policy, and the errors it must give.
type specCase struct {
	name   string
	policy openstack.Policy
	spec   string
	want   []string // field: reason fragments, in order; none means accepted
}

// TestSpecCheck is what admission refuses of a cloudProviderSpec, under each policy.
func TestSpecCheck(t *testing.T) {
	allow := openstack.Policy{AllowMachineCloud: true}
	own := openstack.Policy{AuthURL: "https://keystone.example:5000/v3"}
	for _, tc := range []specCase{
		{"what to create", openstack.Policy{}, `{"flavor":"m1.small","image":"i","tags":{"a":"b"},"configDrive":true}`, nil},
		{"where in the cloud: region and availability zone", own, `{"flavor":"f","image":"i","region":"RegionTwo","availabilityZone":"az-2"}`, nil},
		{"the cloud and the identity", own, `{"identityEndpoint":"https://k/v3","tenantName":"t","region":"r","password":""}`,
			[]string{"spec.identityEndpoint: Forbidden: is not the machine-controller's own Keystone (https://keystone.example:5000/v3)",
				"spec.tenantName: Forbidden: chooses the cloud or the identity"}},
		{"every credential field, set", own, `{"username":"u","password":{"secretKeyRef":{"name":"c","key":"p"}},"domainName":"d",
			"projectName":"p","projectID":"pid","tokenId":"t","applicationCredentialID":"a","applicationCredentialSecret":"s"}`,
			[]string{"spec.username: Forbidden", "spec.password: Forbidden", "spec.domainName: Forbidden", "spec.projectName: Forbidden",
				"spec.projectID: Forbidden", "spec.tokenId: Forbidden", "spec.applicationCredentialID: Forbidden",
				"spec.applicationCredentialSecret: Forbidden"}},
		{"every credential field, empty", own, `{"flavor":"f","image":"i","username":"","password":"","domainName":"","tenantName":"",
			"tenantID":null,"projectName":"","projectID":"","tokenId":"","applicationCredentialID":"","applicationCredentialSecret":""}`, nil},
		{"the controller's own identity endpoint", own, `{"flavor":"f","image":"i","identityEndpoint":"https://keystone.example:5000/v3"}`, nil},
		{"the controller's own identity endpoint, written differently", own,
			`{"flavor":"f","image":"i","identityEndpoint":"HTTPS://Keystone.Example:5000/"}`, nil},
		{"another port of the controller's host", own, `{"identityEndpoint":"https://keystone.example:35357/v3"}`,
			[]string{"spec.identityEndpoint: Forbidden: is not the machine-controller's own Keystone"}},
		{"the controller's host over http", own, `{"identityEndpoint":"http://keystone.example:5000/v3"}`,
			[]string{"spec.identityEndpoint: Forbidden"}},
		{"no identity endpoint configured", openstack.Policy{}, `{"identityEndpoint":"https://keystone.example:5000/v3"}`,
			[]string{"spec.identityEndpoint: Forbidden: is not the machine-controller's own Keystone (none configured)"}},
		{"allowed", allow, `{"identityEndpoint":"https://k/v3","username":"u","password":{"secretKeyRef":{"name":"c","key":"p"}}}`, nil},
		{"allowed, but not over http", allow, `{"identityEndpoint":"http://k/v3"}`, []string{"spec.identityEndpoint: Invalid value"}},
		{"http allowed too", openstack.Policy{AllowMachineCloud: true, AllowHTTP: true}, `{"identityEndpoint":"http://k/v3"}`, nil},
		{"references", allow, `{"password":{"secretKeyRef":{"namespace":"other","name":"c","key":"p"}},
			"securityGroups":["a",{"secretKeyRef":{"name":"c","key":"p"}}],"flavor":{"configMapKeyRef":{"namespace":"team","name":"c","key":"f"}}}`,
			[]string{"spec.password.secretKeyRef.namespace: Forbidden", "spec.securityGroups[1].secretKeyRef: Forbidden"}},
		{"not an object is the controller's to report", openstack.Policy{}, `[1]`, nil},
		// Kubermatic's machine-controller writes every field of the specs it defaults, unset
		// ones empty, and the region it defaulted.
		{"Kubermatic's layout", openstack.Policy{}, kubermaticSpec, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantErrors(t, tc.policy.SpecCheck()("team", []byte(tc.spec), field.NewPath("spec")), tc.want)
		})
	}
}

// TestControllerCheck is what the controller refuses of a cloudProviderSpec before it calls
// the cloud, under each policy: admission's check, strict decoding and the spec's own rules.
// slipway runs it on the pools it renders, so each case here is one a pool fails before apply.
func TestControllerCheck(t *testing.T) {
	allow := openstack.Policy{AllowMachineCloud: true}
	for _, tc := range []specCase{
		{"what to create", openstack.Policy{}, `{"flavor":"m1.small","image":"i","tags":{"team":"a"},"network":"n","securityGroups":["sg"]}`, nil},
		{"the controller's own tags", openstack.Policy{}, `{"flavor":"f","image":"i","tags":{"slipway-cluster":"demo"}}`,
			[]string{"spec.tags[slipway-cluster]: Forbidden: slipway-cluster is set by the machine-controller"}},
		{"the cluster UID and the Machine's UID", openstack.Policy{}, `{"flavor":"f","image":"i","tags":{"slipway-cluster-uid":"u"}}`,
			[]string{"spec.tags[slipway-cluster-uid]: Forbidden"}},
		{"region, by default", openstack.Policy{}, `{"flavor":"f","image":"i","region":"RegionTwo"}`, nil},
		{"region, allowed", allow, `{"flavor":"f","image":"i","region":"RegionOne"}`, nil},
		{"Kubermatic's layout", openstack.Policy{}, kubermaticSpec, nil},
		{"an empty alias next to its field", openstack.Policy{}, `{"flavor":"f","image":"i","tenantName":"","projectName":null,"serverGroup":"","serverGroupID":"g"}`, nil},
		{"an alias next to its field", allow, `{"flavor":"f","image":"i","tenantName":"a","projectName":"b"}`,
			[]string{"spec.tenantName: Duplicate value"}},
		{"no image or flavor", openstack.Policy{}, `{"network":"n"}`,
			[]string{"spec.image: Required value", "spec.flavor: Required value"}},
		{"unknown field", openstack.Policy{}, `{"flavor":"f","image":"i","flavour":"g"}`, []string{"spec.flavour: Forbidden: unknown field"}},
		{"a reference cannot be read here", openstack.Policy{}, `{"flavor":{"configMapKeyRef":{"name":"c","key":"f"}},"image":"i"}`,
			[]string{"spec.flavor.configMapKeyRef: Invalid value: \"c\": references cannot be resolved here"}},
		{"not an object", openstack.Policy{}, `[1]`, []string{"spec: Invalid value"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantErrors(t, tc.policy.ControllerCheck()("kube-system", []byte(tc.spec), field.NewPath("spec")), tc.want)
		})
	}
}

// wantErrors fails unless errs are one error per entry of want, each containing it.
func wantErrors(t *testing.T, errs field.ErrorList, want []string) {
	t.Helper()
	if len(errs) != len(want) {
		t.Fatalf("got %v, want %v", errs, want)
	}
	for i, e := range errs {
		if !strings.Contains(e.Error(), want[i]) {
			t.Errorf("error %d is %q, want %q", i, e.Error(), want[i])
		}
	}
}
