package main

import (
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// apiRequests counts every request the controller sends by Kubernetes verb and resource, which
// client-go's own rest_client_requests_total (by HTTP method only) cannot tell apart: a GET of
// one Secret and a LIST of all Machines are both "GET" there.
var apiRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "bench_api_requests_total",
	Help: "Requests to the API server by verb and resource[/subresource].",
}, []string{"verb", "resource"})

func init() { metrics.Registry.MustRegister(apiRequests) }

// countRequests wraps cfg's transport so that each request is counted before it is sent.
func countRequests(cfg *rest.Config) {
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			verb, resource := classify(req)
			apiRequests.WithLabelValues(verb, resource).Inc()
			return rt.RoundTrip(req)
		})
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// classify names a request the way the API server's audit log does: verb (get, list, watch,
// create, update, patch, delete, deletecollection) and resource with its subresource.
func classify(req *http.Request) (verb, resource string) {
	seg := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	switch {
	case len(seg) >= 2 && seg[0] == "api":
		seg = seg[2:] // api/v1
	case len(seg) >= 3 && seg[0] == "apis":
		seg = seg[3:] // apis/group/version
	default:
		return strings.ToLower(req.Method), "nonresource"
	}
	if len(seg) >= 3 && seg[0] == "namespaces" {
		seg = seg[2:] // namespaces/<ns>/<resource>...
	}
	if len(seg) == 0 {
		return strings.ToLower(req.Method), "discovery"
	}
	resource = seg[0]
	named := len(seg) >= 2
	if len(seg) >= 3 {
		resource += "/" + seg[2]
	}
	switch req.Method {
	case http.MethodGet:
		switch {
		case req.URL.Query().Get("watch") == "true":
			verb = "watch"
		case named:
			verb = "get"
		default:
			verb = "list"
		}
	case http.MethodPost:
		verb = "create"
	case http.MethodPut:
		verb = "update"
	case http.MethodPatch:
		verb = "patch"
	case http.MethodDelete:
		verb = "delete"
		if !named {
			verb = "deletecollection"
		}
	default:
		verb = strings.ToLower(req.Method)
	}
	return verb, resource
}
