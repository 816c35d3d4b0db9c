package scripts

import "fmt"

// ImageArchiveDir is where apply uploads an image archive before importing it; the import
// removes the file, and reset removes the directory with the rest of /var/lib/slipway.
const ImageArchiveDir = "/var/lib/slipway/images"

// ImportImages returns the script that loads the image archive at archive (on the host) into
// containerd's k8s.io namespace, where the kubelet finds images, unless containerd holds every
// image of refs already. It checks that the import brought every ref, pins them against the
// kubelet's image garbage collection, and removes the archive. A second run changes nothing.
func ImportImages(archive string, refs []string) (string, error) {
	if len(refs) == 0 {
		return "", fmt.Errorf("import-images: the archive %s names no image", archive)
	}
	return render("import-images", "load an image archive into containerd", anyFamily, struct {
		Archive string
		Refs    []string
	}{archive, refs})
}
