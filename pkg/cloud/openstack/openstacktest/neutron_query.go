package openstacktest

import (
	"cmp"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// A renderer returns every object of a kind in creation order, rendered as Neutron does.
// Callers hold s.mu.
type renderer func() []map[string]any

// neutronList lists objects that match every filter of the query, sorted (sort_key, sort_dir),
// paginated (limit, marker, page_reverse, with <collection>_links) and cut to the requested
// fields, as Neutron does. Repeating a filter matches any of its values; an unknown filter is a
// 400 (filter-validation).
func (s *Sim) neutronList(collection, kind string, render renderer) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		s.mu.Lock()
		defer s.mu.Unlock()
		var items []map[string]any
		for _, o := range render() {
			ok, e := neutronMatch(o, q)
			if e != nil {
				writeError(w, serviceNetwork, e)
				return
			}
			if ok {
				items = append(items, o)
			}
		}
		page, links, e := paginate(r, items, kind)
		if e != nil {
			writeError(w, serviceNetwork, e)
			return
		}
		out := []any{}
		for _, o := range page {
			out = append(out, onlyFields(o, q["fields"]))
		}
		body := map[string]any{collection: out}
		if links != nil {
			body[collection+"_links"] = links
		}
		writeJSON(w, http.StatusOK, body)
	}
}

// paginate sorts items and cuts the page of limit, marker and page_reverse; the links are
// those of Neutron's pagination: next unless a short forward page, previous unless a short
// reverse page.
func paginate(r *http.Request, items []map[string]any, kind string) ([]map[string]any, []any, *apiError) {
	q := r.URL.Query()
	keys, dirs := q["sort_key"], q["sort_dir"]
	if len(dirs) > 0 && len(dirs) != len(keys) {
		return nil, nil, neutronErr(400, "HTTPBadRequest", "The number of sort_keys and sort_dirs must be same")
	}
	for _, k := range keys {
		if len(items) > 0 {
			if _, ok := items[0][k]; !ok {
				return nil, nil, neutronErr(400, "HTTPBadRequest", "%s is an invalid attribute for sort_keys", k)
			}
		}
	}
	limit := 0
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return nil, nil, neutronErr(400, "HTTPBadRequest", "Invalid input for operation: '%s' should be non-negative integer.", v)
		}
		limit = n
	}
	marker, reverse := q.Get("marker"), strings.EqualFold(q.Get("page_reverse"), "true")
	if len(keys) > 0 || limit > 0 || marker != "" {
		// Neutron's native pagination adds the primary key as the last sort key.
		less := func(a, b map[string]any) int {
			for i, k := range append(slices.Clone(keys), "id") {
				c := cmp.Compare(fmt.Sprint(a[k]), fmt.Sprint(b[k]))
				if i < len(dirs) && dirs[i] == "desc" {
					c = -c
				}
				if c != 0 {
					return c
				}
			}
			return 0
		}
		slices.SortStableFunc(items, less)
		if reverse {
			slices.Reverse(items)
		}
		if marker != "" {
			i := slices.IndexFunc(items, func(o map[string]any) bool { return o["id"] == marker })
			if i < 0 {
				return nil, nil, neutronNotFound(kind, marker)
			}
			items = items[i+1:]
		}
	}
	if limit == 0 {
		return items, nil, nil
	}
	page := items[:min(limit, len(items))]
	if reverse {
		slices.Reverse(page)
	}
	var links []any
	link := func(rel, marker string, rev bool) {
		v := url.Values{}
		for k, vs := range q {
			v[k] = vs
		}
		v.Set("marker", marker)
		v.Del("page_reverse")
		if rev {
			v.Set("page_reverse", "True")
		}
		links = append(links, map[string]any{"rel": rel, "href": neutronURL(r) + "?" + v.Encode()})
	}
	if len(page) > 0 && !(len(page) < limit && !reverse) {
		link("next", fmt.Sprint(page[len(page)-1]["id"]), false)
	}
	if len(page) > 0 && !(len(page) < limit && reverse) {
		link("previous", fmt.Sprint(page[0]["id"]), true)
	}
	return page, links, nil
}

func neutronURL(r *http.Request) string { return "http://" + r.Host + r.URL.Path }

// onlyFields keeps the requested fields of an object, or all of them.
func onlyFields(o map[string]any, fields []string) map[string]any {
	if len(fields) == 0 {
		return o
	}
	out := map[string]any{}
	for _, f := range fields {
		if v, ok := o[f]; ok {
			out[f] = v
		}
	}
	return out
}

// neutronMatch tells whether o passes every filter of q.
func neutronMatch(o map[string]any, q url.Values) (bool, *apiError) {
	for key, want := range q {
		switch key {
		case "fields", "limit", "marker", "sort_key", "sort_dir", "page_reverse":
			continue
		case "tags", "tags-any", "not-tags", "not-tags-any":
			have, _ := o["tags"].([]string)
			if !tagsMatch(key, strings.Split(want[0], ","), have) {
				return false, nil
			}
			continue
		}
		v, ok := o[key]
		if !ok {
			return false, neutronErr(400, "HTTPBadRequest", "[%s] is invalid attribute for filtering", key)
		}
		if !slices.ContainsFunc(want, func(w string) bool { return filterValueMatches(key, v, w) }) {
			return false, nil
		}
	}
	return true, nil
}

// filterValueMatches compares one filter value with an attribute: booleans case-insensitively,
// lists by membership, fixed_ips by "ip_address=..." or "subnet_id=...".
func filterValueMatches(key string, v any, want string) bool {
	switch t := v.(type) {
	case bool:
		return strings.EqualFold(want, strconv.FormatBool(t))
	case []string:
		return slices.Contains(t, want)
	case []any:
		if key == "fixed_ips" {
			k, val, _ := strings.Cut(want, "=")
			return slices.ContainsFunc(t, func(f any) bool {
				m, _ := f.(map[string]any)
				return fmt.Sprint(m[k]) == val
			})
		}
		return slices.ContainsFunc(t, func(x any) bool { return fmt.Sprint(x) == want })
	case nil:
		return want == "" || want == "None"
	}
	return fmt.Sprint(v) == want
}

func tagsMatch(key string, want, have []string) bool {
	has := func(t string) bool { return slices.Contains(have, t) }
	switch key {
	case "tags":
		return all(want, has)
	case "tags-any":
		return slices.ContainsFunc(want, has)
	case "not-tags":
		return !all(want, has)
	default:
		return !slices.ContainsFunc(want, has)
	}
}

func (s *Sim) neutronGet(kind string, render renderer) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, o := range render() {
			if o["id"] == id {
				writeJSON(w, http.StatusOK, map[string]any{kind: onlyFields(o, r.URL.Query()["fields"])})
				return
			}
		}
		writeError(w, serviceNetwork, neutronNotFound(kind, id))
	}
}
