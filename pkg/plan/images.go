package plan

// ImageArchiveRecord names the entry of the applied record (the addons the probe reads back)
// that says which image archive host last imported, by content hash.
func ImageArchiveRecord(host string) string { return "image-archive." + host }

// images imports machineController.imageArchive into the containerd of every control plane
// that has not imported this archive (by content hash), and of every control plane that has not
// joined yet, which may be a reinstalled host that lost its images with its disk. The phase
// itself skips the upload where containerd already holds every image of the archive.
func (b *builder) images() {
	if b.d.ImageArchive == "" {
		return
	}
	for _, dh := range b.d.Hosts {
		if dh.Role != ControlPlane {
			continue
		}
		switch had := b.o.Cluster.Addons[ImageArchiveRecord(dh.Name)]; {
		case !b.hosts[dh.Name].Joined:
			b.add(StepImportImages, dh.Name, "a new control plane needs the images of machineController.imageArchive", true)
		case had == "":
			b.add(StepImportImages, dh.Name, "machineController.imageArchive was not imported here yet", true)
		case had != b.d.ImageArchive:
			b.add(StepImportImages, dh.Name, "machineController.imageArchive changed since it was imported here", true)
		}
	}
}
