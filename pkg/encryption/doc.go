// Package encryption owns the encryption of Secrets at rest: the EncryptionConfiguration file
// (apiserver.config.k8s.io/v1) that kube-apiserver reads, its keys, the state of a key rotation
// as that file records it, how to tell that an API server has loaded a given file (its
// /metrics), and the rewrite of every Secret under the current key. Rendering and parsing are
// pure functions; the rewrite uses client-go. The key material lives only in Config values and
// the file's bytes: nothing here puts it into a string that is printed, logged or returned in an
// error, and Summary is what may be shown instead.
package encryption
