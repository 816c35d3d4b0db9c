// Package openstacktest is a stateful, in-memory OpenStack that speaks the real wire protocol,
// so that unmodified clients work against it: gophercloud (the provider's unit tests, the
// controllers' integration tests and the end-to-end suite) and the `openstack` command-line
// client (test/openstack-sim runs it). One project ("demo") and one user, a project member,
// exist; what Keystone's, Nova's, Neutron's and Cinder's default policies refuse to a member
// (flavor and quota changes, admin-only attributes, other projects) is refused here with 403.
//
// What is served, with each service's version documents at its root (with or without the
// trailing slash), its error shapes and status codes:
//
//   - Keystone v3 (/identity): password, application-credential and token auth, expiring
//     tokens, token show and revoke, the catalog, and the member's own project and user.
//   - Nova v2.1 (/compute, microversions up to 2.96 negotiated by header): servers (BUILD, then
//     ACTIVE or ERROR; list filters and pagination; Nova's create validation and messages, e.g.
//     "Invalid key_name provided." or "Flavor's disk is too small for requested image"; quotas),
//     server updates (name, description, hostname, access IPs), metadata and tags with their
//     per-item sub-resources, interface and volume attachments (volumes attach and detach after
//     boot), flavors with extra specs,
//     keypairs (given or generated RSA keys, MD5 fingerprints), server groups in the
//     policies/policy shapes of their microversions, availability zones, quota sets and limits.
//   - Neutron v2.0 (/network): networks, subnets (allocation pools, DNS name servers, host
//     routes), ports (port security, allowed address pairs), routers with gateways and
//     interfaces, floating IPs (associated only across a router, as in Neutron), security
//     groups and rules, quotas, extensions and availability zones. Lists take filters (including
//     tags, tags-any, not-tags, not-tags-any), fields, sorting and pagination with *_links;
//     updates and deletes honour If-Match revision_number preconditions (412); every resource
//     with tags has the /tags sub-resources. An attribute accepted comes back as sent; one the
//     simulator does not implement is refused with Neutron's "Unrecognized attribute(s)".
//     Security group rules are stored and returned faithfully but not enforced: nothing
//     filters traffic by them.
//   - Glance v2 (/image): images with filters, sorting, marker pagination and next links;
//     create, JSON-patch update, tags and delete; an upload records the size and hashes of the
//     data, not the data, so downloads are not served.
//   - Cinder v3 (/volume, microversion header echoed): volumes (create, update, delete),
//     volume types, quota sets, limits and availability zones.
//   - Octavia v2 (/load-balancer): load balancers with a Neutron VIP port, listeners, pools,
//     members and health monitors, each PENDING_* before ACTIVE, immutable while pending (409),
//     cascade delete, the status tree; options the simulator cannot honour (TLS, session
//     persistence, ...) are refused with Octavia's 501 rather than ignored.
//
// A route the simulator does not serve answers 404 in the service's error shape, with a
// message naming the method and path. The seeded cloud is a small devstack: four m1 flavors,
// four images, a "private" network routed to the external "public" network by "router1",
// a "default" security group, a server group and two volume types.
//
// Like net/http/httptest it is a test helper, but it is also the simulator behind
// test/openstack-sim. Besides the APIs it offers what a real cloud cannot: fault injection
// (per-service error rates, latency, quotas, servers that fail to build, servers deleted behind the
// caller's back), introspection of everything allocated (to prove that nothing leaked) and
// counters of API calls.
//
// Servers are records unless the Sim has a Hypervisor (Options.Hypervisor): then the hypervisor
// spawns a machine when a server's build finishes (with a config drive laid out as Nova's),
// destroys it before the server's record goes, carries out the power actions (os-stop,
// os-start, reboot) and serves the console log (os-getConsoleOutput); and it is handed the
// cloud's topology (networks, floating IPs, load balancers) after every change.
// test/openstack-sim/hosts is the hypervisor that boots servers as sandbox hosts.
package openstacktest
