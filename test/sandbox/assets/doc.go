// Package assets serves a sandbox's artifacts to its hosts: a read-only OCI registry over the
// image layouts that package artifacts writes, and a static file server that maps URL prefixes to
// directories (release downloads, apt repositories). It runs inside the sandbox's assets
// container (command assetd) and in tests.
package assets
