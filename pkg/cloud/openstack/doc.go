// Package openstack is the machine-controller's OpenStack provider: it implements cloud.Provider
// with gophercloud v2. It owns the decoding of a Machine's cloudProviderSpec (the field names
// existing manifests use, with secret and config-map references), one cached Keystone session
// per credential set, rate-limited, retrying and size-bounded HTTP, cached name-or-ID lookups of
// flavors, images, networks and groups, and the resumable create, find and delete of the server,
// port, floating IP and boot volume behind each Machine.
//
// The cloud and its credentials are the controller's configuration (OS_* variables from the
// credentials Secret, https only, OS_CACERT trusted): a cloudProviderSpec says what to create,
// not where or as whom, unless the operator allows it (Policy), and references resolve only in
// the Machine's namespace, to objects labelled cloud.ReferenceLabel. Policy.SpecCheck is the same
// rule as an admission check.
//
// Everything a create allocates is recorded on the Machine (annotation StateAnnotation) before the
// call that allocates it returns, so a controller restarted at any point resumes the create or
// releases what was made. The record says where to look, never whose a resource is: servers
// carry the cluster's UID and the Machine's UID in their metadata (and the cluster UID as a Nova
// tag), ports and floating IPs both in their description, and nothing is deleted, reused or
// returned by Get unless the cloud shows them. List finds a cluster's servers by its UID, for the
// orphan sweep.
//
// The simulator in openstacktest serves the same wire protocol as a real cloud, and every test of
// this package runs the unmodified gophercloud client against it.
package openstack
