package encryption

import (
	"context"
	"fmt"

	"k8s.io/client-go/kubernetes"
)

// Hosts are the control planes as Converge drives them. Both methods report progress per host
// themselves; neither may show the file.
type Hosts interface {
	// NewKey makes a key of 32 random bytes named name, on the leader.
	NewKey(ctx context.Context, name string) (Key, error)
	// Write puts data, a rendered configuration, as the file on every control plane (mode 0600),
	// the leader's first.
	Write(ctx context.Context, data []byte) error
	// WaitLoaded waits, with a deadline, until every control plane's API server reports that it
	// uses the file whose Hash is hash.
	WaitLoaded(ctx context.Context, hash string) error
}

// Converge takes the cluster from c, the configuration every control plane holds and every API
// server has loaded, to Done: each step is a new file on every control plane and a wait until
// every API server uses it, with the rewrite of every Secret before the step that drops the
// keys it replaces. Since the state is the file, a run killed anywhere is resumed by the next
// one from what the control planes hold (after it has put the leader's copy everywhere and
// waited for it). say, if not nil, hears a line per step. It returns the configuration it left
// and how many Secrets it rewrote.
func Converge(ctx context.Context, hosts Hosts, kc kubernetes.Interface, c Config, say func(string)) (Config, int, error) {
	if say == nil {
		say = func(string) {}
	}
	rewritten := 0
	for {
		a, next := Next(c)
		switch a {
		case Done:
			return c, rewritten, nil
		case Promote:
			say(fmt.Sprintf("%s encrypts from now on (%s)", next.Keys[0].Name, next.Describe()))
		case Rewrite:
			say(fmt.Sprintf("rewriting every Secret, so that each is stored under %s", next.Keys[0].Name))
			n, err := RewriteSecrets(ctx, kc, nil)
			if err != nil {
				return c, rewritten, err
			}
			rewritten += n
			say(fmt.Sprintf("%d Secrets rewritten under %s; keeping only %s (%s)", n, next.Keys[0].Name, next.Keys[0].Name, next.Describe()))
		}
		if err := Apply(ctx, hosts, next); err != nil {
			return c, rewritten, err
		}
		c = next
	}
}

// Apply writes c to every control plane and waits until every API server uses it.
func Apply(ctx context.Context, hosts Hosts, c Config) error {
	data, err := Render(c)
	if err != nil {
		return err
	}
	if err := hosts.Write(ctx, data); err != nil {
		return err
	}
	return hosts.WaitLoaded(ctx, Hash(data))
}

// Rotate starts a key rotation on a cluster whose configuration c is Done (a new key, added
// second, loaded everywhere) and converges it: the new key encrypts, every Secret is rewritten,
// the old key goes. A configuration that is not Done is a rotation (or enabling) under way,
// which is finished instead, without starting another.
func Rotate(ctx context.Context, hosts Hosts, kc kubernetes.Interface, c Config, say func(string)) (Config, int, error) {
	if a, _ := Next(c); a == Done {
		k, err := hosts.NewKey(ctx, c.NextKeyName())
		if err != nil {
			return c, 0, err
		}
		next, err := StartRotation(c, k)
		if err != nil {
			return c, 0, err
		}
		if say != nil {
			say(fmt.Sprintf("adding %s as the second key, so that every API server reads it before any writes with it (%s)", next.Keys[1].Name, next.Describe()))
		}
		if err := Apply(ctx, hosts, next); err != nil {
			return c, 0, err
		}
		c = next
	}
	return Converge(ctx, hosts, kc, c, say)
}
