package openstacktest

import (
	"encoding/json"
	"net/http"
	"net/netip"
	"regexp"
	"strings"
	"time"
)

// serverUpdateKeys are what PUT /servers/{id} accepts, from the microversion given.
var serverUpdateKeys = map[string]microversion{
	"name": 1, "accessIPv4": 1, "accessIPv6": 1, "OS-DCF:diskConfig": 1, "description": 19, "hostname": 90,
}

var hostnamePattern = regexp.MustCompile(`^[a-zA-Z0-9-._]*$`)

// checkServerNaming validates the naming attributes of a create or an update as Nova's
// schema does.
func checkServerNaming(description *string, hostname, ipv4, ipv6 string) *apiError {
	switch {
	case description != nil && len(*description) > 255:
		return errf(400, "Invalid input for field/attribute description. Value: %s. is too long", *description)
	case len(hostname) > 255 || !hostnamePattern.MatchString(hostname):
		return errf(400, "Invalid input for field/attribute hostname. Value: %s.", hostname)
	}
	if a, err := netip.ParseAddr(ipv4); ipv4 != "" && (err != nil || !a.Is4()) {
		return errf(400, "Invalid input for field/attribute accessIPv4. Value: %s. '%s' is not a 'ipv4'", ipv4, ipv4)
	}
	if a, err := netip.ParseAddr(ipv6); ipv6 != "" && (err != nil || !a.Is6()) {
		return errf(400, "Invalid input for field/attribute accessIPv6. Value: %s. '%s' is not a 'ipv6'", ipv6, ipv6)
	}
	return nil
}

// sanitizeHostname derives a hostname from a display name as Nova does: lower case, spaces
// and underscores to dashes, other invalid characters dropped, at most 63 characters.
func sanitizeHostname(name string) string {
	var b strings.Builder
	for _, c := range strings.ToLower(name) {
		switch {
		case c == ' ' || c == '_':
			b.WriteByte('-')
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '.':
			b.WriteRune(c)
		}
	}
	h := strings.Trim(b.String(), "-.")
	if len(h) > 63 {
		h = strings.Trim(h[:63], "-.")
	}
	if h == "" {
		return "server"
	}
	return h
}

// updateServer changes a server's name, description, hostname or access addresses.
func (s *Sim) updateServer(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Server map[string]json.RawMessage `json:"server"`
	}
	if !decodeOrFail(w, r, serviceCompute, &body) {
		return
	}
	mv := microversionOf(r)
	for k := range body.Server {
		if min, ok := serverUpdateKeys[k]; !ok || mv < min {
			writeError(w, serviceCompute, errf(400, "Invalid input for field/attribute server. Additional properties are not allowed ('%s' was unexpected)", k))
			return
		}
	}
	var req struct {
		Name        *string `json:"name"`
		Description *string `json:"description"`
		Hostname    *string `json:"hostname"`
		AccessIPv4  *string `json:"accessIPv4"`
		AccessIPv6  *string `json:"accessIPv6"`
	}
	raw, _ := json.Marshal(body.Server)
	if err := json.Unmarshal(raw, &req); err != nil {
		writeError(w, serviceCompute, errf(400, "Invalid input for field/attribute server: %v", err))
		return
	}
	if req.Name != nil && (*req.Name == "" || len(*req.Name) > 255) {
		writeError(w, serviceCompute, errf(400, "Invalid input for field/attribute name. Value: %s.", *req.Name))
		return
	}
	if e := checkServerNaming(req.Description, deref(req.Hostname), deref(req.AccessIPv4), deref(req.AccessIPv6)); e != nil {
		writeError(w, serviceCompute, e)
		return
	}
	s.onServer(w, r, func(srv *Server) {
		for dst, src := range map[*string]*string{&srv.Name: req.Name, &srv.Description: req.Description,
			&srv.Hostname: req.Hostname, &srv.AccessIPv4: req.AccessIPv4, &srv.AccessIPv6: req.AccessIPv6} {
			if src != nil {
				*dst = *src
			}
		}
		srv.Updated = time.Now()
		writeJSON(w, http.StatusOK, map[string]any{"server": s.renderServer(srv, mv)})
	})
}
