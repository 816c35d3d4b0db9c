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

// octaviaAuxiliary are the list parameters that are not filters.
var octaviaAuxiliary = []string{"limit", "marker", "sort", "sort_key", "sort_dir", "fields", "page_reverse"}

// octaviaGet answers a GET of one object, with the fields the query asks for.
func (s *Sim) octaviaGet(root, resource string, render renderer) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, o := range render() {
			if o["id"] == id {
				writeJSON(w, http.StatusOK, map[string]any{root: octaviaFields(o, r.URL.Query()["fields"])})
				return
			}
		}
		writeError(w, serviceLoadBalancer, lbNotFound(resource, id))
	}
}

// octaviaList answers a list as Octavia's pagination helper does: every other parameter is a
// filter on an attribute (an unknown one is refused), tags filters match tags, then sort keys,
// a marker and a limit page the result, with a next link when the page is full.
func (s *Sim) octaviaList(collection string, render renderer) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		s.mu.Lock()
		objs, self := render(), s.st.baseURL+r.URL.Path
		s.mu.Unlock()
		var out []map[string]any
		for _, o := range objs {
			ok, e := octaviaMatch(o, q)
			if e != nil {
				writeError(w, serviceLoadBalancer, e)
				return
			}
			if ok {
				out = append(out, o)
			}
		}
		page, links, e := octaviaPage(out, q, self)
		if e != nil {
			writeError(w, serviceLoadBalancer, e)
			return
		}
		items := []any{}
		for _, o := range page {
			items = append(items, octaviaFields(o, q["fields"]))
		}
		writeJSON(w, http.StatusOK, map[string]any{collection: items, collection + "_links": links})
	}
}

func octaviaMatch(o map[string]any, q url.Values) (bool, *apiError) {
	for key, want := range q {
		if slices.Contains(octaviaAuxiliary, key) {
			continue
		}
		switch key {
		case "tags", "tags-any", "not-tags", "not-tags-any":
			var tags []string
			for _, w := range want {
				tags = append(tags, strings.Split(w, ",")...)
			}
			if !tagsMatch(key, tags, o["tags"].([]string)) {
				return false, nil
			}
			continue
		case "loadbalancer_id":
			// A column of listeners and pools that the API shows as the loadbalancers list.
			if refs, ok := o["loadbalancers"].([]any); ok {
				if !slices.ContainsFunc(refs, func(ref any) bool { return slices.Contains(want, ref.(map[string]any)["id"].(string)) }) {
					return false, nil
				}
				continue
			}
		}
		v, ok := o[key]
		if !ok {
			return false, errf(400, "One or more arguments are either duplicate or not valid.")
		}
		got := fmt.Sprint(v)
		_, isBool := v.(bool)
		if !slices.ContainsFunc(want, func(w string) bool { return w == got || isBool && strings.EqualFold(w, got) }) {
			return false, nil
		}
	}
	return true, nil
}

// octaviaPage sorts (by creation, or the sort keys asked for), starts after the marker and cuts
// at the limit, with a link to the next page (at self) when the page is full.
func octaviaPage(objs []map[string]any, q url.Values, self string) ([]map[string]any, []any, *apiError) {
	var keys, dirs []string
	if sortQ := q.Get("sort"); sortQ != "" {
		for _, kd := range strings.Split(sortQ, ",") {
			k, d, _ := strings.Cut(kd, ":")
			keys, dirs = append(keys, k), append(dirs, cmp.Or(d, "asc"))
		}
	} else if q.Get("sort_key") != "" {
		keys, dirs = strings.Split(q.Get("sort_key"), ","), strings.Split(q.Get("sort_dir"), ",")
	}
	ds := make([]string, len(keys))
	for i, k := range keys {
		ds[i] = "asc"
		if i < len(dirs) && dirs[i] != "" {
			ds[i] = strings.ToLower(dirs[i])
		}
		if ds[i] != "asc" && ds[i] != "desc" {
			return nil, nil, errf(400, "Supplied sort direction '%s' is not valid.", ds[i])
		}
		if len(objs) > 0 {
			if _, ok := objs[0][k]; !ok {
				return nil, nil, errf(400, "Supplied sort key '%s' is not valid.", k)
			}
		}
	}
	slices.SortStableFunc(objs, func(a, b map[string]any) int {
		for i, k := range keys {
			c := compareValues(a[k], b[k])
			if ds[i] == "desc" {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		return 0
	})
	if marker := q.Get("marker"); marker != "" {
		i := slices.IndexFunc(objs, func(o map[string]any) bool { return o["id"] == marker })
		if i < 0 {
			return nil, nil, errf(400, "Supplied pagination marker '%s' is not valid.", marker)
		}
		if reverse, _ := strconv.ParseBool(q.Get("page_reverse")); reverse {
			objs = objs[:i]
		} else {
			objs = objs[i+1:]
		}
	}
	links := []any{}
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil {
			return nil, nil, errf(400, "Supplied pagination limit '%s' is not valid.", l)
		}
		if n > 0 && len(objs) >= n {
			objs = objs[:n]
			next := url.Values{"limit": {l}, "marker": {fmt.Sprint(objs[n-1]["id"])}}
			links = append(links, map[string]any{"rel": "next", "href": self + "?" + next.Encode()})
		}
	}
	return objs, links, nil
}

func compareValues(a, b any) int {
	if x, ok := a.(int); ok {
		if y, ok := b.(int); ok {
			return cmp.Compare(x, y)
		}
	}
	return cmp.Compare(fmt.Sprint(a), fmt.Sprint(b))
}

// octaviaFields keeps the attributes named by fields parameters, everything when there are none.
func octaviaFields(o map[string]any, fields []string) map[string]any {
	if len(fields) == 0 {
		return o
	}
	out := map[string]any{}
	for _, f := range fields {
		for _, k := range strings.Split(f, ",") {
			if v, ok := o[k]; ok {
				out[k] = v
			}
		}
	}
	return out
}

// loadBalancerStatus answers Octavia's status tree: the load balancer, its listeners with
// their pools, and all its pools, each with members and health monitor.
func (s *Sim) loadBalancerStatus(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.st.octavia
	lb, ok := o.lbs[r.PathValue("id")]
	if !ok {
		writeError(w, serviceLoadBalancer, lbNotFound("Load Balancer", r.PathValue("id")))
		return
	}
	listeners, pools := []any{}, []any{}
	for _, p := range sortedBySeq(o.pools, func(p *Pool) uint64 { return p.seq }) {
		if p.LoadBalancerID == lb.ID {
			pools = append(pools, s.poolStatus(p))
		}
	}
	for _, l := range sortedBySeq(o.listeners, func(l *Listener) uint64 { return l.seq }) {
		if l.LoadBalancerID != lb.ID {
			continue
		}
		ls := objStatus(l.ID, l.Name, l.ProvisioningStatus, l.OperatingStatus)
		ls["pools"], ls["l7policies"] = []any{}, []any{}
		if p, ok := o.pools[l.DefaultPoolID]; ok {
			ls["pools"] = []any{s.poolStatus(p)}
		}
		listeners = append(listeners, ls)
	}
	out := objStatus(lb.ID, lb.Name, lb.ProvisioningStatus, lb.OperatingStatus)
	out["listeners"], out["pools"] = listeners, pools
	writeJSON(w, http.StatusOK, map[string]any{"statuses": map[string]any{"loadbalancer": out}})
}

func objStatus(id, name, prov, oper string) map[string]any {
	return map[string]any{"id": id, "name": name, "provisioning_status": prov, "operating_status": oper}
}

// poolStatus is a pool's entry in the status tree. Callers hold s.mu.
func (s *Sim) poolStatus(p *Pool) map[string]any {
	o := s.st.octavia
	ps := objStatus(p.ID, p.Name, p.ProvisioningStatus, p.OperatingStatus)
	members := []any{}
	for _, m := range sortedBySeq(o.members, func(m *Member) uint64 { return m.seq }) {
		if m.PoolID == p.ID {
			ms := objStatus(m.ID, m.Name, m.ProvisioningStatus, m.OperatingStatus)
			ms["address"], ms["protocol_port"] = m.Address, m.ProtocolPort
			members = append(members, ms)
		}
	}
	ps["members"], ps["healthmonitor"] = members, map[string]any{}
	if hm, ok := o.monitors[s.monitorOf(p.ID)]; ok {
		hs := objStatus(hm.ID, hm.Name, hm.ProvisioningStatus, hm.OperatingStatus)
		hs["type"] = hm.Type
		ps["healthmonitor"] = hs
	}
	return ps
}
