package openstack_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
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
		secrets:    map[string]string{"kube-system/cloud/password": "s3cret"},
		configMaps: map[string]string{"kube-system/cloud/flavor": "m1.large", "kube-system/cloud/configDrive": "true"},
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
			"flavor":{"configMapKeyRef":{"name":"cloud","key":"flavor"}},
			"securityGroups":["x",{"configMapKeyRef":{"namespace":"kube-system","name":"cloud","key":"flavor"}}],
			"configDrive":{"configMapKeyRef":{"name":"cloud","key":"configDrive"}}}`,
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
		{name: "ref without key", json: `{"password":{"secretKeyRef":{"name":"cloud"}}}`,
			wantErr: "cloudProviderSpec.password.secretKeyRef: Required value"},
		{name: "ref into another namespace", json: `{"password":{"secretKeyRef":{"namespace":"default","name":"cloud","key":"password"}}}`,
			wantErr: `cloudProviderSpec.password.secretKeyRef.namespace: Forbidden: references resolve only in the Machine's own namespace "kube-system"`},
		{name: "secret for a field that is no credential", json: `{"flavor":{"secretKeyRef":{"name":"cloud","key":"password"}}}`,
			wantErr: "cloudProviderSpec.flavor.secretKeyRef: Forbidden: only credential fields"},
		{name: "secret for a boolean", json: `{"configDrive":{"secretKeyRef":{"name":"cloud","key":"password"}}}`,
			wantErr: "cloudProviderSpec.configDrive.secretKeyRef: Forbidden"},
		{name: "ref with unknown key", json: `{"password":{"secretRef":{"name":"cloud"}}}`, wantErr: "must be a string or"},
		{name: "both refs", json: `{"password":{"secretKeyRef":{"namespace":"a","name":"b","key":"c"},"configMapKeyRef":{"namespace":"a","name":"b","key":"c"}}}`,
			wantErr: "not both"},
		{name: "missing secret", json: `{"password":{"secretKeyRef":{"namespace":"kube-system","name":"other","key":"password"}}}`,
			wantErr: "reading secretKeyRef kube-system/other key password for cloudProviderSpec.password: not found"},
		{name: "not an object", json: `[1]`, wantErr: "must be a JSON object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := openstack.DecodeSpec(context.Background(), []byte(tc.json), "kube-system", resolver, path)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("want error containing %q, got %v", tc.wantErr, err)
				}
				if strings.Contains(err.Error(), "s3cret") {
					t.Fatalf("the error shows a Secret's value: %v", err)
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

// TestCredentialPolicy: the cloud and the identity are the controller's configuration. A spec
// may name them only when the operator allowed it, and then a spec that names its own endpoint
// gets nothing from the controller's environment. The controller's own endpoint, however
// written, names nothing; the region is the spec's to choose among the catalog's.
func TestCredentialPolicy(t *testing.T) {
	sim := newSim(t, openstacktest.Options{})
	other := newSim(t, openstacktest.Options{})
	plain := openstacktest.New(openstacktest.Options{})
	t.Cleanup(plain.Close)
	ctx := context.Background()
	env := simEnv(sim)
	with := func(kv ...string) map[string]string {
		out := maps.Clone(env)
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == "" {
				delete(out, kv[i])
			} else {
				out[kv[i]] = kv[i+1]
			}
		}
		return out
	}
	own := map[string]any{"identityEndpoint": sim.AuthURL(), "username": openstacktest.Username, "password": openstacktest.Password,
		"domainName": openstacktest.DomainName, "projectName": openstacktest.ProjectName}
	allow := openstack.Policy{AllowMachineCloud: true}
	for _, tc := range []struct {
		name    string
		env     map[string]string
		policy  openstack.Policy
		spec    map[string]any
		wantErr string
	}{
		{name: "the controller's cloud", env: env, spec: map[string]any{}},
		{name: "user domain and tenant fallbacks", env: with("OS_USER_DOMAIN_NAME", "", "OS_DOMAIN_NAME", "Default",
			"OS_PROJECT_NAME", "", "OS_TENANT_NAME", "demo"), spec: map[string]any{}},
		{name: "a spec naming another endpoint is refused", env: env, spec: map[string]any{"identityEndpoint": other.AuthURL()},
			wantErr: "cloudProviderSpec.identityEndpoint: Forbidden: is not the machine-controller's own Keystone (" + sim.AuthURL() + ")"},
		{name: "a spec naming the controller's own endpoint uses the controller's identity", env: env,
			spec: map[string]any{"identityEndpoint": strings.TrimSuffix(sim.AuthURL(), "/v3") + "/"}},
		{name: "a spec naming a region of the catalog", env: with("OS_REGION_NAME", ""), spec: map[string]any{"region": sim.Region()}},
		{name: "a spec naming a region the catalog lacks", env: env, spec: map[string]any{"region": "RegionTwo"},
			wantErr: `InvalidConfiguration: region "RegionTwo" is not in the service catalog of ` + sim.AuthURL() + `, which has regions "` + sim.Region() + `"`},
		{name: "a spec naming a password is refused", env: env, spec: map[string]any{"password": "x"},
			wantErr: "cloudProviderSpec.password: Forbidden"},
		{name: "a spec naming a project by alias is refused", env: env, spec: map[string]any{"tenantName": "x"},
			wantErr: "cloudProviderSpec.tenantName: Forbidden"},
		{name: "allowed: a spec with its whole identity", env: env, policy: allow, spec: own},
		{name: "allowed: a spec endpoint gets no credentials from the environment", env: env, policy: allow,
			spec:    map[string]any{"identityEndpoint": other.AuthURL()},
			wantErr: "cloudProviderSpec.username: Required value"},
		{name: "allowed: a spec password at the controller's endpoint", env: with("OS_PASSWORD", "wrong"), policy: allow,
			spec: map[string]any{"password": openstacktest.Password}},
		{name: "allowed: a spec endpoint over http is still refused", env: env, policy: allow,
			spec:    map[string]any{"identityEndpoint": plain.AuthURL(), "username": "u", "password": "p", "domainName": "d", "projectName": "p"},
			wantErr: "cloudProviderSpec.identityEndpoint: Invalid value"},
		{name: "environment mixes kinds", env: with("OS_APPLICATION_CREDENTIAL_ID", "x"), spec: map[string]any{},
			wantErr: "set only one kind"},
		{name: "http Keystone refused", env: with("OS_AUTH_URL", plain.AuthURL(), "OS_CACERT", ""), spec: map[string]any{},
			wantErr: "OS_AUTH_URL: Invalid value: \"" + plain.AuthURL() + "\": must be https://"},
		{name: "http Keystone accepted when allowed", env: with("OS_AUTH_URL", plain.AuthURL(), "OS_CACERT", ""),
			policy: openstack.Policy{AllowHTTP: true}, spec: map[string]any{}},
		{name: "https Keystone without its CA", env: with("OS_CACERT", ""), spec: map[string]any{},
			wantErr: "certificate signed by unknown authority"},
		{name: "nothing", env: map[string]string{}, spec: map[string]any{}, wantErr: "username: Required value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newProvider(t, sim, openstack.Options{LookupEnv: lookupIn(tc.env), Policy: tc.policy})
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
