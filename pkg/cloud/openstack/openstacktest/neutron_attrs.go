package openstacktest

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// attr says when Neutron accepts an attribute (at create, at update) and how it is stored.
type attr struct {
	create, update bool
	set            func(raw json.RawMessage) error
}

// attrs is a resource's attribute table, bound to the object being built or updated.
type attrs map[string]attr

func str(dst *string) func(json.RawMessage) error {
	return func(raw json.RawMessage) error { return json.Unmarshal(raw, dst) }
}

// nullableStr stores JSON null as "".
func nullableStr(dst *string) func(json.RawMessage) error {
	return func(raw json.RawMessage) error {
		var v *string
		if err := json.Unmarshal(raw, &v); err != nil {
			return err
		}
		*dst = deref(v)
		return nil
	}
}

func boolean(dst *bool) func(json.RawMessage) error {
	return func(raw json.RawMessage) error { return json.Unmarshal(raw, dst) }
}

func strs(dst *[]string) func(json.RawMessage) error {
	return func(raw json.RawMessage) error {
		var v []string
		if err := json.Unmarshal(raw, &v); err != nil {
			return err
		}
		*dst = v
		return nil
	}
}

// ownProject accepts tenant_id/project_id naming the caller's own project only.
func ownProject(raw json.RawMessage) error {
	var v string
	if err := json.Unmarshal(raw, &v); err != nil {
		return err
	}
	if v != ProjectID {
		return errPolicy
	}
	return nil
}

// errPolicy marks a value Neutron's default policy refuses to a project member.
var errPolicy = fmt.Errorf("disallowed by policy")

// policyRefused is an attribute that only an admin may set: a member gets 403.
func policyRefused(raw json.RawMessage) error { return errPolicy }

// onlyFalse accepts an admin-only boolean at its default value, false.
func onlyFalse(dst *bool) func(json.RawMessage) error {
	return func(raw json.RawMessage) error {
		var v bool
		if err := json.Unmarshal(raw, &v); err != nil {
			return err
		}
		if v {
			return errPolicy
		}
		*dst = false
		return nil
	}
}

// decodeNeutron reads the body {"<kind>": {...}} of a create or update into its attributes.
func decodeNeutron(r *http.Request, kind string) (map[string]json.RawMessage, *apiError) {
	var body map[string]map[string]json.RawMessage
	if e := decodeBody(r, &body); e != nil {
		return nil, neutronErr(400, "HTTPBadRequest", "%s", e.message)
	}
	in, ok := body[kind]
	if !ok || len(body) != 1 {
		return nil, neutronErr(400, "HTTPBadRequest", "Resource body required")
	}
	return in, nil
}

// apply sets every attribute of in through the table, refusing (and setting nothing else) on
// the first attribute Neutron would refuse. It is applied to a copy by updates.
func (t attrs) apply(kind string, in map[string]json.RawMessage, update bool) *apiError {
	var unknown []string
	for k := range in {
		if _, ok := t[k]; !ok {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return neutronErr(400, "HTTPBadRequest", "Unrecognized attribute(s) '%s'", strings.Join(unknown, ", "))
	}
	for _, k := range slices.Sorted(maps.Keys(in)) {
		a := t[k]
		if update && !a.update || !update && !a.create {
			if update {
				return neutronErr(400, "HTTPBadRequest", "Cannot update read-only attribute %s", k)
			}
			return neutronErr(400, "HTTPBadRequest", "Attribute '%s' not allowed in POST", k)
		}
		if err := a.set(in[k]); err != nil {
			if err == errPolicy {
				return neutronErr(403, "PolicyNotAuthorized", "(rule:%s_%s and rule:%s_%s:%s) is disallowed by policy",
					verb(update), kind, verb(update), kind, k)
			}
			return neutronErr(400, "HTTPBadRequest", "Invalid input for %s. Reason: %v.", k, err)
		}
	}
	return nil
}

func verb(update bool) string {
	if update {
		return "update"
	}
	return "create"
}

// checkIfMatch enforces an "If-Match: revision_number=N" precondition, as Neutron's
// revision-if-match extension does.
func checkIfMatch(r *http.Request, current int) *apiError {
	h := r.Header.Get("If-Match")
	if h == "" {
		return nil
	}
	for _, part := range strings.Split(h, ",") {
		v, ok := strings.CutPrefix(strings.TrimSpace(part), "revision_number=")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return neutronErr(400, "HTTPBadRequest", "Invalid If-Match header %q", h)
		}
		if n != current {
			return neutronErr(412, "RevisionNumberConstraintFailed", "Constrained to %d, but current revision is %d", n, current)
		}
	}
	return nil
}

// touch records a change of a resource: Neutron bumps the revision on every update.
func (n *neutronStd) touch() {
	n.Revision++
	n.Updated = time.Now()
}

func newStd(description string) neutronStd {
	now := time.Now()
	return neutronStd{Description: description, Tags: []string{}, Revision: 1, Created: now, Updated: now}
}

// render adds the standard attributes to a rendered resource.
func (n *neutronStd) render(m map[string]any) map[string]any {
	m["description"], m["tags"], m["revision_number"] = n.Description, append([]string{}, n.Tags...), n.Revision
	m["created_at"], m["updated_at"] = ts(n.Created), ts(n.Updated)
	m["tenant_id"], m["project_id"] = ProjectID, ProjectID
	return m
}
