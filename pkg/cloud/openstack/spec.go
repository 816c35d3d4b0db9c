package openstack

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Spec is a decoded cloudProviderSpec. Field names (and the aliases tenantName, tenantID and
// serverGroup) are those that existing machine-controller manifests use, so they apply unchanged.
// Every string field, and the booleans, may instead be given as a reference to a ConfigMap key,
// and the credential fields to a Secret key: {"secretKeyRef": {"name": "cloud", "key":
// "password"}}. References resolve in the Machine's own namespace only, to objects labelled
// cloud.ReferenceLabel=true.
//
// The fields that choose the cloud and the identity (the Keystone fields below) are refused
// when set, unless the operator allowed them (Options.AllowMachineCloud): by default the cloud
// and its credentials are the controller's own, and a spec only says what to create there, and
// in which region and availability zone of that cloud.
type Spec struct {
	// Keystone: the auth URL, and either username/password/domainName or an application
	// credential, scoped by projectName or projectID. Only with Options.AllowMachineCloud
	// (empty ones, and the controller's own auth URL, are accepted without); see credentialsOf
	// for how they combine with the controller's OS_* variables.
	IdentityEndpoint            string
	Username                    string
	Password                    string
	DomainName                  string
	ProjectName                 string
	ProjectID                   string
	TokenID                     string
	ApplicationCredentialID     string
	ApplicationCredentialSecret string
	// Region picks the endpoints of the controller's Keystone catalog; default OS_REGION_NAME.
	// A region the catalog does not have fails the Machine with a message naming those it has.
	Region string

	// Image and Flavor are names or IDs.
	Image  string
	Flavor string
	// SecurityGroups are names or IDs; none means the project's default group.
	SecurityGroups []string
	// Network and Subnet are names or IDs. With a subnet (or a floating IP pool) the provider
	// makes the server's port itself, with a fixed IP on that subnet.
	Network string
	Subnet  string
	// FloatingIPPool is the name or ID of the external network to allocate a floating IP from.
	FloatingIPPool   string
	AvailabilityZone string
	// ServerGroupID is a server group's ID or name, passed as the scheduler hint "group".
	ServerGroupID string
	// Tags become server metadata.
	Tags map[string]string
	// RootDiskSizeGB, when set, boots from a Cinder volume of that size (deleted with the server).
	RootDiskSizeGB     *int
	RootDiskVolumeType string
	ConfigDrive        bool
	// TrustDevicePath and NodeVolumeAttachLimit configure the in-tree/external cloud provider on
	// the node; the machine-controller only carries them.
	TrustDevicePath       bool
	NodeVolumeAttachLimit *uint
	// InstanceReadyCheckPeriod and InstanceReadyCheckTimeout bound how the server's readiness is
	// polled; zero means the controller's defaults.
	InstanceReadyCheckPeriod  time.Duration
	InstanceReadyCheckTimeout time.Duration
	// ComputeAPIVersion is the Nova microversion to request; default DefaultComputeAPIVersion.
	ComputeAPIVersion string
}

// DefaultComputeAPIVersion is the Nova microversion used unless the spec names one: the first
// that accepts server tags at creation (2.52) is new enough for everything the provider does.
const DefaultComputeAPIVersion = "2.52"

type fieldKind int

const (
	kindString fieldKind = iota
	kindStrings
	kindBool
	kindInt
	kindUint
	kindDuration
	kindMap
)

// specField describes one cloudProviderSpec key and where its value goes.
type specField struct {
	name    string
	aliases []string
	kind    fieldKind
	target  func(s *Spec) any
	// use says what the field chooses: the cloud and identity (fieldCloud), a credential that
	// may come from a Secret (fieldCredential, also fieldCloud), or only what is created.
	use fieldUse
}

type fieldUse int

const (
	fieldWhat fieldUse = iota
	// fieldCloud fields choose where and as whom: refused unless Options.AllowMachineCloud.
	fieldCloud
	// fieldCredential fields are fieldCloud fields that may be given as a secretKeyRef.
	fieldCredential
)

var specFields = []specField{
	{"identityEndpoint", nil, kindString, func(s *Spec) any { return &s.IdentityEndpoint }, fieldCloud},
	{"username", nil, kindString, func(s *Spec) any { return &s.Username }, fieldCredential},
	{"password", nil, kindString, func(s *Spec) any { return &s.Password }, fieldCredential},
	{"domainName", nil, kindString, func(s *Spec) any { return &s.DomainName }, fieldCloud},
	{"projectName", []string{"tenantName"}, kindString, func(s *Spec) any { return &s.ProjectName }, fieldCloud},
	{"projectID", []string{"tenantID"}, kindString, func(s *Spec) any { return &s.ProjectID }, fieldCloud},
	{"tokenId", nil, kindString, func(s *Spec) any { return &s.TokenID }, fieldCredential},
	// The region picks endpoints from the controller's own Keystone catalog, with its own
	// credentials: it chooses where in the operator's cloud, as the availability zone does.
	{"region", nil, kindString, func(s *Spec) any { return &s.Region }, fieldWhat},
	{"applicationCredentialID", nil, kindString, func(s *Spec) any { return &s.ApplicationCredentialID }, fieldCredential},
	{"applicationCredentialSecret", nil, kindString, func(s *Spec) any { return &s.ApplicationCredentialSecret }, fieldCredential},
	{"image", nil, kindString, func(s *Spec) any { return &s.Image }, fieldWhat},
	{"flavor", nil, kindString, func(s *Spec) any { return &s.Flavor }, fieldWhat},
	{"securityGroups", nil, kindStrings, func(s *Spec) any { return &s.SecurityGroups }, fieldWhat},
	{"network", nil, kindString, func(s *Spec) any { return &s.Network }, fieldWhat},
	{"subnet", nil, kindString, func(s *Spec) any { return &s.Subnet }, fieldWhat},
	{"floatingIpPool", nil, kindString, func(s *Spec) any { return &s.FloatingIPPool }, fieldWhat},
	{"availabilityZone", nil, kindString, func(s *Spec) any { return &s.AvailabilityZone }, fieldWhat},
	{"serverGroupID", []string{"serverGroup"}, kindString, func(s *Spec) any { return &s.ServerGroupID }, fieldWhat},
	{"tags", nil, kindMap, func(s *Spec) any { return &s.Tags }, fieldWhat},
	{"rootDiskSizeGB", nil, kindInt, func(s *Spec) any { return &s.RootDiskSizeGB }, fieldWhat},
	{"rootDiskVolumeType", nil, kindString, func(s *Spec) any { return &s.RootDiskVolumeType }, fieldWhat},
	{"configDrive", nil, kindBool, func(s *Spec) any { return &s.ConfigDrive }, fieldWhat},
	{"trustDevicePath", nil, kindBool, func(s *Spec) any { return &s.TrustDevicePath }, fieldWhat},
	{"nodeVolumeAttachLimit", nil, kindUint, func(s *Spec) any { return &s.NodeVolumeAttachLimit }, fieldWhat},
	{"instanceReadyCheckPeriod", nil, kindDuration, func(s *Spec) any { return &s.InstanceReadyCheckPeriod }, fieldWhat},
	{"instanceReadyCheckTimeout", nil, kindDuration, func(s *Spec) any { return &s.InstanceReadyCheckTimeout }, fieldWhat},
	{"computeAPIVersion", nil, kindString, func(s *Spec) any { return &s.ComputeAPIVersion }, fieldWhat},
}

// DecodeSpec decodes a cloudProviderSpec strictly: unknown keys, a key given together with its
// alias, and values of the wrong type are field errors under path. References are read in
// namespace (the Machine's) through resolver, which may be nil when the spec has none. The
// returned error is a field.ErrorList aggregate for problems in the spec, or a plain error when
// a reference could not be read (which may be temporary).
func DecodeSpec(ctx context.Context, raw []byte, namespace string, resolver Resolver, path *field.Path) (*Spec, error) {
	var obj map[string]json.RawMessage
	if len(bytes.TrimSpace(raw)) == 0 {
		obj = map[string]json.RawMessage{}
	} else if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, field.ErrorList{field.Invalid(path, string(raw), "must be a JSON object")}.ToAggregate()
	}
	spec := &Spec{}
	var errs field.ErrorList
	known := map[string]bool{}
	for _, f := range specFields {
		names := append([]string{f.name}, f.aliases...)
		var given []string
		for _, n := range names {
			known[n] = true
			// An empty value gives nothing: Kubermatic's machine-controller writes every field
			// of the specs it defaults, unset ones as "" (tenantName next to projectName).
			if v, ok := obj[n]; ok && string(v) != `""` && string(v) != "null" {
				given = append(given, n)
			}
		}
		if len(given) == 0 {
			continue
		}
		if len(given) > 1 {
			errs = append(errs, field.Duplicate(path.Child(given[1]), fmt.Sprintf("%s is an alias of %s; give only one", given[1], given[0])))
			continue
		}
		fp := path.Child(given[0])
		sc := refScope{namespace: namespace, resolver: resolver}
		if err := decodeField(ctx, f, obj[given[0]], f.target(spec), sc, fp); err != nil {
			if fe, ok := err.(*field.Error); ok {
				errs = append(errs, fe)
				continue
			}
			return nil, err
		}
	}
	var unknown []string
	for k := range obj {
		if !known[k] {
			unknown = append(unknown, k)
		}
	}
	slices.Sort(unknown)
	for _, k := range unknown {
		errs = append(errs, field.Forbidden(path.Child(k), "unknown field"))
	}
	if len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	return spec, nil
}

// decodeField decodes one value into dst. Problems with the value are *field.Error; failures
// to read a reference are plain errors.
func decodeField(ctx context.Context, f specField, raw json.RawMessage, dst any, sc refScope, fp *field.Path) error {
	if string(raw) == "null" {
		return nil
	}
	str := func(raw json.RawMessage, fp *field.Path) (string, error) {
		return decodeString(ctx, raw, sc, f.use == fieldCredential, fp)
	}
	switch f.kind {
	case kindString:
		v, err := str(raw, fp)
		*dst.(*string) = v
		return err
	case kindStrings:
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return field.Invalid(fp, string(raw), "must be a list of strings")
		}
		out := dst.(*[]string)
		for i, it := range items {
			v, err := str(it, fp.Index(i))
			if err != nil {
				return err
			}
			*out = append(*out, v)
		}
		return nil
	case kindMap:
		if err := json.Unmarshal(raw, dst); err != nil {
			return field.Invalid(fp, string(raw), "must be a map of strings to strings")
		}
		return nil
	case kindInt:
		var n int
		if err := json.Unmarshal(raw, &n); err != nil {
			return field.Invalid(fp, string(raw), "must be an integer")
		}
		*dst.(**int) = &n
		return nil
	case kindUint:
		var n uint
		if err := json.Unmarshal(raw, &n); err != nil {
			return field.Invalid(fp, string(raw), "must be a non-negative integer")
		}
		*dst.(**uint) = &n
		return nil
	case kindBool:
		var b bool
		if json.Unmarshal(raw, &b) == nil {
			*dst.(*bool) = b
			return nil
		}
		v, err := str(raw, fp)
		if err != nil {
			return err
		}
		if *dst.(*bool), err = strconv.ParseBool(v); err != nil {
			return field.Invalid(fp, v, "must be true or false")
		}
		return nil
	case kindDuration:
		v, err := str(raw, fp)
		if err != nil || v == "" {
			return err
		}
		d, perr := time.ParseDuration(v)
		if perr != nil || d < 0 {
			return field.Invalid(fp, v, "must be a non-negative duration such as 10s or 2m")
		}
		*dst.(*time.Duration) = d
		return nil
	}
	return fmt.Errorf("unhandled field kind %d", f.kind)
}
