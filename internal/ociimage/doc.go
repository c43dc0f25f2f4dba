// Package ociimage builds OCI image tarballs of wavesmith's binaries without a
// container daemon: one static binary on an empty base, run as a non-root
// user, with OCI labels. The same inputs give the same image digest.
package ociimage
