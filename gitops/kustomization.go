package gitops

import (
	"github.com/wavesmith/wavesmith/internal/outtree"
)

// TreeHeader starts every kustomization.yaml of a tree and every delivery
// file; outtree.Write refuses to replace a non-empty folder whose
// kustomization.yaml lacks it.
const TreeHeader = outtree.Header

// KustomizationHead is a tree's kustomization.yaml up to its list of
// resources: TreeHeader, apiVersion, kind and "resources:". Each resource
// follows as one line (AppendResources).
const KustomizationHead = TreeHeader + "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n"

// KustomizationFile is a tree's kustomization.yaml listing resources,
// made in one allocation of its exact size.
func KustomizationFile(resources []string) []byte {
	b := make([]byte, 0, len(KustomizationHead)+ResourcesSize("", resources))
	return AppendResources(append(b, KustomizationHead...), "", resources)
}

// AppendResources appends to b the lines of resources in a
// kustomization.yaml (after KustomizationHead), each with prefix before
// it: "- <prefix><resource>\n".
func AppendResources(b []byte, prefix string, resources []string) []byte {
	for _, r := range resources {
		b = append(b, "- "...)
		b = append(b, prefix...)
		b = append(b, r...)
		b = append(b, '\n')
	}
	return b
}

// ResourcesSize is the length of what AppendResources appends.
func ResourcesSize(prefix string, resources []string) int {
	n := len(resources) * (len("- \n") + len(prefix))
	for _, r := range resources {
		n += len(r)
	}
	return n
}
