package openstacktest

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Fault makes matching API calls fail before they reach the simulated service, as a broken load
// balancer, an overloaded API or a rate limiter would.
type Fault struct {
	// Service limits the fault to one of identity, compute, network, image, volume or
	// load-balancer.
	Service string
	// Method limits the fault to one HTTP method.
	Method string
	// PathContains limits the fault to URL paths containing it.
	PathContains string
	// Rate is the probability that a matching call fails. Zero means every matching call.
	Rate float64
	// Times is how many calls may fail at most; zero means no limit.
	Times int
	// Status is the HTTP status to answer; default 500.
	Status int
	// RetryAfter, when set, is sent as a Retry-After header (whole seconds, rounded up).
	RetryAfter time.Duration
	// Message is the error message; a generic one by default.
	Message string
	// ExemptHeader, when set, spares requests that carry this header, so a test's own
	// observers can watch a cloud whose faults are meant for the system under test.
	ExemptHeader string
}

type faultRule struct {
	Fault
	fired int
}

type faultTable struct {
	rules []*faultRule
}

// Quota limits what the project may hold. Zero means unlimited, which the APIs report as -1.
type Quota struct {
	// Nova.
	Instances          int
	Cores              int
	RAMMiB             int
	KeyPairs           int
	ServerGroups       int
	ServerGroupMembers int
	// Neutron.
	Networks           int
	Subnets            int
	Ports              int
	Routers            int
	FloatingIPs        int
	SecurityGroups     int
	SecurityGroupRules int
	// Cinder.
	Volumes   int
	Gigabytes int
}

// InjectFault adds f and returns a function that removes it again.
func (s *Sim) InjectFault(f Fault) (remove func()) {
	if f.Status == 0 {
		f.Status = http.StatusInternalServerError
	}
	rule := &faultRule{Fault: f}
	s.mu.Lock()
	s.faults.rules = append(s.faults.rules, rule)
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		for i, r := range s.faults.rules {
			if r == rule {
				s.faults.rules = append(s.faults.rules[:i], s.faults.rules[i+1:]...)
				return
			}
		}
	}
}

// ClearFaults removes every injected fault.
func (s *Sim) ClearFaults() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults.rules = nil
}

// SetQuota replaces the project's quota.
func (s *Sim) SetQuota(q Quota) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.quota = q
}

// FailNextServers makes the next n servers that finish building go to ERROR with the fault
// message, as Nova does when no host is valid or a spawn fails.
func (s *Sim) FailNextServers(n int, fault string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.st.serverFailures = append(s.st.serverFailures, fault)
	}
}

// injectFault returns the error a matching fault rule produces for r, if any. Callers hold no lock.
func (s *Sim) injectFault(service string, r *http.Request) *apiError {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.faults.rules {
		if f.Service != "" && f.Service != service ||
			f.Method != "" && f.Method != r.Method ||
			f.PathContains != "" && !strings.Contains(r.URL.Path, f.PathContains) ||
			f.Times > 0 && f.fired >= f.Times ||
			f.ExemptHeader != "" && r.Header.Get(f.ExemptHeader) != "" {
			continue
		}
		if f.Rate > 0 && s.rng.Float64() >= f.Rate {
			continue
		}
		f.fired++
		msg := f.Message
		if msg == "" {
			msg = "injected fault: " + http.StatusText(f.Status)
		}
		e := &apiError{status: f.Status, message: msg}
		if f.RetryAfter > 0 {
			e.header = http.Header{"Retry-After": {strconv.Itoa(int(math.Ceil(f.RetryAfter.Seconds())))}}
		}
		return e
	}
	return nil
}
