// Package v1beta1 is the slipway manifest API (apiVersion slipway.dev/v1beta1, kind Cluster): the
// types a user writes, their defaults, their validation with field paths, and the commented
// reference manifest that `slipway config print --full` renders from these types' own doc
// comments. Comments on exported fields are user documentation: they are shown verbatim.
package v1beta1
