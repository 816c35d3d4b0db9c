package v1beta1

import (
	"reflect"
	"strings"
	"testing"
)

// walkFields calls fn for every JSON field reachable from t.
func walkFields(t reflect.Type, fn func(owner reflect.Type, f reflect.StructField, name string), seen map[reflect.Type]bool) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || seen[t] || isScalarType(t) || t.PkgPath() != reflect.TypeFor[Cluster]().PkgPath() {
		return
	}
	seen[t] = true
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		fn(t, f, name)
		walkFields(f.Type, fn, seen)
	}
}

// TestEveryFieldIsDocumented: config print --full and the docs come from these comments, so a
// field without one would be shown to users without explanation.
func TestEveryFieldIsDocumented(t *testing.T) {
	n := 0
	walkFields(reflect.TypeFor[Cluster](), func(owner reflect.Type, f reflect.StructField, name string) {
		n++
		if FieldDoc(owner.Name(), name) == "" {
			t.Errorf("%s.%s (json %q) has no doc comment", owner.Name(), f.Name, name)
		}
	}, map[reflect.Type]bool{})
	if n < 100 {
		t.Errorf("walked only %d fields; the walk is broken", n)
	}
}

// TestReferenceShowsEveryField checks that every field appears in the reference, with its doc.
func TestReferenceShowsEveryField(t *testing.T) {
	ref := Reference()
	walkFields(reflect.TypeFor[Cluster](), func(owner reflect.Type, f reflect.StructField, name string) {
		if !strings.Contains(ref, name+":") {
			t.Errorf("reference does not show %s.%s (%s:)", owner.Name(), f.Name, name)
		}
		first := strings.SplitN(FieldDoc(owner.Name(), name), "\n", 2)[0]
		if !strings.Contains(ref, "# "+first) {
			t.Errorf("reference does not show the doc of %s.%s: %q", owner.Name(), f.Name, first)
		}
	}, map[reflect.Type]bool{})
}

func TestParseKubernetesVersion(t *testing.T) {
	tests := []struct {
		in      string
		wantErr string
	}{
		{"v1.35.0", ""},
		{"1.36.3", ""},
		{"v1.37.2", ""},
		{"v1.34.9", "unsupported version: slipway supports Kubernetes v1.35 to v1.37"},
		{"v1.38.0", "unsupported version"},
		{"v2.34.0", "unsupported version"},
		{"v1.34", "must be a version like v1.36.3"},
		{"v1.36.3-rc.0", "released version"},
		{"", "must be a version"},
		{"v1.36.3; reboot", "must be a version"},
	}
	for _, tt := range tests {
		_, err := ParseKubernetesVersion(tt.in)
		if tt.wantErr == "" && err != nil {
			t.Errorf("%q: %v", tt.in, err)
		}
		if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("%q: got %v, want %q", tt.in, err, tt.wantErr)
		}
	}
}

func TestDefaultsAreIdempotent(t *testing.T) {
	c := referenceCluster()
	c.ControlPlane.Hosts[0].IsLeader = false
	SetDefaults(&c, "v1")
	once := c
	SetDefaults(&c, "v1")
	if !reflect.DeepEqual(once, c) {
		t.Error("SetDefaults changed an already defaulted cluster")
	}
	if !c.ControlPlane.Hosts[0].IsLeader {
		t.Error("the first control-plane host must become the leader")
	}
}

func TestReferenceIsValid(t *testing.T) {
	c := referenceCluster()
	SetDefaults(&c, "v1")
	errs, warnings := Validate(&c)
	if len(errs) > 0 || len(warnings) > 0 {
		t.Fatalf("the reference cluster is not valid: %v %v", errs.ToAggregate(), warnings)
	}
}
