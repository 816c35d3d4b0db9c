package artifacts

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
)

// keyOf hashes its inputs into a short cache key. An input naming an existing file stands for that
// file's size and modification time: builds replace outputs rather than edit them in place, so this
// is as good as hashing the content and costs nothing on a warm run.
func keyOf(inputs ...string) (string, error) {
	h := sha256.New()
	for _, in := range inputs {
		fmt.Fprintf(h, "%s\n", in)
		if fi, err := os.Stat(in); err == nil && fi.Mode().IsRegular() {
			fmt.Fprintf(h, "%d %d\n", fi.Size(), fi.ModTime().UnixNano())
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}
