package openstack

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/gophercloud/gophercloud/v2"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/cloud"
)

// statusOf returns the HTTP status of a gophercloud error, and the cloud's message.
func statusOf(err error) (int, string) {
	var uerr gophercloud.ErrUnexpectedResponseCode
	var perr *gophercloud.ErrUnexpectedResponseCode
	switch {
	case errors.As(err, &uerr):
	case errors.As(err, &perr):
		uerr = *perr
	default:
		var reauth *gophercloud.ErrUnableToReauthenticate
		if errors.As(err, &reauth) {
			return http.StatusUnauthorized, "re-authentication failed: " + reauth.Error()
		}
		return 0, ""
	}
	return uerr.Actual, cloudMessage(uerr.Body)
}

// cloudMessage digs the human message out of an error body of any service: Nova and Cinder
// ({"itemNotFound": {"message": ...}}), Neutron ({"NeutronError": {"message": ...}}), Keystone
// ({"error": {"message": ...}}) or plain text (Glance).
func cloudMessage(body []byte) string {
	var obj map[string]json.RawMessage
	if json.Unmarshal(body, &obj) == nil {
		for _, v := range obj {
			var inner struct {
				Message string `json:"message"`
			}
			if json.Unmarshal(v, &inner) == nil && inner.Message != "" {
				return inner.Message
			}
		}
	}
	msg := strings.Join(strings.Fields(string(body)), " ")
	if len(msg) > 300 {
		msg = msg[:300] + "…"
	}
	return msg
}

func isNotFound(err error) bool {
	code, _ := statusOf(err)
	return code == http.StatusNotFound
}

// isQuota recognises the quota errors of Nova (403 or 413 "Quota exceeded"), Neutron (409
// OverQuota) and Cinder (413 "...LimitExceeded", "VolumeSizeExceedsAvailableQuota").
func isQuota(code int, msg string, body string) bool {
	switch code {
	case http.StatusForbidden, http.StatusRequestEntityTooLarge, http.StatusConflict:
		return strings.Contains(msg, "Quota exceeded") || strings.Contains(body, "OverQuota") ||
			strings.Contains(msg, "LimitExceeded") || strings.Contains(msg, "quota exceeded") || strings.Contains(msg, "ExceedsAvailableQuota")
	}
	return false
}

// classify turns a cloud error into what the controller acts on: bad credentials or a
// forbidden operation are InvalidConfiguration (terminal), an exhausted quota is a
// CapacityError (with the cloud's message kept, retried with backoff until quota frees), and
// everything else is a retryable error with context.
func classify(err error, doing string) error {
	if err == nil {
		return nil
	}
	code, msg := statusOf(err)
	var body string
	var uerr gophercloud.ErrUnexpectedResponseCode
	if errors.As(err, &uerr) {
		body = string(uerr.Body)
	}
	switch {
	case isQuota(code, msg, body):
		return cloud.Capacity("%s: %s", doing, msg)
	case code == http.StatusUnauthorized:
		return cloud.Terminal(v1alpha1.InvalidConfigurationMachineError, "%s: the cloud rejected the credentials: %s", doing, msg)
	case code == http.StatusForbidden:
		return cloud.Terminal(v1alpha1.InvalidConfigurationMachineError, "%s: forbidden: %s", doing, msg)
	case code != 0:
		return &httpError{doing: doing, code: code, msg: msg, err: err}
	}
	return fmt.Errorf("%s: %w", doing, err)
}

// httpError keeps the cloud's short message in Error and the gophercloud error behind Unwrap.
type httpError struct {
	doing string
	code  int
	msg   string
	err   error
}

func (e *httpError) Error() string { return fmt.Sprintf("%s: HTTP %d: %s", e.doing, e.code, e.msg) }
func (e *httpError) Unwrap() error { return e.err }
