package openstack

import (
	"context"
	"encoding/json"
	"errors"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/slipway-dev/slipway/pkg/cloud"
)

// checkedSpec is every check of a cloudProviderSpec that needs no cloud, in the order the
// controller makes them before it calls one: what admission refuses under the policy
// (SpecCheck), before any reference is read; strict decoding, references read in namespace
// through resolver (nil refuses them); and the spec's own rules (validate). Problems with the
// spec are a field.ErrorList aggregate; a reference that could not be read is a plain error.
func (pol Policy) checkedSpec(ctx context.Context, raw json.RawMessage, namespace string, resolver Resolver, path *field.Path) (*Spec, error) {
	if errs := pol.SpecCheck()(namespace, raw, path); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	spec, err := DecodeSpec(ctx, raw, namespace, resolver, path)
	if err != nil {
		return nil, err
	}
	if errs := spec.validate(path); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	return spec, nil
}

// ControllerCheck is the check the controller makes of every Machine's cloudProviderSpec
// before it calls the cloud (the same function), as a cloud.SpecCheck: admission's check under
// the policy, strict decoding, and the spec's own rules (an image and a flavor, tags that are
// not the controller's own, ...). It reads no reference, and refuses a spec that has one, so it
// suits specs that cannot have any, such as those slipway renders from its manifest, which it
// checks with this before apply.
func (pol Policy) ControllerCheck() cloud.SpecCheck {
	return func(namespace string, raw json.RawMessage, path *field.Path) field.ErrorList {
		_, err := pol.checkedSpec(context.Background(), raw, namespace, nil, path)
		if err == nil {
			return nil
		}
		var agg interface{ Errors() []error }
		if !errors.As(err, &agg) {
			return field.ErrorList{field.Invalid(path, "", err.Error())}
		}
		var errs field.ErrorList
		for _, e := range agg.Errors() {
			var fe *field.Error
			if errors.As(e, &fe) {
				errs = append(errs, fe)
			} else {
				errs = append(errs, field.Invalid(path, "", e.Error()))
			}
		}
		return errs
	}
}
