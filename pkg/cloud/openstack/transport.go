package openstack

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"golang.org/x/time/rate"

	"github.com/slipway-dev/slipway/pkg/cloud"
)

// transport rate-limits every request to the cloud and retries the answers that ask to be
// retried: 429 Too Many Requests and 503 Service Unavailable, after Retry-After when the cloud
// sends one and with exponential backoff otherwise. Other errors go back to the caller, whose
// own retry (the controller's requeue) is the right place for them. It also refuses plain
// http:// unless allowed (a catalog may list http endpoints behind an https Keystone, and the
// token would travel unencrypted to them) and bounds every response body to maxBody bytes and
// maxValues JSON values.
type transport struct {
	base       http.RoundTripper
	limiter    *rate.Limiter
	maxRetries int
	// backoff is the first wait without Retry-After; it doubles up to maxWait.
	backoff time.Duration
	// maxWait caps any single wait, Retry-After included: a cloud asking for more is answered
	// with its error, so the controller can requeue instead of holding a worker.
	maxWait time.Duration
	// maxBody bounds every response body; reading past it is an ErrResponseTooLarge. maxValues
	// bounds the JSON values in it (ErrResponseTooComplex): the body is read whole, and checked,
	// before the decoder sees it.
	maxBody   int64
	maxValues int
	// decoding bounds what the bodies being decoded at once may cost, all requests together.
	decoding  *budget
	allowHTTP bool
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme != "https" && !t.allowHTTP {
		return nil, fmt.Errorf("refusing %s %s://%s%s: only https:// is used, so that credentials and tokens never "+
			"travel unencrypted (an operator may accept http with %s=true)", req.Method, req.URL.Scheme, req.URL.Host,
			req.URL.Path, cloud.EnvAllowHTTP)
	}
	resp, err := t.roundTrip(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.ContentLength > t.maxBody {
		return nil, &ErrResponseTooLarge{Method: req.Method, URL: req.URL.Redacted(), Limit: t.maxBody, Length: resp.ContentLength}
	}
	body, values, err := readBounded(resp.Body, t.maxBody, t.maxValues,
		&ErrResponseTooLarge{Method: req.Method, URL: req.URL.Redacted(), Limit: t.maxBody, Length: -1},
		&ErrResponseTooComplex{Method: req.Method, URL: req.URL.Redacted(), Limit: t.maxValues})
	if err != nil {
		return nil, err
	}
	release, err := t.decoding.hold(req.Context(), decodeCost(len(body), values))
	if err != nil {
		return nil, err
	}
	resp.Body, resp.ContentLength = &heldBody{r: bytes.NewReader(body), release: release}, int64(len(body))
	return resp, nil
}

func (t *transport) roundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	for attempt := 0; ; attempt++ {
		if err := t.limiter.Wait(ctx); err != nil {
			return nil, err
		}
		if attempt > 0 && req.Body != nil {
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			req = req.Clone(ctx)
			req.Body = body
		}
		resp, err := t.base.RoundTrip(req)
		if err != nil || !retryable(resp.StatusCode) || attempt >= t.maxRetries ||
			(req.Body != nil && req.GetBody == nil) {
			return resp, err
		}
		wait := t.wait(resp, attempt)
		if wait > t.maxWait {
			return resp, nil
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		if err := sleep(ctx, wait); err != nil {
			return nil, err
		}
	}
}

func retryable(code int) bool {
	return code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable
}

// wait is how long to wait before the next attempt: Retry-After (seconds or an HTTP date) when
// given, otherwise backoff doubled per attempt.
func (t *transport) wait(resp *http.Response, attempt int) time.Duration {
	if v := resp.Header.Get("Retry-After"); v != "" {
		if secs, err := strconv.Atoi(v); err == nil && secs >= 0 {
			return time.Duration(secs) * time.Second
		}
		if at, err := http.ParseTime(v); err == nil {
			return max(time.Until(at), 0)
		}
	}
	d := t.backoff << attempt
	if d <= 0 || d > t.maxWait {
		d = t.maxWait
	}
	return d
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
