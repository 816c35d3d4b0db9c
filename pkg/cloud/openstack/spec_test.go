package openstack_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/slipway-dev/slipway/pkg/cloud/openstack"
	"github.com/slipway-dev/slipway/pkg/cloud/openstack/openstacktest"
)

// mapResolver serves references from maps keyed "namespace/name/key".
type mapResolver struct{ secrets, configMaps map[string]string }

func (r mapResolver) SecretKey(_ context.Context, ns, name, key string) (string, error) {
	return lookupRef(r.secrets, ns, name, key)
}

func (r mapResolver) ConfigMapKey(_ context.Context, ns, name, key string) (string, error) {
	return lookupRef(r.configMaps, ns, name, key)
}

var errNoRef = errors.New("not found")

func lookupRef(m map[string]string, ns, name, key string) (string, error) {
	v, ok := m[ns+"/"+name+"/"+key]
	if !ok {
		return "", errNoRef
	}
	return v, nil
}

func TestDecodeSpec(t *testing.T) {
	resolver := mapResolver{
		secrets:    map[string]string{"kube-system/cloud/password": "s3cret", "kube-system/cloud/configDrive": "true"},
		configMaps: map[string]string{"kube-system/cloud/flavor": "m1.large"},
	}
	path := field.NewPath("cloudProviderSpec")
	for _, tc := range []struct {
		name    string
		json    string
		wantErr string
		check   func(t *testing.T, s *openstack.Spec)
	}{
		{name: "every field", json: `{"identityEndpoint":"https://k:5000/v3","username":"u","password":"p","domainName":"d",
			"projectName":"pn","projectID":"pid","tokenId":"","region":"r","applicationCredentialID":"","applicationCredentialSecret":"",
			"image":"i","flavor":"f","securityGroups":["a","b"],"network":"n","subnet":"s","floatingIpPool":"ext",
			"availabilityZone":"z","serverGroupID":"g","tags":{"k":"v"},"rootDiskSizeGB":20,"rootDiskVolumeType":"ssd",
			"configDrive":true,"trustDevicePath":true,"nodeVolumeAttachLimit":25,"instanceReadyCheckPeriod":"5s",
			"instanceReadyCheckTimeout":"2m","computeAPIVersion":"2.60"}`,
			check: func(t *testing.T, s *openstack.Spec) {
				got := fmt.Sprintf("%s %s %v %s %d %v %d %s %s %s", s.ProjectName, s.ServerGroupID, s.SecurityGroups, s.FloatingIPPool,
					*s.RootDiskSizeGB, s.ConfigDrive, *s.NodeVolumeAttachLimit, s.InstanceReadyCheckPeriod, s.InstanceReadyCheckTimeout, s.ComputeAPIVersion)
				if want := "pn g [a b] ext 20 true 25 5s 2m0s 2.60"; got != want {
					t.Errorf("got %q, want %q", got, want)
				}
			}},
		{name: "aliases", json: `{"tenantName":"t","tenantID":"tid","serverGroup":"g"}`, check: func(t *testing.T, s *openstack.Spec) {
			if s.ProjectName != "t" || s.ProjectID != "tid" || s.ServerGroupID != "g" {
				t.Errorf("%+v", s)
			}
		}},
		{name: "references", json: `{"password":{"secretKeyRef":{"namespace":"kube-system","name":"cloud","key":"password"}},
			"flavor":{"configMapKeyRef":{"namespace":"kube-system","name":"cloud","key":"flavor"}},
			"securityGroups":["x",{"configMapKeyRef":{"namespace":"kube-system","name":"cloud","key":"flavor"}}],
			"configDrive":{"secretKeyRef":{"namespace":"kube-system","name":"cloud","key":"configDrive"}}}`,
			check: func(t *testing.T, s *openstack.Spec) {
				if s.Password != "s3cret" || s.Flavor != "m1.large" || s.SecurityGroups[1] != "m1.large" || !s.ConfigDrive {
					t.Errorf("%+v", s)
				}
			}},
		{name: "empty", json: ``, check: func(t *testing.T, s *openstack.Spec) {}},
		{name: "unknown field", json: `{"flavour":"x"}`, wantErr: "cloudProviderSpec.flavour: Forbidden: unknown field"},
		{name: "alias twice", json: `{"projectName":"a","tenantName":"b"}`, wantErr: "cloudProviderSpec.tenantName: Duplicate value"},
		{name: "wrong type", json: `{"rootDiskSizeGB":"20"}`, wantErr: "cloudProviderSpec.rootDiskSizeGB: Invalid value"},
		{name: "bad duration", json: `{"instanceReadyCheckPeriod":"soon"}`, wantErr: "non-negative duration"},
		{name: "ref without namespace", json: `{"password":{"secretKeyRef":{"name":"cloud","key":"password"}}}`,
			wantErr: "cloudProviderSpec.password.secretKeyRef: Required value"},
		{name: "ref with unknown key", json: `{"password":{"secretRef":{"name":"cloud"}}}`, wantErr: "must be a string or"},
		{name: "both refs", json: `{"password":{"secretKeyRef":{"namespace":"a","name":"b","key":"c"},"configMapKeyRef":{"namespace":"a","name":"b","key":"c"}}}`,
			wantErr: "not both"},
		{name: "missing secret", json: `{"password":{"secretKeyRef":{"namespace":"kube-system","name":"other","key":"password"}}}`,
			wantErr: "reading secretKeyRef kube-system/other key password for cloudProviderSpec.password: not found"},
		{name: "not an object", json: `[1]`, wantErr: "must be a JSON object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := openstack.DecodeSpec(context.Background(), []byte(tc.json), resolver, path)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("want error containing %q, got %v", tc.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, s)
		})
	}
}

func TestEnvironmentFallbacks(t *testing.T) {
	sim := newSim(t, openstacktest.Options{})
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		env     map[string]string
		spec    map[string]any
		wantErr string
	}{
		{name: "password from env", env: map[string]string{"OS_AUTH_URL": sim.AuthURL(), "OS_USERNAME": "slipway",
			"OS_PASSWORD": "secret", "OS_DOMAIN_NAME": "Default", "OS_PROJECT_NAME": "demo"}, spec: map[string]any{}},
		{name: "spec wins over env", env: map[string]string{"OS_AUTH_URL": sim.AuthURL(), "OS_USERNAME": "slipway",
			"OS_PASSWORD": "wrong", "OS_DOMAIN_NAME": "Default", "OS_PROJECT_NAME": "demo"}, spec: map[string]any{"password": "secret"}},
		{name: "user domain fallback", env: map[string]string{"OS_AUTH_URL": sim.AuthURL(), "OS_USERNAME": "slipway",
			"OS_PASSWORD": "secret", "OS_USER_DOMAIN_NAME": "Default", "OS_TENANT_NAME": "demo"}, spec: map[string]any{}},
		{name: "env mixes kinds", env: map[string]string{"OS_AUTH_URL": sim.AuthURL(), "OS_USERNAME": "u",
			"OS_APPLICATION_CREDENTIAL_ID": "x"}, spec: map[string]any{}, wantErr: "set only one kind"},
		{name: "spec password, env app credential", env: map[string]string{"OS_AUTH_URL": sim.AuthURL(),
			"OS_APPLICATION_CREDENTIAL_ID": "x", "OS_APPLICATION_CREDENTIAL_SECRET": "y"},
			spec: map[string]any{"username": "slipway", "password": "secret", "domainName": "Default", "projectName": "demo"}},
		{name: "nothing", env: map[string]string{}, spec: map[string]any{}, wantErr: "username: Required value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newProvider(t, openstack.Options{LookupEnv: func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok }})
			cps := map[string]any{"image": "cirros", "flavor": "m1.tiny", "network": "private"}
			for k, v := range tc.spec {
				cps[k] = v
			}
			err := p.Validate(ctx, newMachine(t, cps))
			if tc.wantErr == "" && err != nil {
				t.Fatalf("validate: %v", err)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("want %q, got %v", tc.wantErr, err)
			}
		})
	}
}
