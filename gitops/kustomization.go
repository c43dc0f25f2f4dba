package gitops

import (
	"bytes"

	"github.com/wavesmith/wavesmith/internal/outtree"
)

// TreeHeader starts every kustomization.yaml of a tree and every delivery
// file; outtree.Write refuses to replace a non-empty folder whose
// kustomization.yaml lacks it.
const TreeHeader = outtree.Header

// KustomizationFile is a tree's kustomization.yaml listing resources.
func KustomizationFile(resources []string) []byte {
	var b bytes.Buffer
	b.WriteString(TreeHeader)
	b.WriteString("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n")
	for _, r := range resources {
		b.WriteString("- ")
		b.WriteString(r)
		b.WriteByte('\n')
	}
	return b.Bytes()
}
