package ociimage

// Labels returns the OCI labels of a wavesmith image.
func Labels(title, description, version string) map[string]string {
	return map[string]string{
		"org.opencontainers.image.title":       title,
		"org.opencontainers.image.description": description,
		"org.opencontainers.image.version":     version,
		"org.opencontainers.image.source":      "https://github.com/wavesmith/wavesmith",
		"org.opencontainers.image.licenses":    "Apache-2.0",
	}
}

// Specs returns the two images wavesmith ships, from binaries built at
// wavesmith and status: the CLI (KRM function and Argo CD plugin sidecar)
// and the status controller.
func Specs(wavesmith, status, version string) []Spec {
	return []Spec{
		{Binary: wavesmith, Name: "wavesmith", Ref: "ghcr.io/wavesmith/wavesmith:" + version,
			Labels: Labels("wavesmith", "Renders Kaoto and Component specs for Argo CD and Flux; KRM function and config management plugin", version)},
		{Binary: status, Name: "wavesmith-status", Ref: "ghcr.io/wavesmith/wavesmith-status:" + version,
			Labels: Labels("wavesmith-status", "Writes the status of Kaoto and Component resources, nothing else", version)},
	}
}
