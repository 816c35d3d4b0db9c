package openstack

import (
	"fmt"
	"regexp"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Metadata keys the provider sets itself; tags may not override them.
const (
	// MachineUIDKey is the server metadata key that holds the Machine's UID.
	MachineUIDKey = "machine-uid"
	// ClusterKey is the server metadata key, and the prefix of the Nova tag
	// "slipway-cluster=<name>", that names the cluster a server belongs to. It equals
	// v1alpha1.ClusterNameTag.
	ClusterKey = "slipway-cluster"
)

var microversionRe = regexp.MustCompile(`^2\.[0-9]{1,3}$`)

// validate checks what can be checked without the cloud.
func (s *Spec) validate(path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.Image == "" {
		errs = append(errs, field.Required(path.Child("image"), "name or ID of a Glance image"))
	}
	if s.Flavor == "" {
		errs = append(errs, field.Required(path.Child("flavor"), "name or ID of a Nova flavor"))
	}
	for i, g := range s.SecurityGroups {
		if g == "" {
			errs = append(errs, field.Required(path.Child("securityGroups").Index(i), "name or ID"))
		}
	}
	if s.RootDiskSizeGB != nil && *s.RootDiskSizeGB < 1 {
		errs = append(errs, field.Invalid(path.Child("rootDiskSizeGB"), *s.RootDiskSizeGB, "must be at least 1"))
	}
	if s.RootDiskVolumeType != "" && s.RootDiskSizeGB == nil {
		errs = append(errs, field.Invalid(path.Child("rootDiskVolumeType"), s.RootDiskVolumeType,
			"needs rootDiskSizeGB: only a boot volume has a volume type"))
	}
	if v := s.ComputeAPIVersion; v != "" && !microversionRe.MatchString(v) {
		errs = append(errs, field.Invalid(path.Child("computeAPIVersion"), v, "must be a Nova microversion such as 2.52"))
	}
	for k, v := range s.Tags {
		fp := path.Child("tags").Key(k)
		switch {
		case k == MachineUIDKey || k == ClusterKey || k == ClusterUIDKey:
			errs = append(errs, field.Forbidden(fp, fmt.Sprintf("%s is set by the machine-controller", k)))
		case k == "" || len(k) > 255:
			errs = append(errs, field.Invalid(fp, k, "keys must be 1 to 255 characters"))
		case len(v) > 255:
			errs = append(errs, field.TooLong(fp, v, 255))
		}
	}
	if len(s.Tags) > 100 {
		errs = append(errs, field.TooMany(path.Child("tags"), len(s.Tags), 100))
	}
	return errs
}

// microversion is the Nova microversion requested for the spec.
func (s *Spec) microversion() string {
	if s.ComputeAPIVersion != "" {
		return s.ComputeAPIVersion
	}
	return DefaultComputeAPIVersion
}

// minor returns N of a microversion 2.N.
func minor(mv string) int {
	var n int
	_, _ = fmt.Sscanf(mv, "2.%d", &n)
	return n
}

// ownPort reports whether the provider makes the server's port itself: it must to put the fixed
// IP on a given subnet, and to attach a floating IP before the server exists.
func (s *Spec) ownPort() bool { return s.Subnet != "" || s.FloatingIPPool != "" }
