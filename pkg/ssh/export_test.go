package ssh

import "testing"

// SetTTYPath points DefaultPassphrase's prompt at path for one test.
func SetTTYPath(t *testing.T, path string) {
	old := ttyPath
	ttyPath = path
	t.Cleanup(func() { ttyPath = old })
}
