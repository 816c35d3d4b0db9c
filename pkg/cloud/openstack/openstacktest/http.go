package openstacktest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Services, named by the first element of the URL path and by the catalog.
const (
	serviceIdentity = "identity"
	serviceCompute  = "compute"
	serviceNetwork  = "network"
	serviceImage    = "image"
	serviceVolume   = "volume"
	// serviceLoadBalancer is Octavia.
	serviceLoadBalancer = "load-balancer"
	serviceControl      = "_sim"
)

func serviceOf(path string) string {
	p := strings.TrimPrefix(path, "/")
	if i := strings.IndexByte(p, '/'); i >= 0 {
		p = p[:i]
	}
	return p
}

// apiError is an error response in the shape the service that returns it uses.
type apiError struct {
	status  int
	kind    string // Neutron's error type, e.g. NetworkNotFound; derived from status when empty
	message string
	header  http.Header
}

func (e *apiError) Error() string { return e.message }

func errf(status int, format string, args ...any) *apiError {
	return &apiError{status: status, message: fmt.Sprintf(format, args...)}
}

func neutronErr(status int, kind, format string, args ...any) *apiError {
	return &apiError{status: status, kind: kind, message: fmt.Sprintf(format, args...)}
}

var novaKinds = map[int]string{
	400: "badRequest", 403: "forbidden", 404: "itemNotFound", 406: "computeFault",
	409: "conflictingRequest", 413: "overLimit", 429: "overLimit", 500: "computeFault",
	501: "notImplemented", 503: "serviceUnavailable",
}

var neutronKinds = map[int]string{
	400: "HTTPBadRequest", 403: "HTTPForbidden", 404: "HTTPNotFound", 409: "Conflict",
	429: "OverLimit", 500: "HTTPInternalServerError", 503: "HTTPServiceUnavailable",
}

// writeError renders e as service's API would.
func writeError(w http.ResponseWriter, service string, e *apiError) {
	for k, v := range e.header {
		w.Header()[k] = v
	}
	switch {
	case e.status == http.StatusUnauthorized || service == serviceIdentity:
		// keystonemiddleware answers 401 for every service, in Keystone's shape.
		writeJSON(w, e.status, map[string]any{"error": map[string]any{
			"code": e.status, "title": http.StatusText(e.status), "message": e.message}})
	case service == serviceNetwork:
		kind := e.kind
		if kind == "" {
			kind = neutronKinds[e.status]
		}
		writeJSON(w, e.status, map[string]any{"NeutronError": map[string]any{
			"type": kind, "message": e.message, "detail": ""}})
	case service == serviceLoadBalancer:
		// Octavia's errors come from WSME.
		code := "Client"
		if e.status >= 500 {
			code = "Server"
		}
		writeJSON(w, e.status, map[string]any{"faultcode": code, "faultstring": e.message, "debuginfo": nil})
	case service == serviceImage:
		w.Header().Set("Content-Type", "text/plain; charset=UTF-8")
		w.WriteHeader(e.status)
		fmt.Fprintf(w, "%d %s\n\n%s\n\n   ", e.status, http.StatusText(e.status), e.message)
	default:
		kind := novaKinds[e.status]
		if kind == "" {
			kind = "computeFault"
		}
		writeJSON(w, e.status, map[string]any{kind: map[string]any{"code": e.status, "message": e.message}})
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// maxBody bounds request bodies; Nova's user-data limit is 64 KiB and nothing else is larger.
const maxBody = 1 << 20

// decodeBody decodes a JSON request body into v.
func decodeBody(r *http.Request, v any) *apiError {
	data, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return errf(400, "reading body: %v", err)
	}
	if len(data) > maxBody {
		return errf(413, "request body too large")
	}
	if err := json.Unmarshal(data, v); err != nil {
		return errf(400, "Malformed request body: %v", err)
	}
	return nil
}

// Time formats of the services.
const (
	isoZ      = "2006-01-02T15:04:05Z"
	isoMicros = "2006-01-02T15:04:05.000000"
)

func ts(t time.Time) string { return t.UTC().Format(isoZ) }

func tsMicros(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(isoMicros)
}

type ctxKey int

const microversionKey ctxKey = 0

// microversion is a Nova API microversion, 2.<minor>.
type microversion int

func microversionOf(r *http.Request) microversion {
	mv, _ := r.Context().Value(microversionKey).(microversion)
	return mv
}

// parseMicroversion reads "2.N" or "latest".
func parseMicroversion(v string, max microversion) (microversion, error) {
	if v == "latest" {
		return max, nil
	}
	major, minor, ok := strings.Cut(v, ".")
	n, err := strconv.Atoi(minor)
	if !ok || major != "2" || err != nil || n < 1 {
		return 0, fmt.Errorf("invalid microversion %q", v)
	}
	return microversion(n), nil
}

// negotiateMicroversion reads the request's Nova microversion into its context and echoes it.
func negotiateMicroversion(w http.ResponseWriter, r *http.Request, maxStr string) (*http.Request, *apiError) {
	max, _ := parseMicroversion(maxStr, 0)
	req := r.Header.Get("X-OpenStack-Nova-API-Version")
	if v, ok := strings.CutPrefix(r.Header.Get("OpenStack-API-Version"), "compute "); ok {
		req = strings.TrimSpace(v)
	}
	mv := microversion(1)
	if req != "" {
		var err error
		if mv, err = parseMicroversion(req, max); err != nil {
			return r, errf(400, "Invalid API version request: %s", req)
		}
		if mv > max {
			return r, errf(406, "Version %s is not supported by the API. Minimum is 2.1 and maximum is %s.", req, maxStr)
		}
	}
	s := fmt.Sprintf("2.%d", mv)
	w.Header().Set("X-OpenStack-Nova-API-Version", s)
	w.Header().Set("OpenStack-API-Version", "compute "+s)
	w.Header().Set("Vary", "OpenStack-API-Version, X-OpenStack-Nova-API-Version")
	return r.WithContext(context.WithValue(r.Context(), microversionKey, mv)), nil
}

// decodeOrFail decodes the request body into v, or answers with the service's error and
// returns false.
func decodeOrFail(w http.ResponseWriter, r *http.Request, service string, v any) bool {
	if e := decodeBody(r, v); e != nil {
		writeError(w, service, e)
		return false
	}
	return true
}
