package mcdeploy

import (
	"time"

	"github.com/slipway-dev/slipway/pkg/webhook/certs"
)

// certValidity is how long the webhook certificates apply makes live. The controller renews
// them once a third of that is left (certs.Serving.RenewAt), and apply does too when it finds
// them that old, so neither a quiet cluster nor one without a running controller sees them
// expire.
const certValidity = 2 * 365 * 24 * time.Hour

// WebhookCerts are the webhook's serving certificate and the CA that signed it, PEM-encoded.
type WebhookCerts = certs.Serving

// NewWebhookCerts creates a CA and a serving certificate for the webhook Service.
func NewWebhookCerts(now time.Time) (*WebhookCerts, error) {
	return certs.New(now.Add(-time.Hour), now.Add(certValidity), WebhookDNSNames())
}

// WebhookDNSNames are the names under which the API server reaches the webhook Service.
func WebhookDNSNames() []string {
	dns := WebhookService + "." + Namespace + ".svc"
	return []string{WebhookService, WebhookService + "." + Namespace, dns, dns + ".cluster.local"}
}
