// Package openstack is the machine-controller's OpenStack provider: it implements cloud.Provider
// with gophercloud v2. It owns the decoding of a Machine's cloudProviderSpec (the field names
// existing manifests use, with secret and config-map references and OS_* fallbacks), one cached
// Keystone session per credential set, rate-limited and retrying HTTP, cached name-or-ID lookups of
// flavors, images, networks and groups, and the resumable create, find and delete of the server,
// port, floating IP and boot volume behind each Machine.
//
// Everything a create allocates is recorded on the Machine (annotation StateAnnotation) before the
// call that allocates it returns, so a controller restarted at any point resumes the create or
// releases what was made. Servers carry the Machine's UID (metadata machine-uid) and the cluster
// name (metadata and Nova tag slipway-cluster), which is how Get finds them and how List finds
// orphans.
//
// The simulator in openstacktest serves the same wire protocol as a real cloud, and every test of
// this package runs the unmodified gophercloud client against it.
package openstack
