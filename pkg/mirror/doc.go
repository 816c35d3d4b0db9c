// Package mirror copies the images a manifest's cluster runs into a registry of the site's own,
// under the names the cluster pulls once registryConfiguration.overwriteRegistry names that
// registry (slipway mirror-images). Plan pairs each image's upstream reference with that name,
// through imagelist.Moves, so the names come from the same functions that render the cluster.
//
// Run reads each image where containerd on the hosts would: from the mirrors the manifest gives
// for its registry (containerRuntime.containerd.registries, or "*"), in order, then from the
// registry itself, with their TLS settings and credentials. It writes with go-containerregistry,
// which uploads only the blobs the destination lacks, and skips an image whose digest the
// destination already has under its name, so that a run that was interrupted resumes where it
// stopped. It owns no presentation: each finished image is handed to a callback.
package mirror
