package encryption

import (
	"fmt"
	"slices"
	"strings"
)

// Action is the next thing to do to bring the configuration to its steady state: one key,
// first, with every Secret rewritten under it. Each is followed by a wait until every API
// server has loaded the file it leaves.
type Action int

// Actions, in the order a rotation (or the enabling of encryption on a running cluster) goes
// through them.
const (
	// Done: one key, encrypting, every Secret rewritten under it.
	Done Action = iota
	// Promote makes the newest key the one that encrypts (it comes first, identity last). Every
	// API server must already read it: that is why a new key is added second, and aescbc after
	// identity when encryption is enabled on a running cluster, and waited for, first.
	Promote
	// Rewrite rewrites every Secret, so that each is stored under the newest key, then keeps
	// only that key and marks the file rewritten under it.
	Rewrite
)

func (a Action) String() string {
	switch a {
	case Promote:
		return "promote"
	case Rewrite:
		return "rewrite"
	}
	return "done"
}

// Newest is the key with the highest number.
func (c Config) Newest() Key {
	var n Key
	for _, k := range c.Keys {
		if KeyNumber(k.Name) > KeyNumber(n.Name) {
			n = k
		}
	}
	return n
}

// Next says what to do with c and returns the configuration that doing it leaves. The state
// is the file's alone, so a run killed anywhere is resumed from what the control planes hold.
func Next(c Config) (Action, Config) {
	newest := c.Newest()
	next := Config{Rewritten: c.Rewritten}
	switch {
	case c.IdentityFirst || c.Keys[0].Name != newest.Name:
		next.Keys = append([]Key{newest}, slices.DeleteFunc(slices.Clone(c.Keys), func(k Key) bool { return k.Name == newest.Name })...)
		return Promote, next
	case len(c.Keys) > 1 || c.Rewritten != newest.Name:
		next.Keys, next.Rewritten = []Key{newest}, newest.Name
		return Rewrite, next
	}
	return Done, c
}

// FirstKey is the name of a cluster's first key.
const FirstKey = "key-1"

// StartRotation adds k, a new key named c.NextKeyName(), after the one that encrypts: every API
// server reads it before any writes with it. Only a configuration that is Done may start one.
func StartRotation(c Config, k Key) (Config, error) {
	if a, _ := Next(c); a != Done {
		return Config{}, fmt.Errorf("a key rotation is already under way (%s)", c.Describe())
	}
	if k.Name != c.NextKeyName() {
		return Config{}, fmt.Errorf("the new key is named %s, want %s", k.Name, c.NextKeyName())
	}
	return Config{Keys: []Key{c.Keys[0], k}, Rewritten: c.Rewritten}, nil
}

// Staged is the first configuration of a cluster that had no encryption: k (key-1) after
// identity, so that the API servers, restarted one by one, all read it before any encrypts
// with it.
func Staged(k Key) Config { return Config{Keys: []Key{k}, IdentityFirst: true} }

// Fresh is the configuration of a cluster that kubeadm init creates with encryption: k (key-1)
// encrypts from the start, and there is nothing to rewrite.
func Fresh(k Key) Config { return Config{Keys: []Key{k}, Rewritten: k.Name} }

// Describe says what c holds, by key names: safe to print.
func (c Config) Describe() string {
	var names []string
	for _, k := range c.Keys {
		names = append(names, k.Name)
	}
	var b strings.Builder
	if c.IdentityFirst {
		b.WriteString("identity (writes), aescbc ")
		b.WriteString(strings.Join(names, ", "))
	} else {
		b.WriteString("aescbc " + strings.Join(names, ", ") + " (" + names[0] + " writes), identity")
	}
	if c.Rewritten != "" {
		b.WriteString("; Secrets rewritten under " + c.Rewritten)
	}
	return b.String()
}

// Reason says, for a plan, why c is not Done and what comes next ("" when it is Done).
func Reason(c Config) string {
	a, next := Next(c)
	switch a {
	case Promote:
		if c.IdentityFirst {
			return fmt.Sprintf("encryption is being enabled (%s): make %s encrypt, then rewrite every Secret", c.Describe(), next.Keys[0].Name)
		}
		return fmt.Sprintf("a key rotation is under way (%s): make %s encrypt, rewrite every Secret, drop the old key", c.Describe(), next.Keys[0].Name)
	case Rewrite:
		return fmt.Sprintf("Secrets are not all rewritten under %s yet (%s): rewrite every Secret, then keep only %s", next.Keys[0].Name, c.Describe(), next.Keys[0].Name)
	}
	return ""
}
