package etcd

import (
	"errors"
	"strings"
)

var errMemberNotFound = errors.New("member not found")

// isNotFound matches etcd's "member not found" error, which crosses gRPC as a string.
func isNotFound(err error) bool {
	return err != nil && strings.Contains(err.Error(), "member not found")
}
