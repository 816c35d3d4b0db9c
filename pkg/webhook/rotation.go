package webhook

import (
	"bytes"
	"context"
	"encoding/pem"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/pkg/webhook/certs"
)

// Rotator renews the webhook's serving certificate before it expires, so that a cluster in
// which nothing else changes keeps admitting Machines: slipway apply rewrites the certificate
// only when it redeploys the controller. Once less than a third of the certificate's lifetime
// is left, it makes a new CA and certificate of the same lifetime and names, adds the new CA to
// the webhook configurations' caBundle (next to the CA in use, so that replicas still serving
// the old certificate stay trusted), and only then writes the new certificate into the Secret,
// from which the kubelet updates every replica's mounted copy and the webhook server reloads
// it. It runs on the leader only.
type Rotator struct {
	// Client writes; Reader reads without a cache (Secrets are never cached, and reading a few
	// named objects needs no watch).
	Client client.Client
	Reader client.Reader
	// Secret holds tls.crt, tls.key and ca.crt.
	Secret types.NamespacedName
	// Mutating and Validating name the webhook configurations whose caBundle trusts the CA.
	Mutating, Validating []string
	// Interval is how often the certificate is looked at; default an hour.
	Interval time.Duration
	// Now is the clock; default time.Now.
	Now func() time.Time
	Log logr.Logger
}

// NeedLeaderElection makes only the leader renew.
func (r *Rotator) NeedLeaderElection() bool { return true }

// Start looks at the certificate now and then every Interval, and renews it when due, until
// ctx ends. A failed pass is logged and retried on the next.
func (r *Rotator) Start(ctx context.Context) error {
	interval := r.Interval
	if interval <= 0 {
		interval = time.Hour
	}
	for {
		if err := r.Rotate(ctx); err != nil {
			r.Log.Error(err, "renewing the webhook certificate")
		}
		t := time.NewTimer(interval)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
	}
}

// Rotate is one pass: renew the certificate if due, and make sure the webhook configurations
// trust its CA.
func (r *Rotator) Rotate(ctx context.Context) error {
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	sec := &corev1.Secret{}
	if err := r.Reader.Get(ctx, r.Secret, sec); err != nil {
		return fmt.Errorf("reading the webhook certificate %s: %w", r.Secret, err)
	}
	cur := &certs.Serving{CA: sec.Data["ca.crt"], Cert: sec.Data["tls.crt"], Key: sec.Data["tls.key"]}
	if cur.Fresh(now()) {
		// Nothing to renew; a caBundle that lost the CA in use (edited, or reapplied from an
		// older manifest) is repaired.
		return r.trust(ctx, cur.CA, nil)
	}
	lifetime, names := cur.Lifetime(), cur.Names()
	if lifetime <= 0 || len(names) == 0 {
		return fmt.Errorf("the webhook certificate in %s does not parse; it cannot be renewed with the same names and lifetime (slipway apply makes a new one)", r.Secret)
	}
	// Valid from a little before now, for clocks behind ours, and as long as the one it replaces.
	from := now().Add(-min(time.Hour, lifetime/10))
	next, err := certs.New(from, from.Add(lifetime), names)
	if err != nil {
		return err
	}
	if err := r.trust(ctx, next.CA, cur.CA); err != nil {
		return err
	}
	sec.Data["ca.crt"], sec.Data["tls.crt"], sec.Data["tls.key"] = next.CA, next.Cert, next.Key
	// The resource version read above makes this fail if anyone changed the Secret meanwhile;
	// the next pass starts again from what is there.
	if err := r.Client.Update(ctx, sec); err != nil {
		return fmt.Errorf("writing the renewed webhook certificate to %s: %w", r.Secret, err)
	}
	r.Log.Info("renewed the webhook certificate", "secret", r.Secret.String(), "renewAt", next.RenewAt())
	return nil
}

// trust sets every webhook's caBundle to ca, plus keep when given (the CA still in use while a
// renewal rolls out), or, with no keep, adds ca to what is there if it is missing.
func (r *Rotator) trust(ctx context.Context, ca, keep []byte) error {
	bundle := func(old []byte) []byte {
		if keep == nil {
			if containsCert(old, ca) {
				return old
			}
			return append(append([]byte{}, old...), ca...)
		}
		if containsCert(old, keep) {
			return append(append([]byte{}, keep...), ca...)
		}
		return ca
	}
	for _, wc := range r.configurations() {
		kind := wc.obj.GetObjectKind().GroupVersionKind().Kind
		if err := r.Reader.Get(ctx, client.ObjectKeyFromObject(wc.obj), wc.obj); err != nil {
			return fmt.Errorf("reading %s %s: %w", kind, wc.obj.GetName(), err)
		}
		changed := false
		for _, cc := range wc.clientConfigs() {
			if b := bundle(cc.CABundle); !bytes.Equal(b, cc.CABundle) {
				cc.CABundle, changed = b, true
			}
		}
		if changed {
			if err := r.Client.Update(ctx, wc.obj); err != nil {
				return fmt.Errorf("updating the caBundle of %s %s: %w", kind, wc.obj.GetName(), err)
			}
		}
	}
	return nil
}

// webhookConfiguration is a Mutating- or ValidatingWebhookConfiguration and the client
// configurations of its webhooks.
type webhookConfiguration struct {
	obj           client.Object
	clientConfigs func() []*admissionregistrationv1.WebhookClientConfig
}

func (r *Rotator) configurations() []webhookConfiguration {
	var out []webhookConfiguration
	for _, name := range r.Mutating {
		c := &admissionregistrationv1.MutatingWebhookConfiguration{}
		c.Name, c.Kind = name, "MutatingWebhookConfiguration"
		out = append(out, webhookConfiguration{c, func() []*admissionregistrationv1.WebhookClientConfig {
			return clientConfigs(c.Webhooks, func(w *admissionregistrationv1.MutatingWebhook) *admissionregistrationv1.WebhookClientConfig {
				return &w.ClientConfig
			})
		}})
	}
	for _, name := range r.Validating {
		c := &admissionregistrationv1.ValidatingWebhookConfiguration{}
		c.Name, c.Kind = name, "ValidatingWebhookConfiguration"
		out = append(out, webhookConfiguration{c, func() []*admissionregistrationv1.WebhookClientConfig {
			return clientConfigs(c.Webhooks, func(w *admissionregistrationv1.ValidatingWebhook) *admissionregistrationv1.WebhookClientConfig {
				return &w.ClientConfig
			})
		}})
	}
	return out
}

func clientConfigs[W any](hooks []W, of func(*W) *admissionregistrationv1.WebhookClientConfig) []*admissionregistrationv1.WebhookClientConfig {
	out := make([]*admissionregistrationv1.WebhookClientConfig, len(hooks))
	for i := range hooks {
		out[i] = of(&hooks[i])
	}
	return out
}

// containsCert reports whether the PEM bundle holds the (first) certificate of cert.
func containsCert(bundle, cert []byte) bool {
	want, _ := pem.Decode(cert)
	if want == nil {
		return false
	}
	for rest := bundle; ; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			return false
		}
		if bytes.Equal(b.Bytes, want.Bytes) {
			return true
		}
	}
}
