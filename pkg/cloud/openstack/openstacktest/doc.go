// Package openstacktest is a stateful, in-memory OpenStack that speaks the real wire protocol of
// the API subset Slipway uses: Keystone v3 (password, application-credential and token auth, a
// service catalog, expiring tokens), Nova (servers with BUILD→ACTIVE/ERROR, metadata, tags,
// flavors, server groups, availability zones, microversions), Neutron (networks, subnets, ports,
// security groups, floating IPs), Glance v2 images and Cinder v3 volumes. Unmodified gophercloud
// talks to it, so the provider's unit tests, the controllers' integration tests and the
// end-to-end suite all exercise the real client code.
//
// Like net/http/httptest it is a test helper, but it is also the simulator behind
// test/openstack-sim. Besides the APIs it offers what a real cloud cannot: fault injection
// (per-service error rates, latency, quotas, servers that fail to build, servers deleted behind the
// caller's back), introspection of everything allocated (to prove that nothing leaked), counters
// of API calls, and hooks that run when a server becomes ACTIVE or is deleted, which the
// end-to-end suite uses to boot a sandbox host from the server's user-data.
package openstacktest
